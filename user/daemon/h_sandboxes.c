// SPDX-License-Identifier: Apache-2.0
/* /v1/sandboxes: runtime records, through the worker handle (which
 * serialises calls on one sandbox, so an admit never sees half an
 * install). */
#include <errno.h>
#include <string.h>
#include "execgate/text.h"
#include "fleetd/worker.h"
#include "daemon/http.h"
#include "daemon/json.h"
#include "daemon/log.h"
#include "execgate/verdict.h"

/* The {uuid} segment, parsed; from here on c->arg is its canonical
 * (lower-case) text, the form the record, the log and every answer use,
 * whatever case the client wrote. */
static bool sandbox_arg(struct egd_call *c, uint8_t id[EG_ID_BYTES], enum MHD_Result *replied)
{
	if (eg_uuid_from_text(c->arg, id) == 0) {
		eg_uuid_to_text(id, c->arg_canon);
		c->arg = c->arg_canon;
		return true;
	}
	*replied = egd_reply_error(c, MHD_HTTP_BAD_REQUEST, "bad request",
				   "%.64s: not a sandbox UUID", c->arg);
	return false;
}

enum MHD_Result egd_h_sandbox_list(struct egd_call *c)
{
	char err[EG_ERR_MAX] = "";
	json_t *doc;
	int rc;

	rc = eg_json_list_worker(c->d->worker, &doc, err, sizeof(err));
	if (rc) {
		return egd_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error", "%s",
				       err[0] ? err : strerror(rc < 0 ? -rc : ENOMEM));
	}
	return egd_reply_json(c, MHD_HTTP_OK, doc);
}

enum MHD_Result egd_h_sandbox_show(struct egd_call *c)
{
	struct eg_sandbox_info info;
	char err[EG_ERR_MAX] = "";
	enum MHD_Result replied;
	uint8_t id[EG_ID_BYTES];
	int rc;

	if (!sandbox_arg(c, id, &replied))
		return replied;
	rc = eg_worker_show(c->d->worker, id, &info, err, sizeof(err));
	if (rc == -ENOENT)
		return egd_reply_error(c, MHD_HTTP_NOT_FOUND, "not found", "sandbox %s: no record",
				       c->arg);
	if (rc)
		return egd_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error", "%s",
				       err);
	return egd_reply_json(c, MHD_HTTP_OK, eg_json_show(&info));
}

/* Counts what install or retire cut, and logs a failed revocation (the
 * same cases `execgate install/retire` report on stderr and exit 8 for),
 * and the streams audit left running, with the reason an enforce run
 * would have cut them for (docs/design.md §19). */
static void log_streams(struct egd_call *c, const char *op, const struct eg_stream_cuts *s)
{
	egd_metrics_streams(&c->d->metrics, s);
	if (s->would_cut)
		egd_log(EGD_LOG_NOTICE,
			"%s: sandbox %s: audit: would cut %u stream(s) of a replaced execution "
			"(reason deny-stream-epoch), left running",
			op, c->arg, s->would_cut);
	if (s->error)
		egd_log(EGD_LOG_ERR, "%s: sandbox %s: stream revocation failed: %s", op, c->arg,
			s->error_text);
}

/* The answer of install and retire: 200, or 500 "stream revocation failed"
 * when a stale stream may be left running. The record change stands
 * either way, so the body is the whole report in both cases, with error
 * and reason on top in the second. */
static enum MHD_Result reply_streams(struct egd_call *c, json_t *out,
				     const struct eg_stream_cuts *s)
{
	char text[EG_ERR_MAX];

	if (!s->error || !out)
		return egd_reply_json(c, MHD_HTTP_OK, out);
	egd_printable(s->error_text, text, sizeof(text));
	json_object_set_new(out, "error", json_string("stream revocation failed"));
	json_object_set_new(out, "reason", json_string(text));
	return egd_reply_json(c, MHD_HTTP_INTERNAL_SERVER_ERROR, out);
}

