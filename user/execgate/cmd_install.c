// SPDX-License-Identifier: Apache-2.0
/* execgate install / retire / forget / list / show: the runtime record of a
 * sandbox's execution. */
#include <errno.h>
#include <string.h>
#include "core/identity_opts.h"
#include "core/ids.h"
#include "core/vsock_cid.h"
#include "execgate/commands.h"
#include "lib/json.h"
#include "loader/inet.h"

static const struct eg_opt install_opts[] = {
    EG_OPT("sandbox", "UUID", "the sandbox"),
    EG_OPT("worker", "UUID", "this worker's id (tokens for another worker get refresh-route)"),
    EG_OPT("generation", "N", "the execution generation now running here (at most 2^53-1)"),
    EG_OPT("activation", "N", "the activation attempt of that generation"),
    EG_OPT("pod-uid", "UUID", "the pod UID (substrate firecracker-k8s)"),
    EG_OPT("substrate", "NAME", "firecracker-host (default) or firecracker-k8s"),
    EG_OPT_MANY("service-port", "PORT/tcp|udp", "a ServicePort the execution serves (TCP tier)"),
    EG_OPT_MANY("service-addr", "IP",
		"a guest address (IPv4 or IPv6) of the ServicePorts: connects to it need a "
		"ServicePort grant"),
    EG_OPT("bridge-pid", "PID", "the bridge process of this execution (required)"),
    EG_OPT("vmm-pid", "PID", "the VMM (Firecracker) process, for listener identity"),
    EG_OPT_MANY("bridge-socket", "PATH",
		"a Unix socket the bridge listens on (grant holders only); no symbolic link in "
		"the path"),
    EG_OPT_MANY("vmm-socket", "PATH",
		"a Unix socket of the VMM (the bridge only); no symbolic link in the path"),
    EG_OPT_MANY("vsock", "CID:PORT", "an AF_VSOCK address of the VMM (the bridge only; LSM tier)"),
    EG_OPT("json", NULL, "print the outcome as one JSON object (schema_version 2)"),
    EG_OPT_END,
};

static int parse_vsock(const char *s, struct eg_vsock_key *k)
{
	char buf[64], *colon;
	uint64_t cid, port;

	if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
		return -EINVAL;
	colon = strchr(buf, ':');
	if (!colon)
		return -EINVAL;
	*colon = '\0';
	if (eg_parse_u64(buf, 0xffffffffULL, &cid) || eg_parse_u64(colon + 1, 0xffffffffULL, &port))
		return -EINVAL;
	if (eg_vsock_cid_never_guest((uint32_t)cid))
		return -EINVAL;
	k->cid = (__u32)cid;
	k->port = (__u32)port;
	return 0;
}

static int add_socket(struct eg_cli_parse *p, const char *name, const char *val,
		      struct eg_install_spec *s)
{
	bool b = name[0] == 'b';
	size_t *n = b ? &s->n_bridge_sockets : &s->n_vmm_sockets;
	const char *why;

	if (eg_cli_check_path(val, &why))
		return eg_cli_usage(p, "--%s: %s", name, why);
	if (*n == EG_WORKER_MAX_ENDPOINTS)
		return eg_cli_usage(p, "at most %d --%s", EG_WORKER_MAX_ENDPOINTS, name);
	(b ? s->bridge_sockets : s->vmm_sockets)[(*n)++] = val;
	return 0;
}

static void spec_identity(struct eg_install_spec *s, const struct eg_record *r)
{
	memcpy(s->sandbox, r->sandbox, EG_ID_BYTES);
	memcpy(s->worker, r->worker, EG_ID_BYTES);
	memcpy(s->pod_uid, r->pod_uid, EG_ID_BYTES);
	s->substrate = r->substrate;
	s->generation = r->generation;
	s->activation = r->activation;
	for (size_t i = 0; i < r->nports && i < EG_RECORD_MAX_PORTS; i++) {
		s->ports[i].port = r->ports[i].port;
		s->ports[i].proto = r->ports[i].proto;
	}
	s->n_ports = r->nports;
}

/* The streams install or retire cut: a text clause, and a warning on stderr
 * when some could not be cut (the JSON member is eg_json_streams). */
