// SPDX-License-Identifier: Apache-2.0
/* execgate revoke: a process's grants removed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "execgate/text.h"
#include "execgate/commands.h"

static const struct eg_opt revoke_opts[] = {
    EG_OPT("pid", "PID", "the process whose grants go"),
    EG_OPT("sandbox", "UUID", "the sandbox the grants are for"),
    EG_OPT_END,
};

static int run_revoke(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	struct eg_cli_parse p;
	struct eg_worker *w;
	uint8_t sandbox[EG_ID_BYTES];
	bool have_sandbox = false;
	unsigned removed = 0;
	char err[EG_ERR_MAX], u[EG_UUID_TEXT_LEN];
	const char *name, *val;
	int c, rc, pid = 0;

	eg_cli_parse_init(&p, cmd, argc, argv);
	while ((c = eg_cli_next(&p, &name, &val)) == 1) {
		if (!strcmp(name, "pid")) {
			if (eg_parse_pid(val, &pid))
				return eg_cli_usage(&p, "--pid %s: not a process id", val);
		} else if (eg_uuid_from_text(val, sandbox)) {
			return eg_cli_usage(&p, "--sandbox %s: not a UUID", val);
		} else {
			have_sandbox = true;
		}
	}
	if (c < 0)
		return p.exit;
	if (!pid || !have_sandbox || p.npos)
		return eg_cli_usage(&p, "expected --pid PID --sandbox UUID and nothing else");
	if (eg_cli_worker_open(&p, &w))
		return EG_EXIT_ERROR;
	rc = eg_worker_revoke(w, pid, sandbox, &removed, err, sizeof(err));
	eg_worker_close(w);
	if (rc) {
		eg_cli_err("%s", err);
		return eg_cli_exit_for(rc);
	}
	printf("pid %d: %u grant%s for sandbox %s revoked\n", pid, removed, removed == 1 ? "" : "s",
	       eg_cli_uuid(sandbox, u));
	return EG_EXIT_OK;
}

const struct eg_cli_cmd eg_cmd_revoke = {
    .name = "revoke",
    .args = "--pid PID --sandbox UUID",
    .about = "Deletes every grant of process PID for the sandbox, Unix and ServicePort.\n"
	     "Exit 7 when it had none.",
    .opts = revoke_opts,
    .dirs = true,
    .run = run_revoke,
};