/* --- PUT: install ------------------------------------------------------------ */

static const char *const install_fields[] = {
    "worker",	  "generation",	   "activation",     "pod_uid",	    "substrate",
    "bridge_pid", "vmm_pid",	   "bridge_sockets", "vmm_sockets", "vsock",
    "ports",	  "service_addrs", "mode",	     NULL,
};

static int paths(json_t *o, const char *name, const char **out, size_t *n, char *why,
		 size_t why_size)
{
	json_t *arr = json_object_get(o, name), *v;
	size_t i;

	*n = 0;
	if (!arr)
		return 0;
	if (!json_is_array(arr) || json_array_size(arr) > EG_WORKER_MAX_ENDPOINTS) {
		snprintf(why, why_size, "\"%s\": not an array of at most %d paths", name,
			 EG_WORKER_MAX_ENDPOINTS);
		return -EINVAL;
	}
	json_array_foreach(arr, i, v)
	{
		if (!json_is_string(v)) {
			snprintf(why, why_size, "\"%s\"[%zu]: not a string", name, i);
			return -EINVAL;
		}
		out[(*n)++] = json_string_value(v);
	}
	return 0;
}

static int parse_spec(json_t *o, struct eg_install_spec *s, char *why, size_t why_size)
{
	const char *key, *sub;
	uint64_t n;
	json_t *v, *arr;
	size_t i;
	int rc;

	json_object_foreach(o, key, v)
	{
		size_t k = 0;

		while (install_fields[k] && strcmp(install_fields[k], key))
			k++;
		if (!install_fields[k]) {
			snprintf(why, why_size, "\"%.64s\": unknown field", key);
			return -EINVAL;
		}
	}
	if ((rc = egd_get_uuid(o, "worker", true, s->worker, why, why_size)) ||
	    (rc = egd_get_uuid(o, "pod_uid", false, s->pod_uid, why, why_size)))
		return rc;
	if ((rc = egd_get_u64(o, "generation", true, EG_GENERATION_MAX, &n, NULL, why, why_size)))
		return rc;
	s->generation = n;
	if ((rc = egd_get_u64(o, "activation", true, UINT32_MAX, &n, NULL, why, why_size)))
		return rc;
	s->activation = (uint32_t)n;
	if ((rc = egd_get_u64(o, "bridge_pid", true, 0x3fffffff, &n, NULL, why, why_size)))
		return rc;
	s->bridge_pid = (pid_t)n;
	n = 0;
	if ((rc = egd_get_u64(o, "vmm_pid", false, 0x3fffffff, &n, NULL, why, why_size)))
		return rc;
	s->vmm_pid = (pid_t)n;
	if ((rc = egd_get_str(o, "substrate", false, &sub, why, why_size)))
		return rc;
	s->substrate = 2; /* firecracker-host */
	if (sub && eg_substrate_parse(sub, &s->substrate)) {
		snprintf(why, why_size, "\"substrate\": not firecracker-k8s or firecracker-host");
		return -EINVAL;
	}
	if ((rc = paths(o, "bridge_sockets", s->bridge_sockets, &s->n_bridge_sockets, why,
			why_size)) ||
	    (rc = paths(o, "vmm_sockets", s->vmm_sockets, &s->n_vmm_sockets, why, why_size)))
		return rc;
	arr = json_object_get(o, "vsock");
	if (arr) {
		if (!json_is_array(arr) || json_array_size(arr) > EG_WORKER_MAX_ENDPOINTS) {
			snprintf(why, why_size, "\"vsock\": not an array of at most %d addresses",
				 EG_WORKER_MAX_ENDPOINTS);
			return -EINVAL;
		}
		json_array_foreach(arr, i, v)
		{
			uint64_t cid, port;

			if (!json_is_object(v) ||
			    egd_get_u64(v, "cid", true, UINT32_MAX, &cid, NULL, why, why_size) ||
			    egd_get_u64(v, "port", true, UINT32_MAX, &port, NULL, why, why_size)) {
				snprintf(why, why_size,
					 "\"vsock\"[%zu]: not {\"cid\":N,\"port\":N}", i);
				return -EINVAL;
			}
			s->vsock[i].cid = (uint32_t)cid;
			s->vsock[i].port = (uint32_t)port;
			s->n_vsock++;
		}
	}
	arr = json_object_get(o, "ports");
	if (arr) {
		if (!json_is_array(arr) || json_array_size(arr) > EG_RECORD_MAX_PORTS) {
			snprintf(why, why_size, "\"ports\": not an array of at most %d ports",
				 EG_RECORD_MAX_PORTS);
			return -EINVAL;
		}
		json_array_foreach(arr, i, v)
		{
			if (!json_is_string(v) ||
			    eg_port_parse(json_string_value(v), &s->ports[i].port,
					  &s->ports[i].proto)) {
				snprintf(why, why_size, "\"ports\"[%zu]: not \"PORT/tcp|udp\"", i);
				return -EINVAL;
			}
			s->n_ports++;
		}
	}
	arr = json_object_get(o, "service_addrs");
	if (arr) {
		if (!json_is_array(arr) || json_array_size(arr) > EG_WORKER_MAX_ENDPOINTS) {
			snprintf(why, why_size,
				 "\"service_addrs\": not an array of at most %d addresses",
				 EG_WORKER_MAX_ENDPOINTS);
			return -EINVAL;
		}
		json_array_foreach(arr, i, v)
		{
			if (!json_is_string(v) ||
			    eg_inet_parse(json_string_value(v), &s->service_addrs[i].family,
					  s->service_addrs[i].addr)) {
				snprintf(
				    why, why_size,
				    "\"service_addrs\"[%zu]: not an IPv4 or IPv6 unicast address",
				    i);
				return -EINVAL;
			}
			s->n_service_addrs++;
		}
	}
	return 0;
}

