// SPDX-License-Identifier: Apache-2.0
/* execgate admit: a grant for a process, after an Allow. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "execgate/text.h"
#include "execgate/commands.h"

static const struct eg_opt admit_opts[] = {
    EG_OPT("pid", "PID", "the process the grant is for (a process id, not a thread id)"),
    EG_OPT("scope", "LIST",
	   "the access asked for: file.read,file.write,exec,terminal,watch,control"),
    EG_OPT("now", "UNIX", "judge the token at this unix time (seconds) instead of the clock"),
    EG_OPT("json", NULL, "print the verdict as one JSON object (schema_version 2)"),
    EG_OPT_END,
};

static int run_admit(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	struct eg_admit_args a = {.req = {.open_kind = EG_OPEN_NEW}};
	struct eg_verdict_result res;
	struct eg_subject who = {.pidfd = -1};
	struct eg_cli_parse p;
	struct eg_worker *w;
	const char *name, *val;
	char err[EG_ERR_MAX], *text = NULL;
	int c, rc;

	eg_cli_parse_init(&p, cmd, argc, argv);
	while ((c = eg_cli_next(&p, &name, &val)) == 1) {
		if (!strcmp(name, "pid") && eg_parse_pid(val, &who.pid))
			return eg_cli_usage(&p, "--pid %s: not a process id", val);
		else if (!strcmp(name, "scope") && eg_scope_parse(val, &a.req.scope))
			return eg_cli_usage(&p, "--scope %s: unknown scope", val);
		else if (!strcmp(name, "now") &&
			 (eg_cli_parse_u64(val, UINT64_MAX / 1000000000ULL, &a.now_unix) ||
			  !a.now_unix))
			return eg_cli_usage(&p, "--now %s: not a unix time", val);
	}
	if (c < 0)
		return p.exit;
	if (!who.pid)
		return eg_cli_usage(&p, "--pid is required");
	if (p.npos != 1)
		return eg_cli_usage(&p, "expected one TOKEN (or - for stdin)");
	rc = eg_cli_read_token(p.pos[0], &text);
	if (rc) {
		eg_cli_err("token: %s", rc == -E2BIG ? "longer than 64 KiB" : strerror(-rc));
		return rc == -E2BIG ? EG_EXIT_USAGE : EG_EXIT_ERROR;
	}
	a.token_text = text;
	rc = eg_cli_worker_open(&p, &w);
	if (rc) {
		free(text);
		return EG_EXIT_ERROR;
	}
	rc = eg_worker_admit(w, &who, &a, &res, err, sizeof(err));
	eg_worker_close(w);
	free(text);
	if (rc) {
		eg_cli_err("%s", err);
		return EG_EXIT_ERROR;
	}
	eg_cli_print_verdict(stdout, &res, &a.req, p.json);
	return eg_cli_verdict_exit(res.d.verdict);
}

const struct eg_cli_cmd eg_cmd_admit = {
    .name = "admit",
    .args = "--pid PID [--scope LIST] [--now UNIX] [--json] TOKEN|-",
    .about = "Verifies the capability TOKEN and compares it with the installed record of its\n"
	     "sandbox; on allow, writes a grant that lets process PID connect to the\n"
	     "sandbox's bridge sockets until the token expires or the record is replaced.\n"
	     "Prints the verdict (same form as check). Exit 0 allow, 3 refresh-route, 4 deny.",
    .opts = admit_opts,
    .dirs = true,
    .run = run_admit,
};