static void text_streams(const struct eg_stream_cuts *s)
{
	if (!s->unix_method && !s->tcp_method)
		return; /* the epoch stayed: nothing to cut */
	printf("; streams: %u cut, %u unreachable", s->unix_cut + s->tcp_cut,
	       s->unix_unreachable + s->tcp_unreachable);
}

/* A failed revocation (a step refused, a stale stream left running): the
 * record change stands, the report is printed, and the exit is 8. */
static void warn_streams(const struct eg_stream_cuts *s)
{
	if (s->error)
		eg_cli_err("stream revocation failed: %s", s->error_text);
}

static int streams_exit(const struct eg_stream_cuts *s)
{
	return s->error ? EG_EXIT_REVOCATION : EG_EXIT_OK;
}

static int run_install(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	static struct eg_install_spec spec;
	struct eg_inet_key addrs[EG_WORKER_MAX_ENDPOINTS];
	struct eg_install_report rep;
	struct eg_identity_opts id;
	size_t naddrs = 0;
	struct eg_cli_parse p;
	struct eg_worker *w;
	char err[EG_ERR_MAX], u[EG_UUID_TEXT_LEN];
	const char *name, *val;
	bool json = false;
	int c, rc;

	memset(&spec, 0, sizeof(spec));
	eg_identity_opts_init(&id);
	eg_cli_parse_init(&p, cmd, argc, argv);
	while ((c = eg_cli_next(&p, &name, &val)) == 1) {
		rc = eg_identity_opt(&id, name, val, err, sizeof(err));
		if (rc < 0)
			return eg_cli_usage(&p, "%s", err);
		if (rc == 1)
			continue;
		if (!strcmp(name, "json")) {
			json = true;
		} else if (!strcmp(name, "bridge-pid") || !strcmp(name, "vmm-pid")) {
			int pid;

			if (eg_parse_pid(val, &pid))
				return eg_cli_usage(&p, "--%s %s: not a process id", name, val);
			*(name[0] == 'b' ? &spec.bridge_pid : &spec.vmm_pid) = pid;
		} else if (!strcmp(name, "bridge-socket") || !strcmp(name, "vmm-socket")) {
			rc = add_socket(&p, name, val, &spec);
			if (rc)
				return rc;
		} else if (!strcmp(name, "vsock")) {
			if (spec.n_vsock == EG_WORKER_MAX_ENDPOINTS ||
			    parse_vsock(val, &spec.vsock[spec.n_vsock]))
				return eg_cli_usage(
				    &p, "--vsock %s: expected CID:PORT with CID 1 or > 2", val);
			spec.n_vsock++;
		} else if (!strcmp(name, "service-addr")) {
			if (spec.n_service_addrs == EG_WORKER_MAX_ENDPOINTS ||
			    eg_inet_key_parse(val, &spec.service_addrs[spec.n_service_addrs]))
				return eg_cli_usage(&p,
						    "--service-addr %s: expected one IPv4 or IPv6 "
						    "unicast address (at most %d)",
						    val, EG_WORKER_MAX_ENDPOINTS);
			spec.n_service_addrs++;
		}
	}
	if (c < 0)
		return p.exit;
	if (p.npos)
		return eg_cli_usage(&p, "%s: unexpected argument", p.pos[0]);
	if (eg_identity_opts_finish(&id, EG_IDF_REQUIRED, err, sizeof(err)))
		return eg_cli_usage(&p, "%s", err);
	if (!spec.bridge_pid)
		return eg_cli_usage(&p, "--bridge-pid is required");
	spec_identity(&spec, &id.rec);
	if (eg_cli_worker_open_for(&p, &w, spec.sandbox))
		return EG_EXIT_ERROR;
	rc = eg_worker_install(w, &spec, &rep, err, sizeof(err));
	if (rc)
		eg_cli_finish_cuts(w, NULL);
	if (!rc && eg_worker_service_addrs(w, spec.sandbox, addrs, EG_WORKER_MAX_ENDPOINTS, &naddrs,
					   err, sizeof(err))) {
		eg_worker_close(w);
		eg_cli_err("installed, but the report cannot be read: %s", err);
		return EG_EXIT_ERROR;
	}
	eg_worker_close(w);
	if (rc) {
		eg_cli_err("%s", err);
		return rc == -ESTALE ? EG_EXIT_STALE : EG_EXIT_ERROR;
	}
	warn_streams(&rep.streams);
	for (size_t i = 0; i < rep.n_warnings; i++)
		eg_cli_err("warning: %s: %s", rep.warnings[i].code, rep.warnings[i].message);
	if (json)
		return eg_json_print(stdout, eg_json_install(&rep, addrs, naddrs))
			   ? EG_EXIT_ERROR
			   : streams_exit(&rep.streams);
	printf("sandbox %s: %s generation %llu attempt %u, epoch %llu",
	       eg_cli_uuid(rep.after.sandbox, u), rep.outcome_name,
	       (unsigned long long)rep.after.generation, rep.after.activation,
	       (unsigned long long)rep.after.epoch);
	if (rep.had_before && rep.before.epoch != rep.after.epoch)
		printf(" (was %llu)", (unsigned long long)rep.before.epoch);
	printf("; endpoints: %u added, %u claimed, %u inodes; bridge ", rep.endpoints_added,
	       rep.endpoints_claimed, rep.inodes);
	eg_cli_print_proc(stdout, &rep.after.bridge);
	text_streams(&rep.streams);
	printf("\n");
	return streams_exit(&rep.streams);
}

