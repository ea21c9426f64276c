// SPDX-License-Identifier: Apache-2.0
/* The verdict of admit and check, and a signed verdict decoded
 * (lib/json.h). */
#include <time.h>
#include "core/capability.h"
#include "core/ids.h"
#include "lib/json.h"

static json_t *or_null(json_t *v, bool present)
{
	if (present)
		return v;
	json_decref(v);
	return json_null();
}

json_t *eg_json_verdict(const struct eg_verdict_result *res, const struct eg_request *req)
{
	const struct eg_decision *d = &res->d;
	/* The token's contents only once its signature verified: before
	 * that they are anyone's claims. */
	bool verified = res->decoded && d->reason != EG_REASON_MALFORMED &&
			d->reason != EG_REASON_UNKNOWN_KEY && d->reason != EG_REASON_BAD_SIGNATURE;
	char scope[160], cap_scope[160];
	json_t *token = NULL, *grant = NULL;

	eg_scope_format(req->scope, scope, sizeof(scope));
	if (verified) {
		eg_scope_format(res->cap_scope, cap_scope, sizeof(cap_scope));
		token = json_pack(
		    "{s:o,s:o,s:o,s:I,s:I,s:s,s:I}", "token_id",
		    eg_json_token_id(res->cap_token_id), "sandbox", eg_json_uuid(res->cap_sandbox),
		    "worker", eg_json_uuid(res->cap_worker), "generation",
		    (json_int_t)res->cap_generation, "activation", (json_int_t)res->cap_activation,
		    "scope", cap_scope, "expiry", (json_int_t)res->cap_expiry);
	}
	if (res->granted)
		grant = json_pack(
		    "{s:o,s:I,s:I,s:I,s:I}", "sandbox", eg_json_uuid(res->grant.sandbox),
		    "generation", (json_int_t)res->grant.generation, "epoch",
		    (json_int_t)res->grant.epoch, "expiry_ns", (json_int_t)res->grant.expiry_ns,
		    "scope", (json_int_t)res->grant.scope);
	return json_pack(
	    "{s:i,s:s,s:s,s:o,s:{s:s,s:i,s:s,s:s},s:o,s:b,s:o,s:o,s:o,s:o}", "schema_version",
	    EG_JSON_SCHEMA_VERSION, "verdict", eg_verdict_name(d->verdict), "reason",
	    eg_reason_name(d->reason), "detail",
	    d->reason == EG_REASON_MALFORMED ? json_string(eg_decode_err_text(d->decode_err))
					     : json_null(),
	    "request", "scope", scope, "port", (int)req->port, "proto", eg_proto_name(req->proto),
	    "open", req->open_kind == EG_OPEN_ESTABLISHED ? "established" : "new", "token",
	    token ? token : json_null(), "cache_hit", res->cache_hit, "record",
	    or_null(eg_json_record(&res->record, NULL, 0), res->had_record), "signed_verdict",
	    res->signed_verdict[0] ? json_string(res->signed_verdict) : json_null(), "subject",
	    or_null(eg_json_proc(&res->subject), res->subject.tgid != 0), "grant",
	    grant ? grant : json_null());
}

json_t *eg_json_claim(const struct eg_verdict_claim *v)
{
	time_t t = (time_t)v->issued_at;
	char when[64];
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_pack("{s:i,s:b,s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:I,s:s}", "schema_version",
			 EG_JSON_SCHEMA_VERSION, "valid", 1, "verdict", eg_verdict_name(v->verdict),
			 "reason", eg_reason_name(v->reason), "node_key_id", v->node_key_id,
			 "token_id", eg_json_token_id(v->token_id), "sandbox",
			 eg_json_uuid(v->sandbox), "worker", eg_json_uuid(v->worker), "record",
			 v->has_record
			     ? json_pack("{s:I,s:I}", "generation", (json_int_t)v->generation,
					 "activation", (json_int_t)v->activation)
			     : json_null(),
			 "issued_at", (json_int_t)v->issued_at, "issued_at_time", when);
}