/* Each install warning in the log too (the answer carries them). */
static void log_warnings(struct egd_call *c, const struct eg_install_report *rep)
{
	for (size_t i = 0; i < rep->n_warnings; i++)
		egd_log(EGD_LOG_WARNING, "install: sandbox %s: %s: %s", c->arg,
			rep->warnings[i].code, rep->warnings[i].message);
}

enum MHD_Result egd_h_sandbox_install(struct egd_call *c)
{
	struct eg_inet_addr addrs[EG_WORKER_MAX_ENDPOINTS];
	struct eg_install_spec spec;
	struct eg_install_report rep;
	char why[256], err[EG_ERR_MAX] = "";
	enum MHD_Result replied;
	size_t naddrs = 0;
	const char *mode_text;
	json_t *o, *mode;
	int rc;

	memset(&spec, 0, sizeof(spec));
	if (!sandbox_arg(c, spec.sandbox, &replied))
		return replied;
	o = egd_body_object(c, &replied);
	if (!o)
		return replied;
	rc = parse_spec(o, &spec, why, sizeof(why));
	if (rc) {
		json_decref(o);
		return egd_reply_error(c, MHD_HTTP_BAD_REQUEST, "bad request", "%s", why);
	}
	/* "mode": the sandbox's own mode, written with the record (null or
	 * absent: keep it); checked by the handle (-EINVAL: 400) */
	mode = json_object_get(o, "mode");
	if (mode && !json_is_null(mode) && !json_is_string(mode)) {
		json_decref(o);
		return egd_reply_error(c, MHD_HTTP_BAD_REQUEST, "bad request",
				       "\"mode\": not a string (enforce, audit or inherit)");
	}
	memset(&rep, 0, sizeof(rep));
	/* The install rule is the library's, the same for `execgate install`
	 * (docs/fleet.md, "The install rule"): -EXDEV wrong worker, -ENOMSG
	 * not selected. With the fleet on, the fleet worker's install makes
	 * the check and the install one step against the watcher, which
	 * stores the selections (fleetd/worker.h); admission never waits. */
	mode_text = mode && json_is_string(mode) ? json_string_value(mode) : NULL;
	if (c->d->fleet)
		rc = eg_fleet_worker_install(c->d->fleet, &spec, mode_text, &rep, err, sizeof(err));
	else
		rc = eg_worker_install_mode(c->d->worker, &spec, mode_text, &rep, err, sizeof(err));
	json_decref(o); /* the socket paths pointed into it */
	if (rc == -EXDEV)
		return egd_reply_error(c, MHD_HTTP_CONFLICT, "wrong-worker", "%s", err);
	if (rc == -ENOMSG)
		return egd_reply_error(c, MHD_HTTP_CONFLICT, "not-selected", "%s", err);
	if (rc == -ESTALE)
		return egd_reply_error(c, MHD_HTTP_CONFLICT, "stale install", "%s", err);
	if (rc == -EEXIST)
		return egd_reply_error(c, MHD_HTTP_CONFLICT, "endpoint in use", "%s", err);
	if (rc == -ESRCH || rc == -EINVAL)
		return egd_reply_error(c, MHD_HTTP_BAD_REQUEST, "bad request", "%s", err);
	if (rc)
		return egd_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error", "%s",
				       err[0] ? err : strerror(-rc));
	log_streams(c, "install", &rep.streams);
	egd_log(EGD_LOG_INFO,
		"install: sandbox=%s outcome=%s generation=%llu epoch=%llu streams_cut=%u "
		"streams_unreachable=%u streams_would_cut=%u",
		c->arg, rep.outcome_name, (unsigned long long)rep.after.generation,
		(unsigned long long)rep.after.epoch, rep.streams.unix_cut + rep.streams.tcp_cut,
		rep.streams.unix_unreachable + rep.streams.tcp_unreachable, rep.streams.would_cut);
	rc = eg_worker_service_addrs(c->d->worker, spec.sandbox, addrs, EG_WORKER_MAX_ENDPOINTS,
				     &naddrs, err, sizeof(err));
	if (rc)
		return egd_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error",
				       "installed, but the report cannot be read: %s", err);
	log_warnings(c, &rep);
	return reply_streams(c, eg_json_install(&rep, addrs, naddrs), &rep.streams);
}