const struct eg_cli_cmd eg_cmd_install = {
    .name = "install",
    .args = "--sandbox UUID --worker UUID --generation N --activation N --bridge-pid PID\n"
	    "       [--vmm-pid PID] [--bridge-socket PATH]... [--vmm-socket PATH]...\n"
	    "       [--vsock CID:PORT]... [--pod-uid UUID] [--substrate NAME]\n"
	    "       [--service-addr IP]... [--service-port PORT/tcp|udp]... [--json]",
    .about = "Installs the runtime record of the execution now running the sandbox here,\n"
	     "and registers its endpoints. A newer generation replaces the record and kills\n"
	     "every grant of the older one; an older one is refused (exit 6). Streams of\n"
	     "an older epoch are cut before it returns; when that fails (a step refused,\n"
	     "a stream left), the record change stands and the exit is 8.",
    .opts = install_opts,
    .dirs = true,
    .run = run_install,
};

static const struct eg_opt sandbox_opts[] = {
    EG_OPT("sandbox", "UUID", "the sandbox"),
    EG_OPT("json", NULL, "print one JSON object (schema_version 2)"),
    EG_OPT_END,
};

/* --sandbox UUID [--json]: the one shape of retire, forget and show.
 * Parses and opens the worker: -1 with *w open, else the exit code. */
/* writes: the command is retire or forget, which finishes and reports
 * the sandbox's own pending stream cut (eg_cli_worker_open_for). */
static int open_sandbox(struct eg_cli_parse *p, const struct eg_cli_cmd *cmd, int argc, char **argv,
			__u8 sandbox[EG_ID_BYTES], bool *json, struct eg_worker **w, bool writes)
{
	const char *name, *val;
	bool have = false;
	int c;

	eg_cli_parse_init(p, cmd, argc, argv);
	while ((c = eg_cli_next(p, &name, &val)) == 1) {
		if (!strcmp(name, "json"))
			*json = true;
		else if (eg_uuid_from_text(val, sandbox))
			return eg_cli_usage(p, "--sandbox %s: not a UUID", val);
		else
			have = true;
	}
	if (c < 0)
		return p->exit;
	if (p->npos)
		return eg_cli_usage(p, "%s: unexpected argument", p->pos[0]);
	if (!have)
		return eg_cli_usage(p, "--sandbox is required");
	return eg_cli_worker_open_for(p, w, writes ? sandbox : NULL) ? EG_EXIT_ERROR : -1;
}

