// SPDX-License-Identifier: Apache-2.0
/* One verdict form for `execgate admit` and `execgate check`, text and JSON,
 * so that a caller parses both the same way. */
#include <sodium.h>
#include "core/capability.h"
#include "core/ids.h"
#include "execgate/cli.h"

static void json_uuid(FILE *f, const char *name, const __u8 *id)
{
	char u[EG_UUID_TEXT_LEN];

	fprintf(f, "\"%s\":\"%s\"", name, eg_cli_uuid(id, u));
}

void eg_cli_print_verdict(FILE *f, const struct eg_verdict_result *r, const struct eg_request *req,
			  bool json)
{
	const struct eg_decision *d = &r->d;
	bool malformed = d->reason == EG_REASON_MALFORMED;
	char scope[160], hex[2 * EG_ID_BYTES + 1];

	if (!json) {
		if (d->verdict == EG_ALLOW)
			fprintf(f, "allow\n");
		else if (malformed)
			fprintf(f, "deny: malformed: %s\n", eg_decode_err_name(d->decode_err));
		else
			fprintf(f, "%s: %s\n", eg_verdict_name(d->verdict),
				eg_reason_name(d->reason));
		return;
	}
	/* Every value is a name from a fixed table, a number, hex or a UUID:
	 * nothing needs escaping. */
	fprintf(f, "{\"schema_version\":1,\"verdict\":\"%s\",\"reason\":\"%s\",\"detail\":",
		eg_verdict_name(d->verdict), eg_reason_name(d->reason));
	if (malformed)
		fprintf(f, "\"%s\"", eg_decode_err_name(d->decode_err));
	else
		fprintf(f, "null");
	eg_scope_format(req->scope, scope, sizeof(scope));
	fprintf(f, ",\"request\":{\"scope\":\"%s\",\"port\":%u,\"proto\":\"%s\",\"open\":\"%s\"}",
		scope, req->port, eg_proto_name(req->proto),
		req->open_kind == EG_OPEN_ESTABLISHED ? "established" : "new");
	/* The token's contents only once its signature verified: before that
	 * they are anyone's claims. */
	fprintf(f, ",\"token\":");
	if (r->decoded) {
		sodium_bin2hex(hex, sizeof(hex), r->cap_token_id, EG_ID_BYTES);
		eg_scope_format(r->cap_scope, scope, sizeof(scope));
		fprintf(f, "{\"token_id\":\"%s\",", hex);
		json_uuid(f, "sandbox", r->cap_sandbox);
		fputc(',', f);
		json_uuid(f, "worker", r->cap_worker);
		fprintf(f,
			",\"generation\":%llu,\"activation\":%u,\"scope\":\"%s\",\"expiry\":%llu}",
			(unsigned long long)r->cap_generation, r->cap_activation, scope,
			(unsigned long long)r->cap_expiry);
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\"cache_hit\":%s,\"record\":", r->cache_hit ? "true" : "false");
	if (r->had_record)
		eg_json_record(f, &r->record);
	else
		fprintf(f, "null");
	/* Signed by the node key (refresh-route and deny, docs/capability.md):
	 * base64url, nothing to escape. */
	fprintf(f, ",\"signed_verdict\":");
	if (r->signed_verdict[0])
		fprintf(f, "\"%s\"", r->signed_verdict);
	else
		fprintf(f, "null");
	fprintf(f, ",\"subject\":");
	if (r->subject.tgid)
		eg_json_proc(f, &r->subject);
	else
		fprintf(f, "null");
	fprintf(f, ",\"grant\":");
	if (r->granted) {
		fprintf(f, "{");
		json_uuid(f, "sandbox", r->grant.key.sandbox);
		fprintf(f, ",\"generation\":%llu,\"epoch\":%llu,\"expiry_ns\":%llu,\"scope\":%u}",
			(unsigned long long)r->grant.generation, (unsigned long long)r->grant.epoch,
			(unsigned long long)r->grant.expiry_ns, r->grant.scope);
	} else {
		fprintf(f, "null");
	}
	fprintf(f, "}\n");
}