/* --- retire, forget ------------------------------------------------------------ */

enum MHD_Result egd_h_sandbox_retire(struct egd_call *c)
{
	struct eg_inet_addr addrs[EG_WORKER_MAX_ENDPOINTS];
	struct eg_stream_cuts streams;
	struct eg_runtime_record after;
	char err[EG_ERR_MAX] = "";
	enum MHD_Result replied;
	uint8_t id[EG_ID_BYTES];
	size_t naddrs = 0;
	int rc;

	if (!sandbox_arg(c, id, &replied))
		return replied;
	rc = eg_worker_retire_report(c->d->worker, id, &after, &streams, err, sizeof(err));
	if (rc == -ENOENT)
		return egd_reply_error(c, MHD_HTTP_NOT_FOUND, "not found", "sandbox %s: no record",
				       c->arg);
	if (rc)
		return egd_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error", "%s",
				       err[0] ? err : strerror(-rc));
	if (c->d->fleet)
		eg_fleet_worker_touch(c->d->fleet, id);
	log_streams(c, "retire", &streams);
	egd_log(EGD_LOG_INFO,
		"retire: sandbox=%s epoch=%llu streams_cut=%u streams_unreachable=%u "
		"streams_would_cut=%u",
		c->arg, (unsigned long long)after.epoch, streams.unix_cut + streams.tcp_cut,
		streams.unix_unreachable + streams.tcp_unreachable, streams.would_cut);
	rc = eg_worker_service_addrs(c->d->worker, id, addrs, EG_WORKER_MAX_ENDPOINTS, &naddrs, err,
				     sizeof(err));
	if (rc)
		return egd_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error",
				       "retired, but the report cannot be read: %s", err);
	return reply_streams(c, eg_json_retire(&after, addrs, naddrs, &streams), &streams);
}