static int run_retire(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	struct eg_inet_key addrs[EG_WORKER_MAX_ENDPOINTS];
	struct eg_stream_cuts streams;
	size_t naddrs = 0;
	struct eg_exec_record after;
	struct eg_cli_parse p;
	struct eg_worker *w;
	__u8 sandbox[EG_ID_BYTES];
	char err[EG_ERR_MAX], u[EG_UUID_TEXT_LEN];
	bool json = false;
	int rc;

	rc = open_sandbox(&p, cmd, argc, argv, sandbox, &json, &w, true);
	if (rc >= 0)
		return rc;
	rc = eg_worker_retire_report(w, sandbox, &after, &streams, err, sizeof(err));
	if (rc)
		eg_cli_finish_cuts(w, NULL);
	if (!rc && eg_worker_service_addrs(w, sandbox, addrs, EG_WORKER_MAX_ENDPOINTS, &naddrs, err,
					   sizeof(err))) {
		eg_worker_close(w);
		eg_cli_err("retired, but the report cannot be read: %s", err);
		return EG_EXIT_ERROR;
	}
	eg_worker_close(w);
	if (rc) {
		eg_cli_err("%s", err);
		return eg_cli_exit_for(rc);
	}
	warn_streams(&streams);
	if (json)
		return eg_json_print(stdout, eg_json_retire(&after, addrs, naddrs, &streams))
			   ? EG_EXIT_ERROR
			   : streams_exit(&streams);
	printf("sandbox %s: retired generation %llu attempt %u, epoch %llu; its endpoints deny "
	       "every connect",
	       eg_cli_uuid(sandbox, u), (unsigned long long)after.generation, after.activation,
	       (unsigned long long)after.epoch);
	text_streams(&streams);
	printf("\n");
	return streams_exit(&streams);
}

const struct eg_cli_cmd eg_cmd_retire = {
    .name = "retire",
    .args = "--sandbox UUID [--json]",
    .about = "Marks the sandbox's record retired and moves its epoch: every endpoint of it\n"
	     "denies every connect, every grant and stream of it is dead. The record stays\n"
	     "(so a late install of an older generation is still refused) until forget.\n"
	     "Exit 8 when its streams could not all be cut (the record is retired).",
    .opts = sandbox_opts,
    .dirs = true,
    .run = run_retire,
};

static int run_forget(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	struct eg_stream_cuts streams;
	struct eg_cli_parse p;
	struct eg_worker *w;
	__u8 sandbox[EG_ID_BYTES];
	char err[EG_ERR_MAX], u[EG_UUID_TEXT_LEN];
	unsigned endpoints = 0;
	bool json = false;
	int rc;

	rc = open_sandbox(&p, cmd, argc, argv, sandbox, &json, &w, true);
	if (rc >= 0)
		return rc;
	rc = eg_worker_forget_report(w, sandbox, &endpoints, &streams, err, sizeof(err));
	if (rc == -EBUSY) /* active: a killed install's cut may be pending */
		eg_cli_finish_cuts(w, NULL);
	eg_worker_close(w);
	if (rc == -EBUSY) {
		eg_cli_err("sandbox %s: still active: retire it first (execgate retire --sandbox "
			   "%s)",
			   eg_cli_uuid(sandbox, u), u);
		return EG_EXIT_ERROR;
	}
	if (rc) {
		eg_cli_err("%s", err);
		return eg_cli_exit_for(rc);
	}
	warn_streams(&streams);
	if (json)
		return eg_json_print(stdout, eg_json_forget(sandbox, endpoints, &streams))
			   ? EG_EXIT_ERROR
			   : EG_EXIT_OK;
	printf("sandbox %s: forgotten, %u endpoint%s removed", eg_cli_uuid(sandbox, u), endpoints,
	       endpoints == 1 ? "" : "s");
	text_streams(&streams);
	printf("\n");
	return EG_EXIT_OK;
}

const struct eg_cli_cmd eg_cmd_forget = {
    .name = "forget",
    .args = "--sandbox UUID [--json]",
    .about = "Deletes a retired sandbox's record, its endpoints and its grants. An active\n"
	     "record is refused: retire it first. Exit 7 when there is no record.",
    .opts = sandbox_opts,
    .dirs = true,
    .run = run_forget,
};

static void record_text(const struct eg_exec_record *r, const struct eg_inet_key *addrs,
			size_t naddrs)
{
	char u[EG_UUID_TEXT_LEN], wk[EG_UUID_TEXT_LEN];

	printf("%s %-7s generation %llu attempt %u epoch %llu worker %s substrate %s bridge ",
	       eg_cli_uuid(r->sandbox, u), r->state == EG_RECORD_RETIRED ? "retired" : "active",
	       (unsigned long long)r->generation, r->activation, (unsigned long long)r->epoch,
	       eg_cli_uuid(r->worker, wk), eg_substrate_name((uint8_t)r->substrate));
	eg_cli_print_proc(stdout, &r->bridge);
	printf(" ");
	eg_cli_print_service_profile(stdout, r, addrs, naddrs);
}

