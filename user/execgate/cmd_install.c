// SPDX-License-Identifier: Apache-2.0
/* execgate install / retire: the runtime record of a sandbox's execution. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "core/identity_opts.h"
#include "core/ids.h"
#include "execgate/cli.h"
#include "execgate/commands.h"
#include "loader/proc_id.h"
#include "loader/runtime.h"

static void print_record_json(const struct eg_exec_record *r)
{
	char u[EG_UUID_TEXT_LEN];

	printf("{\"sandbox\":\"%s\"", eg_cli_uuid(r->sandbox, u));
	printf(",\"state\":\"%s\"", r->state == EG_RECORD_RETIRED ? "retired" : "active");
	printf(",\"worker\":\"%s\"", eg_cli_uuid(r->worker, u));
	printf(",\"pod_uid\":\"%s\"", eg_cli_uuid(r->pod_uid, u));
	printf(",\"substrate\":\"%s\"", eg_substrate_name((uint8_t)r->substrate));
	printf(",\"generation\":%llu,\"activation\":%u,\"epoch\":%llu,\"bridge\":",
	       (unsigned long long)r->generation, r->activation, (unsigned long long)r->epoch);
	eg_json_proc(stdout, &r->bridge);
	printf(",\"vmm\":");
	eg_json_proc(stdout, &r->vmm);
	printf("}");
}

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
	/* CID 0 is the hypervisor, 2 the host, -1 "any": never a VMM's
	 * address. CID 1 (local loopback, vsock_loopback) is allowed: the VM
	 * tests and the demo use it. */
	if (cid == 0 || cid == 2 || cid == 0xffffffffULL)
		return -EINVAL;
	k->cid = (__u32)cid;
	k->port = (__u32)port;
	return 0;
}

int cmd_install(int argc, char **argv)
{
	static const struct option opts[] = {
	    EG_CLI_DIRS_LONG_OPTS,
	    EG_IDENTITY_LONG_OPTS(0),
	    {"profile-port", required_argument, NULL, 0},
	    {"bridge-pid", required_argument, NULL, 0},
	    {"vmm-pid", required_argument, NULL, 0},
	    {"bridge-socket", required_argument, NULL, 0},
	    {"vmm-socket", required_argument, NULL, 0},
	    {"vsock", required_argument, NULL, 0},
	    {"json", no_argument, NULL, 0},
	    {NULL, 0, NULL, 0},
	};
	static struct eg_install_req req;
	struct eg_identity_opts id;
	struct eg_install_result res;
	struct eg_cli_dirs dirs;
	struct eg_runtime rt;
	char err[768], u[EG_UUID_TEXT_LEN];
	bool json = false;
	const char *name;
	int c, rc, pid;

	memset(&req, 0, sizeof(req));
	eg_cli_dirs_init(&dirs);
	eg_identity_opts_init(&id);
	optind = 1;
	while ((c = eg_cli_getopt(argc, argv, opts, &dirs, &name)) == 0) {
		rc = eg_identity_opt(&id, name, optarg, err, sizeof(err));
		if (rc < 0) {
			eg_cli_err("install: %s", err);
			return EG_EXIT_USAGE;
		}
		if (rc == 1)
			continue;
		if (!strcmp(name, "json")) {
			json = true;
		} else if (!strcmp(name, "bridge-pid") || !strcmp(name, "vmm-pid")) {
			if (eg_parse_pid(optarg, &pid)) {
				eg_cli_err("install: --%s %s: not a process id", name, optarg);
				return EG_EXIT_USAGE;
			}
			*(name[0] == 'b' ? &req.bridge_pid : &req.vmm_pid) = pid;
		} else if (!strcmp(name, "bridge-socket") || !strcmp(name, "vmm-socket")) {
			bool b = name[0] == 'b';
			size_t *n = b ? &req.n_bridge_sockets : &req.n_vmm_sockets;

			if (*n == EG_INSTALL_MAX_ENDPOINTS) {
				eg_cli_err("install: at most %d --%s", EG_INSTALL_MAX_ENDPOINTS,
					   name);
				return EG_EXIT_USAGE;
			}
			(b ? req.bridge_sockets : req.vmm_sockets)[(*n)++] = optarg;
		} else if (!strcmp(name, "vsock")) {
			if (req.n_vsock == EG_INSTALL_MAX_ENDPOINTS ||
			    parse_vsock(optarg, &req.vsock[req.n_vsock])) {
				eg_cli_err(
				    "install: --vsock %s: expected CID:PORT with CID 1 or > 2",
				    optarg);
				return EG_EXIT_USAGE;
			}
			req.n_vsock++;
		}
	}
	if (c != -1 || optind != argc) {
		eg_cli_err("install: usage: install --sandbox UUID --worker UUID --generation N "
			   "--activation N [--pod-uid UUID] [--substrate NAME] --bridge-pid PID "
			   "[--vmm-pid PID] [--bridge-socket PATH]... [--vmm-socket PATH]... "
			   "[--vsock CID:PORT]...");
		return EG_EXIT_USAGE;
	}
	if (eg_identity_opts_finish(&id, EG_IDF_REQUIRED, err, sizeof(err))) {
		eg_cli_err("install: %s", err);
		return EG_EXIT_USAGE;
	}
	if (!req.bridge_pid) {
		eg_cli_err("install: --bridge-pid is required");
		return EG_EXIT_USAGE;
	}
	req.id = id.rec;
	rc = eg_cli_runtime_open(&rt, &dirs, true);
	if (rc)
		return rc == -ENOENT ? EG_EXIT_ERROR : eg_cli_exit_for(rc);
	rc = eg_install(&rt, &req, &res, err, sizeof(err));
	eg_runtime_close(&rt);
	if (rc) {
		eg_cli_err("%s", err);
		return rc == -ESTALE ? EG_EXIT_STALE : EG_EXIT_ERROR;
	}
	if (json) {
		printf("{\"result\":\"%s\",\"record\":", eg_install_kind_name(res.kind));
		print_record_json(&res.after);
		printf(",\"previous_epoch\":%llu,\"endpoints_added\":%u,\"endpoints_claimed\":%u,"
		       "\"inodes\":%u,\"grants_dropped\":%u}\n",
		       res.had_before ? (unsigned long long)res.before.epoch : 0ULL,
		       res.endpoints_added, res.endpoints_claimed, res.inodes, res.grants_dropped);
	} else {
		printf("sandbox %s: %s generation %llu attempt %u, epoch %llu",
		       eg_cli_uuid(res.after.sandbox, u), eg_install_kind_name(res.kind),
		       (unsigned long long)res.after.generation, res.after.activation,
		       (unsigned long long)res.after.epoch);
		if (res.had_before && res.before.epoch != res.after.epoch)
			printf(" (was %llu)", (unsigned long long)res.before.epoch);
		printf("; endpoints: %u added, %u claimed, %u inodes; bridge ", res.endpoints_added,
		       res.endpoints_claimed, res.inodes);
		eg_cli_print_proc(stdout, &res.after.bridge);
		printf("\n");
	}
	return EG_EXIT_OK;
}

