// SPDX-License-Identifier: Apache-2.0
/* The record and what carries it: list, show, install, retire, forget
 * (lib/json.h). */
#include <errno.h>
#include "core/ids.h"
#include "lib/json.h"
#include "loader/endpoints/inet.h"

json_t *eg_json_record(const struct eg_runtime_record *r, const struct eg_inet_addr *addrs,
		       size_t naddrs)
{
	json_t *ports = json_array(), *o;

	for (size_t i = 0; i < r->n_ports && i < EG_RECORD_MAX_PORTS; i++)
		json_array_append_new(ports, json_pack("{s:i,s:s}", "port", (int)r->ports[i].port,
						       "proto", eg_proto_name(r->ports[i].proto)));
	o = json_pack(
	    "{s:o,s:s,s:o,s:o,s:s,s:I,s:I,s:I,s:o,s:o,s:o}", "sandbox", eg_json_uuid(r->sandbox),
	    "state", r->retired ? "retired" : "active", "worker", eg_json_uuid(r->worker),
	    "pod_uid", eg_json_uuid(r->pod_uid), "substrate",
	    (r->substrate <= UINT8_MAX ? eg_substrate_name((uint8_t)r->substrate) : "unknown"),
	    "generation", (json_int_t)r->generation, "activation", (json_int_t)r->activation,
	    "epoch", (json_int_t)r->epoch, "bridge", eg_json_proc(&r->bridge), "vmm",
	    eg_json_proc(&r->vmm), "ports", ports);
	if (o && addrs) {
		json_t *arr = json_array();
		char text[EG_INET_TEXT_MAX];

		for (size_t i = 0; i < naddrs; i++)
			json_array_append_new(arr,
					      json_string(eg_inet_addr_format(&addrs[i], text)));
		json_object_set_new(o, "service_addrs", arr);
	}
	return o;
}

json_t *eg_json_list(json_t **records)
{
	json_t *o = eg_json_doc();

	*records = json_array();
	if (!o || !*records || json_object_set_new(o, "records", *records)) {
		json_decref(o);
		*records = NULL;
		return NULL;
	}
	return o;
}

struct list_ctx {
	struct eg_worker *w;
	eg_record_addrs_fn fn;
	void *ctx;
	char *err;
	size_t err_size;
};

static int with_addrs(const struct eg_runtime_record *rec, void *ctx)
{
	struct eg_inet_addr addrs[EG_WORKER_MAX_ENDPOINTS];
	struct list_ctx *l = ctx;
	size_t n = 0;
	int rc;

	rc = eg_worker_service_addrs(l->w, rec->sandbox, addrs, EG_WORKER_MAX_ENDPOINTS, &n, l->err,
				     l->err_size);
	return rc ? rc : l->fn(rec, addrs, n, l->ctx);
}

int eg_list_with_addrs(struct eg_worker *w, eg_record_addrs_fn fn, void *ctx, char *err,
		       size_t err_size)
{
	struct list_ctx l = {.w = w, .fn = fn, .ctx = ctx, .err = err, .err_size = err_size};

	return eg_worker_list(w, with_addrs, &l, err, err_size);
}

static int add_record(const struct eg_runtime_record *rec, const struct eg_inet_addr *addrs,
		      size_t n, void *ctx)
{
	return json_array_append_new(ctx, eg_json_record(rec, addrs, n)) ? -ENOMEM : 0;
}

int eg_json_list_worker(struct eg_worker *w, json_t **doc, char *err, size_t err_size)
{
	json_t *records;
	int rc;

	*doc = eg_json_list(&records);
	rc = *doc ? eg_list_with_addrs(w, add_record, records, err, err_size) : -ENOMEM;
	if (rc) {
		json_decref(*doc);
		*doc = NULL;
	}
	return rc;
}

json_t *eg_json_show(const struct eg_sandbox_info *info)
{
	/* cut_pending: a writer killed before its stream cut left it
	 * (user/loader/revokers/cut_intent.h); it stays set while the cut fails. */
	return json_pack("{s:i,s:o,s:b,s:I,s:I}", "schema_version", EG_JSON_SCHEMA_VERSION,
			 "record",
			 eg_json_record(&info->record, info->service_addrs, info->n_service_addrs),
			 "cut_pending", (int)info->record.cut_pending, "endpoints",
			 (json_int_t)info->n_endpoints, "grants", (json_int_t)info->n_grants);
}

json_t *eg_json_streams(const struct eg_stream_cuts *s)
{
	/* would_cut: audit left them running (docs/design.md §19) */
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:o,s:o,s:o}", "unix_cut", (json_int_t)s->unix_cut,
			 "unix_unreachable", (json_int_t)s->unix_unreachable, "tcp_cut",
			 (json_int_t)s->tcp_cut, "tcp_unreachable", (json_int_t)s->tcp_unreachable,
			 "would_cut", (json_int_t)s->would_cut, "unix_method",
			 s->unix_method ? json_string(s->unix_method) : json_null(), "tcp_method",
			 s->tcp_method ? json_string(s->tcp_method) : json_null(), "error",
			 s->error ? json_string(s->error_text) : json_null());
}

json_t *eg_json_install(const struct eg_install_report *rep, const struct eg_inet_addr *addrs,
			size_t naddrs)
{
	/* before: the record install replaced, without service_addrs (the
	 * report does not keep the addresses it had). warnings: endpoints no
	 * loaded tier enforces (the install stands). */
	json_t *o = json_pack(
	    "{s:i,s:o,s:s,s:o,s:o,s:I,s:I,s:I,s:I,s:o}", "schema_version", EG_JSON_SCHEMA_VERSION,
	    "sandbox", eg_json_uuid(rep->after.sandbox), "outcome", rep->outcome_name, "record",
	    eg_json_record(&rep->after, addrs, naddrs), "before",
	    rep->had_before ? eg_json_record(&rep->before, NULL, 0) : json_null(),
	    "endpoints_added", (json_int_t)rep->endpoints_added, "endpoints_claimed",
	    (json_int_t)rep->endpoints_claimed, "inodes", (json_int_t)rep->inodes, "grants_dropped",
	    (json_int_t)rep->grants_dropped, "streams", eg_json_streams(&rep->streams));
	json_t *warnings = json_array();

	for (size_t i = 0; i < rep->n_warnings; i++)
		json_array_append_new(warnings,
				      json_pack("{s:s,s:s}", "code", rep->warnings[i].code,
						"message", rep->warnings[i].message));
	if (o)
		json_object_set_new(o, "warnings", warnings);
	else
		json_decref(warnings);
	return o;
}

json_t *eg_json_retire(const struct eg_runtime_record *after, const struct eg_inet_addr *addrs,
		       size_t naddrs, const struct eg_stream_cuts *streams)
{
	return json_pack("{s:i,s:o,s:o,s:o}", "schema_version", EG_JSON_SCHEMA_VERSION, "sandbox",
			 eg_json_uuid(after->sandbox), "record",
			 eg_json_record(after, addrs, naddrs), "streams", eg_json_streams(streams));
}

json_t *eg_json_forget(const uint8_t sandbox[EG_ID_BYTES], unsigned endpoints_removed,
		       const struct eg_stream_cuts *streams)
{
	/* streams: a cut a killed writer left pending, finished first */
	return json_pack("{s:i,s:o,s:I,s:o}", "schema_version", EG_JSON_SCHEMA_VERSION, "sandbox",
			 eg_json_uuid(sandbox), "endpoints_removed", (json_int_t)endpoints_removed,
			 "streams", eg_json_streams(streams));
}