static int run_show(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	static struct eg_sandbox_info info;
	struct eg_cli_parse p;
	struct eg_worker *w;
	__u8 sandbox[EG_ID_BYTES];
	char err[EG_ERR_MAX];
	bool json = false;
	int rc;

	rc = open_sandbox(&p, cmd, argc, argv, sandbox, &json, &w, false);
	if (rc >= 0)
		return rc;
	rc = eg_worker_show(w, sandbox, &info, err, sizeof(err));
	eg_worker_close(w);
	if (rc) {
		eg_cli_err("%s", err);
		return eg_cli_exit_for(rc);
	}
	if (json)
		return eg_json_print(stdout, eg_json_show(&info)) ? EG_EXIT_ERROR : EG_EXIT_OK;
	record_text(&info.record, info.service_addrs, info.n_service_addrs);
	printf("\n  vmm ");
	eg_cli_print_proc(stdout, &info.record.vmm);
	printf("\n  %u endpoint%s, %u grant%s\n", info.n_endpoints,
	       info.n_endpoints == 1 ? "" : "s", info.n_grants, info.n_grants == 1 ? "" : "s");
	/* Opening the worker tried to finish it (eg_cli_worker_open_for):
	 * still set means that cut failed, and stderr said why. */
	if (info.record.cut_pending)
		printf("  stream cut pending: streams below epoch %llu are not all cut yet\n",
		       (unsigned long long)info.record.epoch);
	return EG_EXIT_OK;
}

const struct eg_cli_cmd eg_cmd_show = {
    .name = "show",
    .args = "--sandbox UUID [--json]",
    .about = "One sandbox's record with its ServicePort profile (ports and service\n"
	     "addresses), and how many endpoints and grants point at it.\n"
	     "Exit 7 when the sandbox has no record.",
    .opts = sandbox_opts,
    .dirs = true,
    .run = run_show,
};

struct list_out {
	struct eg_worker *w;
	json_t *records; /* NULL: text */
	char *err;
	size_t err_size;
};

static int list_one(const struct eg_exec_record *r, void *ctx)
{
	struct eg_inet_key addrs[EG_WORKER_MAX_ENDPOINTS];
	struct list_out *o = ctx;
	size_t naddrs = 0;
	int rc;

	rc = eg_worker_service_addrs(o->w, r->sandbox, addrs, EG_WORKER_MAX_ENDPOINTS, &naddrs,
				     o->err, o->err_size);
	if (rc)
		return rc;
	if (o->records)
		return json_array_append_new(o->records, eg_json_record(r, addrs, naddrs)) ? -ENOMEM
											   : 0;
	record_text(r, addrs, naddrs);
	printf("\n");
	return 0;
}

static const struct eg_opt list_opts[] = {
    EG_OPT("json", NULL, "print one JSON object (schema_version 2)"),
    EG_OPT_END,
};

static int run_list(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	char err[EG_ERR_MAX] = "";
	struct list_out o = {.err = err, .err_size = sizeof(err)};
	struct eg_cli_parse p;
	const char *name, *val;
	json_t *doc = NULL;
	bool json = false;
	int c, rc;

	eg_cli_parse_init(&p, cmd, argc, argv);
	while ((c = eg_cli_next(&p, &name, &val)) == 1)
		json = true;
	if (c < 0)
		return p.exit;
	if (p.npos)
		return eg_cli_usage(&p, "%s: unexpected argument", p.pos[0]);
	if (eg_cli_worker_open(&p, &o.w))
		return EG_EXIT_ERROR;
	/* The JSON document is printed whole or not at all. */
	if (json && !(doc = eg_json_list(&o.records)))
		rc = -ENOMEM;
	else
		rc = eg_worker_list(o.w, list_one, &o, err, sizeof(err));
	eg_worker_close(o.w);
	if (rc) {
		json_decref(doc);
		eg_cli_err("%s", err[0] ? err : strerror(rc < 0 ? -rc : ENOMEM));
		return EG_EXIT_ERROR;
	}
	if (doc && eg_json_print(stdout, doc))
		return EG_EXIT_ERROR;
	return EG_EXIT_OK;
}

const struct eg_cli_cmd eg_cmd_list = {
    .name = "list",
    .args = "[--json]",
    .about = "Every runtime record on this worker, active and retired, one per line, with\n"
	     "its ServicePort profile (ports and service addresses).",
    .opts = list_opts,
    .dirs = true,
    .run = run_list,
};
