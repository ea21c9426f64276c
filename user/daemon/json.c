// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include "execgate/text.h"
#include "daemon/json.h"

/* --- the verdict as text ------------------------------------------------------- */

/* Every string written here is ASCII from a fixed table, a UUID, hex or
 * base64url: none needs escaping. */
struct text {
	char *buf;
	size_t len, size;
	bool full;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, t->size - t->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= t->size - t->len)
		t->full = true;
	else
		t->len += (size_t)n;
}

static void put_uuid(struct text *t, const char *key, const uint8_t id[EG_ID_BYTES])
{
	char u[EG_UUID_TEXT_LEN];

	eg_uuid_to_text(id, u);
	put(t, "\"%s\":\"%s\"", key, u);
}

static void put_proc(struct text *t, const char *key, const struct eg_process *p)
{
	put(t,
	    "\"%s\":{\"tgid\":%lld,\"start_boottime_ns\":%lld,\"exe_dev\":%lld,\"exe_ino\":%lld}",
	    key, (long long)p->tgid, (long long)p->start_boottime_ns, (long long)p->exe_dev,
	    (long long)p->exe_ino);
}

/* eg_json_record's keys, in its order (without service_addrs, as in the
 * verdict). */
static void put_record(struct text *t, const struct eg_runtime_record *r)
{
	put(t, "{");
	put_uuid(t, "sandbox", r->sandbox);
	put(t, ",\"state\":\"%s\",", r->retired ? "retired" : "active");
	put_uuid(t, "worker", r->worker);
	put(t, ",");
	put_uuid(t, "pod_uid", r->pod_uid);
	put(t, ",\"substrate\":\"%s\",\"generation\":%lld,\"activation\":%lld,\"epoch\":%lld,",
	    (r->substrate <= UINT8_MAX ? eg_substrate_name((uint8_t)r->substrate) : "unknown"),
	    (long long)r->generation, (long long)r->activation, (long long)r->epoch);
	put_proc(t, "bridge", &r->bridge);
	put(t, ",");
	put_proc(t, "vmm", &r->vmm);
	put(t, ",\"ports\":[");
	for (size_t i = 0; i < r->n_ports && i < EG_RECORD_MAX_PORTS; i++)
		put(t, "%s{\"port\":%d,\"proto\":\"%s\"}", i ? "," : "", (int)r->ports[i].port,
		    eg_proto_name(r->ports[i].proto));
	put(t, "]}");
}

int egd_verdict_text(const struct eg_verdict_result *res, const struct eg_request *req, char *buf,
		     size_t size)
{
	const struct eg_decision *d = &res->d;
	bool verified = res->decoded && d->reason != EG_REASON_MALFORMED &&
			d->reason != EG_REASON_UNKNOWN_KEY && d->reason != EG_REASON_BAD_SIGNATURE;
	struct text t = {.buf = buf, .size = size};
	char scope[160];

	if (!size)
		return -ENOSPC;
	buf[0] = '\0';
	eg_scope_format(req->scope, scope, sizeof(scope));
	put(&t, "{\"schema_version\":%d,\"verdict\":\"%s\",\"reason\":\"%s\",\"detail\":",
	    EG_JSON_SCHEMA_VERSION, eg_verdict_name(d->verdict), eg_reason_name(d->reason));
	if (d->reason == EG_REASON_MALFORMED)
		put(&t, "\"%s\"", eg_decode_err_text((int)d->decode_err));
	else
		put(&t, "null");
	put(&t,
	    ",\"request\":{\"scope\":\"%s\",\"port\":%d,\"proto\":\"%s\",\"open\":\"%s\"},"
	    "\"token\":",
	    scope, (int)req->port, eg_proto_name(req->proto),
	    req->open_kind == EG_OPEN_ESTABLISHED ? "established" : "new");
	if (verified) {
		char hex[2 * EG_ID_BYTES + 1];

		for (int i = 0; i < EG_ID_BYTES; i++)
			snprintf(hex + 2 * i, 3, "%02x", res->cap_token_id[i]);
		eg_scope_format(res->cap_scope, scope, sizeof(scope));
		put(&t, "{\"token_id\":\"%s\",", hex);
		put_uuid(&t, "sandbox", res->cap_sandbox);
		put(&t, ",");
		put_uuid(&t, "worker", res->cap_worker);
		put(&t,
		    ",\"generation\":%lld,\"activation\":%lld,\"scope\":\"%s\",\"expiry\":%lld}",
		    (long long)res->cap_generation, (long long)res->cap_activation, scope,
		    (long long)res->cap_expiry);
	} else {
		put(&t, "null");
	}
	put(&t, ",\"cache_hit\":%s,\"record\":", res->cache_hit ? "true" : "false");
	if (res->had_record)
		put_record(&t, &res->record);
	else
		put(&t, "null");
	if (res->signed_verdict[0])
		put(&t, ",\"signed_verdict\":\"%.*s\",", (int)sizeof(res->signed_verdict),
		    res->signed_verdict);
	else
		put(&t, ",\"signed_verdict\":null,");
	if (res->subject.tgid != 0)
		put_proc(&t, "subject", &res->subject);
	else
		put(&t, "\"subject\":null");
	put(&t, ",\"grant\":");
	if (res->granted) {
		put(&t, "{");
		put_uuid(&t, "sandbox", res->grant.sandbox);
		put(&t, ",\"generation\":%lld,\"epoch\":%lld,\"expiry_ns\":%lld,\"scope\":%lld}}",
		    (long long)res->grant.generation, (long long)res->grant.epoch,
		    (long long)res->grant.expiry_ns, (long long)res->grant.scope);
	} else {
		put(&t, "null}");
	}
	return t.full ? -ENOSPC : (int)t.len;
}

int egd_get_u64(json_t *o, const char *name, bool required, uint64_t max, uint64_t *out,
		bool *present, char *why, size_t why_size)
{
	json_t *v = json_object_get(o, name);

	if (present)
		*present = v != NULL;
	if (!v) {
		if (!required)
			return 0;
		snprintf(why, why_size, "\"%s\": missing", name);
		return -EINVAL;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) > max) {
		snprintf(why, why_size, "\"%s\": not an integer in 0..%llu", name,
			 (unsigned long long)max);
		return -EINVAL;
	}
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

int egd_get_str(json_t *o, const char *name, bool required, const char **out, char *why,
		size_t why_size)
{
	json_t *v = json_object_get(o, name);

	*out = NULL;
	if (!v) {
		if (!required)
			return 0;
		snprintf(why, why_size, "\"%s\": missing", name);
		return -EINVAL;
	}
	if (!json_is_string(v)) {
		snprintf(why, why_size, "\"%s\": not a string", name);
		return -EINVAL;
	}
	*out = json_string_value(v);
	return 0;
}

int egd_get_uuid(json_t *o, const char *name, bool required, uint8_t out[EG_ID_BYTES], char *why,
		 size_t why_size)
{
	const char *s;
	int rc = egd_get_str(o, name, required, &s, why, why_size);

	if (rc || !s)
		return rc;
	if (eg_uuid_from_text(s, out)) {
		snprintf(why, why_size, "\"%s\": not a UUID", name);
		return -EINVAL;
	}
	return 0;
}