enum MHD_Result egd_h_sandbox_forget(struct egd_call *c)
{
	struct eg_stream_cuts streams;
	char err[EG_ERR_MAX] = "";
	enum MHD_Result replied;
	uint8_t id[EG_ID_BYTES];
	unsigned endpoints = 0;
	int rc;

	if (!sandbox_arg(c, id, &replied))
		return replied;
	rc = eg_worker_forget_report(c->d->worker, id, &endpoints, &streams, err, sizeof(err));
	if (rc == -ENOENT)
		return egd_reply_error(c, MHD_HTTP_NOT_FOUND, "not found", "sandbox %s: no record",
				       c->arg);
	if (rc == -EBUSY)
		return egd_reply_error(c, MHD_HTTP_CONFLICT, "sandbox active",
				       "sandbox %s: still active (retire it first)", c->arg);
	if (rc)
		return egd_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error", "%s",
				       err[0] ? err : strerror(-rc));
	if (c->d->fleet)
		eg_fleet_worker_touch(c->d->fleet, id);
	log_streams(c, "forget", &streams);
	egd_log(EGD_LOG_INFO, "forget: sandbox=%s endpoints=%u streams_cut=%u streams_would_cut=%u",
		c->arg, endpoints, streams.unix_cut + streams.tcp_cut, streams.would_cut);
	return egd_reply_json(c, MHD_HTTP_OK, eg_json_forget(id, endpoints, &streams));
}

/* --- revoke: one process's grants ---------------------------------------------- */

/* POST /v1/sandboxes/{uuid}/revoke {"pid":N}: `execgate revoke`. */
enum MHD_Result egd_h_sandbox_revoke(struct egd_call *c)
{
	char why[256], err[EG_ERR_MAX] = "";
	enum MHD_Result replied;
	uint8_t id[EG_ID_BYTES];
	unsigned removed = 0;
	const char *key;
	uint64_t pid;
	json_t *o, *v;
	int rc;

	if (!sandbox_arg(c, id, &replied))
		return replied;
	o = egd_body_object(c, &replied);
	if (!o)
		return replied;
	json_object_foreach(o, key, v) if (strcmp(key, "pid"))
	{
		snprintf(why, sizeof(why), "\"%.64s\": unknown field", key);
		json_decref(o);
		return egd_reply_error(c, MHD_HTTP_BAD_REQUEST, "bad request", "%s", why);
	}
	rc = egd_get_u64(o, "pid", true, 0x3fffffff, &pid, NULL, why, sizeof(why));
	json_decref(o);
	if (rc || !pid)
		return egd_reply_error(c, MHD_HTTP_BAD_REQUEST, "bad request", "%s",
				       rc ? why : "\"pid\": not a process id");
	rc = eg_worker_revoke(c->d->worker, (pid_t)pid, id, &removed, err, sizeof(err));
	if (rc == -ENOENT)
		return egd_reply_error(c, MHD_HTTP_NOT_FOUND, "not found", "%s",
				       err[0] ? err : "no grant");
	if (rc)
		return egd_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error", "%s",
				       err[0] ? err : strerror(-rc));
	egd_log(EGD_LOG_INFO, "revoke: sandbox=%s pid=%llu grants=%u", c->arg,
		(unsigned long long)pid, removed);
	return egd_reply_json(c, MHD_HTTP_OK,
			      json_pack("{s:i,s:s,s:I,s:i}", "schema_version",
					EG_JSON_SCHEMA_VERSION, "sandbox", c->arg, "pid",
					(json_int_t)pid, "grants_removed", (int)removed));
}
