// SPDX-License-Identifier: Apache-2.0
/* execgate install: the runtime record of a sandbox's execution, its
 * endpoints and its ServicePort profile. */
#include <errno.h>
#include <string.h>
#include "frontend/identity_opts.h"
#include "execgate/text.h"
#include "execgate/commands.h"
#include "execgate/sandbox_cmd.h"
#include "lib/json.h"

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
    EG_OPT("mode", "enforce|audit",
	   "this sandbox's own mode, written with the record (overrides the global one; "
	   "inherit takes the global one; default: keep the record's)"),
    EG_OPT("json", NULL, "print the outcome as one JSON object (schema_version 2)"),
    EG_OPT_END,
};

static int parse_vsock(const char *s, struct eg_vsock_addr *k)
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
	if (!eg_vsock_cid_is_guest((uint32_t)cid))
		return -EINVAL;
	k->cid = (uint32_t)cid;
	k->port = (uint32_t)port;
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

static int run_install(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	static struct eg_install_spec spec;
	struct eg_inet_addr addrs[EG_WORKER_MAX_ENDPOINTS];
	struct eg_install_report rep;
	struct eg_identity_opts id;
	size_t naddrs = 0;
	struct eg_cli_parse p;
	struct eg_worker *w;
	char err[EG_ERR_MAX], u[EG_UUID_TEXT_LEN];
	const char *name, *val, *mode = NULL;
	int c, rc;

	memset(&spec, 0, sizeof(spec));
	eg_identity_opts_init(&id);
	eg_cli_parse_init(&p, cmd, argc, argv);
	while ((c = eg_cli_next_identity(&p, &id, &name, &val)) == 1) {
		if (!strcmp(name, "mode")) {
			if (strcmp(val, "enforce") && strcmp(val, "audit") &&
			    strcmp(val, "inherit"))
				return eg_cli_usage(&p, "--mode %s: not enforce, audit or inherit",
						    val);
			mode = val;
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
			    eg_inet_parse(val, &spec.service_addrs[spec.n_service_addrs].family,
					  spec.service_addrs[spec.n_service_addrs].addr))
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
	eg_identity_opts_spec(&id, &spec);
	if (eg_cli_worker_open_for(&p, &w, spec.sandbox))
		return EG_EXIT_ERROR;
	rc = eg_worker_install_mode(w, &spec, mode, &rep, err, sizeof(err));
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
		if (rc == -EXDEV || rc == -ENOMSG) /* the install rule (docs/fleet.md) */
			return EG_EXIT_REFUSED;
		return rc == -ESTALE ? EG_EXIT_STALE : EG_EXIT_ERROR;
	}
	eg_cli_warn_streams(rep.after.sandbox, &rep.streams);
	for (size_t i = 0; i < rep.n_warnings; i++)
		eg_cli_err("warning: %s: %s", rep.warnings[i].code, rep.warnings[i].message);
	if (p.json)
		return eg_json_print(stdout, eg_json_install(&rep, addrs, naddrs))
			   ? EG_EXIT_ERROR
			   : eg_cli_streams_exit(&rep.streams);
	printf("sandbox %s: %s generation %llu attempt %u, epoch %llu",
	       eg_cli_uuid(rep.after.sandbox, u), rep.outcome_name,
	       (unsigned long long)rep.after.generation, rep.after.activation,
	       (unsigned long long)rep.after.epoch);
	if (rep.had_before && rep.before.epoch != rep.after.epoch)
		printf(" (was %llu)", (unsigned long long)rep.before.epoch);
	printf("; endpoints: %u added, %u claimed, %u inodes; bridge ", rep.endpoints_added,
	       rep.endpoints_claimed, rep.inodes);
	eg_cli_print_proc(stdout, &rep.after.bridge);
	eg_cli_text_streams(&rep.streams);
	printf("\n");
	return eg_cli_streams_exit(&rep.streams);
}

const struct eg_cli_cmd eg_cmd_install = {
    .name = "install",
    .args = "--sandbox UUID --worker UUID --generation N --activation N --bridge-pid PID\n"
	    "       [--vmm-pid PID] [--bridge-socket PATH]... [--vmm-socket PATH]...\n"
	    "       [--vsock CID:PORT]... [--pod-uid UUID] [--substrate NAME]\n"
	    "       [--service-addr IP]... [--service-port PORT/tcp|udp]...\n"
	    "       [--mode enforce|audit|inherit] [--json]",
    .about = "Installs the runtime record of the execution now running the sandbox here,\n"
	     "and registers its endpoints. A newer generation replaces the record and kills\n"
	     "every grant of the older one; an older one is refused (exit 6). Streams of\n"
	     "an older epoch are cut before it returns; when that fails (a step refused,\n"
	     "a stream left), the record change stands and the exit is 8. The install rule\n"
	     "(docs/fleet.md) refuses, exit 10, nothing written: a --worker other than this\n"
	     "worker's id (node.worker), and while execgated runs the fleet (fleet/on in the\n"
	     "state dir) an execution the signed selection in force does not name.",
    .opts = install_opts,
    .dirs = true,
    .run = run_install,
};
