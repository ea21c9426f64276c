// SPDX-License-Identifier: Apache-2.0
/* execgate check: the verdict of admit, without a grant. Against the
 * installed record of the token's sandbox (the worker), or, with --keys and
 * the identity flags, against a record given on the command line, in pure
 * userspace with the same core: what an issuer tests tokens with. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "execgate/commands.h"
#include "execgate/text.h"
#include "frontend/check_offline.h"
#include "frontend/identity_opts.h"

static const struct eg_opt check_opts[] = {
    EG_OPT("keys", "DIR|FILE",
	   "check offline: verification keys (*.pub files, or one); the record is "
	   "the identity flags below"),
    EG_OPT("sandbox", "UUID", "offline record: the sandbox"),
    EG_OPT("worker", "UUID", "offline record: this worker's id"),
    EG_OPT("generation", "N", "offline record: the execution generation it runs"),
    EG_OPT("activation", "N", "offline record: the activation attempt"),
    EG_OPT("pod-uid", "UUID", "offline record: the pod UID (firecracker-k8s)"),
    EG_OPT("substrate", "NAME", "offline record: firecracker-host (default) or firecracker-k8s"),
    EG_OPT("retired-below", "N", "offline record: generations below N are retired here"),
    EG_OPT_MANY("service-port", "PORT/tcp|udp", "offline record: a ServicePort of the execution"),
    EG_OPT("no-record", NULL, "offline: no record here (refresh-route: no-record)"),
    EG_OPT("scope", "LIST",
	   "the access asked for, comma-separated (file.read, file.write, exec, terminal, "
	   "watch, control, serviceport), as admit's --scope and the API's scope"),
    EG_OPT("need", "LIST", "the same as --scope (its older name)"),
    EG_OPT("port", "N/tcp|udp", "ServicePort traffic to this port (implies --scope serviceport)"),
    EG_OPT("established", NULL, "a stream already open (an activation change keeps it)"),
    EG_OPT("now", "UNIX", "judge the token at this unix time (seconds) instead of the clock"),
    EG_OPT("json", NULL, "print the verdict as one JSON object (schema_version 2)"),
    EG_OPT_END,
};

static int run_check(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	struct eg_admit_args a = {.req = {.open_kind = EG_OPEN_NEW}};
	struct eg_identity_opts id;
	struct eg_verdict_result res;
	struct eg_cli_parse p;
	struct eg_worker *w;
	const char *name, *val, *keys = NULL;
	bool no_record = false, have_now = false;
	unsigned scope_given = 0;
	char err[EG_ERR_MAX], *text = NULL;
	int c, rc;

	eg_identity_opts_init(&id);
	eg_cli_parse_init(&p, cmd, argc, argv);
	while ((c = eg_cli_next_identity(&p, &id, &name, &val)) == 1) {
		if (!strcmp(name, "keys")) {
			keys = val;
		} else if (!strcmp(name, "no-record")) {
			no_record = true;
		} else if (!strcmp(name, "scope") || !strcmp(name, "need")) {
			/* One flag by two names: given by both, it is given twice. */
			if (scope_given++)
				return eg_cli_usage(&p,
						    "--%s: the scope was given already "
						    "(--scope and --need are one flag)",
						    name);
			if (eg_scope_parse(val, &a.req.scope))
				return eg_cli_usage(&p,
						    "--%s '%s': not a list of file.read, "
						    "file.write, exec, terminal, watch, control, "
						    "serviceport",
						    name, val);
		} else if (!strcmp(name, "port")) {
			if (eg_port_parse(val, &a.req.port, &a.req.proto))
				return eg_cli_usage(&p, "--port '%s': not PORT/tcp or PORT/udp",
						    val);
		} else if (!strcmp(name, "established")) {
			a.req.open_kind = EG_OPEN_ESTABLISHED;
		} else if (!strcmp(name, "now")) {
			if (eg_cli_parse_u64(val, UINT64_MAX / 1000000000ULL, &a.now_unix))
				return eg_cli_usage(&p, "--now '%s': not a unix time in seconds",
						    val);
			have_now = true;
		}
	}
	if (c < 0)
		return p.exit;
	if (p.npos != 1)
		return eg_cli_usage(
		    &p, p.npos ? "%s: unexpected argument" : "missing TOKEN (or - for stdin)%s",
		    p.npos ? p.pos[1] : "");
	if (!keys && (id.seen || no_record))
		return eg_cli_usage(&p, "the record flags need --keys (an offline check); "
					"without them check reads the installed record");
	if (keys && eg_identity_opts_finish(&id, no_record ? 0 : EG_IDF_REQUIRED, err, sizeof(err)))
		return eg_cli_usage(&p, "%s", err);
	/* ServicePort traffic is, by definition, a use of the serviceport
	 * scope. */
	if (a.req.port)
		a.req.scope |= EG_SCOPE_SERVICEPORT;
	if (keys && !have_now)
		a.now_unix = (uint64_t)time(NULL);
	rc = eg_cli_read_token(p.pos[0], &text);
	if (rc) {
		eg_cli_err("token: %s", rc == -E2BIG ? "longer than 64 KiB" : strerror(-rc));
		return rc == -E2BIG ? EG_EXIT_USAGE : EG_EXIT_ERROR;
	}
	a.token_text = text;
	if (keys) {
		rc = eg_check_offline(keys, no_record ? NULL : &id.rec, &a, &res, err, sizeof(err));
		if (rc)
			eg_cli_err("%s", err);
	} else {
		rc = eg_cli_worker_open(&p, &w);
		if (!rc) {
			rc = eg_worker_check(w, &a, &res, err, sizeof(err));
			if (rc)
				eg_cli_err("%s", err);
			eg_worker_close(w);
		}
	}
	free(text);
	if (rc)
		return EG_EXIT_ERROR;
	eg_cli_print_verdict(stdout, &res, &a.req, p.json);
	if (fflush(stdout)) {
		eg_cli_err("stdout: %s", strerror(errno));
		return EG_EXIT_ERROR;
	}
	return eg_cli_verdict_exit(res.d.verdict);
}

const struct eg_cli_cmd eg_cmd_check = {
    .name = "check",
    .args = "[--keys DIR|FILE <record flags>] [--scope LIST] [--port N/tcp|udp] [--established]\n"
	    "       [--now UNIX] [--json] TOKEN|-",
    .about = "The verdict admit would give, without a grant: verifies TOKEN and compares it\n"
	     "with the installed record of its sandbox. With --keys, offline: the keys come\n"
	     "from DIR|FILE and the record from --sandbox, --worker, --generation and\n"
	     "--activation (or --no-record); nothing is loaded or read from the kernel.\n"
	     "Exit 0 allow, 3 refresh-route, 4 deny.",
    .opts = check_opts,
    .dirs = true,
    .run = run_check,
};
