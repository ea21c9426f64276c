// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <stdio.h>
#include "core/ids.h"
#include "daemon/json.h"

json_t *egd_json_uuid(const __u8 id[EG_ID_BYTES])
{
	char u[EG_UUID_TEXT_LEN];

	eg_uuid_format(id, u);
	return json_string(u);
}

json_t *egd_json_proc(const struct eg_proc_id *p)
{
	return json_pack("{s:I,s:I,s:I,s:I}", "pid", (json_int_t)p->tgid, "start_ticks",
			 (json_int_t)p->start_ticks, "exe_dev", (json_int_t)p->exe_dev, "exe_ino",
			 (json_int_t)p->exe_ino);
}

json_t *egd_json_record(const struct eg_exec_record *r)
{
	json_t *o, *ports = json_array();

	for (__u32 i = 0; i < r->nports && i < EG_RECORD_PORTS; i++)
		json_array_append_new(ports, json_pack("{s:i,s:s}", "port", (int)r->ports[i].port,
						       "proto", eg_proto_name(r->ports[i].proto)));
	o = json_pack(
	    "{s:o,s:s,s:o,s:s,s:o,s:I,s:I,s:I,s:o,s:o,s:o}", "sandbox", egd_json_uuid(r->sandbox),
	    "state", r->state == EG_RECORD_RETIRED ? "retired" : "active", "worker",
	    egd_json_uuid(r->worker), "substrate", eg_substrate_name((uint8_t)r->substrate),
	    "pod_uid", egd_json_uuid(r->pod_uid), "generation", (json_int_t)r->generation,
	    "activation", (json_int_t)r->activation, "epoch", (json_int_t)r->epoch, "bridge",
	    egd_json_proc(&r->bridge), "vmm", egd_json_proc(&r->vmm), "ports", ports);
	return o;
}

json_t *egd_json_verdict(const struct eg_verdict_result *res, pid_t pid)
{
	const struct eg_decision *d = &res->d;
	json_t *o;

	o = json_pack("{s:i,s:s,s:s,s:b}", "schema_version", 1, "verdict",
		      eg_verdict_name(d->verdict), "reason", eg_reason_name(d->reason), "cache_hit",
		      res->cache_hit);
	if (!o)
		return NULL;
	if (d->reason == EG_REASON_MALFORMED)
		json_object_set_new(o, "decode_error",
				    json_string(eg_decode_err_text(d->decode_err)));
	if (pid > 0)
		json_object_set_new(o, "pid", json_integer(pid));
	if (res->decoded)
		json_object_set_new(o, "capability",
				    json_pack("{s:o,s:o,s:I,s:I,s:I}", "sandbox",
					      egd_json_uuid(res->cap_sandbox), "worker",
					      egd_json_uuid(res->cap_worker), "generation",
					      (json_int_t)res->cap_generation, "activation",
					      (json_int_t)res->cap_activation, "expiry",
					      (json_int_t)res->cap_expiry));
	if (res->had_record)
		json_object_set_new(o, "record", egd_json_record(&res->record));
	if (res->granted)
		json_object_set_new(o, "grant",
				    json_pack("{s:o,s:o,s:I,s:I,s:I,s:I}", "sandbox",
					      egd_json_uuid(res->grant.key.sandbox), "proc",
					      egd_json_proc(&res->grant.key.proc), "generation",
					      (json_int_t)res->grant.generation, "epoch",
					      (json_int_t)res->grant.epoch, "expiry_ns",
					      (json_int_t)res->grant.expiry_ns, "scope",
					      (json_int_t)res->grant.scope));
	return o;
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

int egd_get_uuid(json_t *o, const char *name, bool required, __u8 out[EG_ID_BYTES], char *why,
		 size_t why_size)
{
	const char *s;
	int rc = egd_get_str(o, name, required, &s, why, why_size);

	if (rc || !s)
		return rc;
	if (eg_uuid_parse(s, out)) {
		snprintf(why, why_size, "\"%s\": not a UUID", name);
		return -EINVAL;
	}
	return 0;
}