int cmd_retire(int argc, char **argv)
{
	static const struct option opts[] = {
	    EG_CLI_DIRS_LONG_OPTS,
	    {"sandbox", required_argument, NULL, 0},
	    {NULL, 0, NULL, 0},
	};
	struct eg_exec_record after;
	struct eg_cli_dirs dirs;
	struct eg_runtime rt;
	__u8 sandbox[EG_ID_BYTES];
	bool have = false;
	char err[768], u[EG_UUID_TEXT_LEN];
	const char *name;
	int c, rc;

	eg_cli_dirs_init(&dirs);
	optind = 1;
	while ((c = eg_cli_getopt(argc, argv, opts, &dirs, &name)) == 0) {
		if (eg_uuid_parse(optarg, sandbox)) {
			eg_cli_err("retire: --sandbox %s: not a UUID", optarg);
			return EG_EXIT_USAGE;
		}
		have = true;
	}
	if (c != -1 || optind != argc || !have) {
		eg_cli_err("retire: usage: retire --sandbox UUID [--pin-dir DIR]");
		return EG_EXIT_USAGE;
	}
	if (eg_cli_runtime_open(&rt, &dirs, false))
		return EG_EXIT_ERROR;
	rc = eg_retire(&rt, sandbox, &after, err, sizeof(err));
	eg_runtime_close(&rt);
	if (rc) {
		eg_cli_err("%s", err);
		return eg_cli_exit_for(rc);
	}
	printf("sandbox %s: retired generation %llu attempt %u, epoch %llu; its endpoints deny "
	       "every connect\n",
	       eg_cli_uuid(sandbox, u), (unsigned long long)after.generation, after.activation,
	       (unsigned long long)after.epoch);
	return EG_EXIT_OK;
}
