// SPDX-License-Identifier: Apache-2.0
/* execgate forget: a retired sandbox's record, endpoints and grants
 * deleted. */
#include <errno.h>
#include <string.h>
#include "execgate/commands.h"
#include "execgate/sandbox_cmd.h"
#include "lib/json.h"

static int run_forget(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	struct eg_stream_cuts streams;
	struct eg_cli_parse p;
	struct eg_worker *w;
	uint8_t sandbox[EG_ID_BYTES];
	char err[EG_ERR_MAX], u[EG_UUID_TEXT_LEN];
	unsigned endpoints = 0;
	int rc;

	rc = eg_cli_open_sandbox(&p, cmd, argc, argv, sandbox, &w, true);
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
	eg_cli_warn_streams(sandbox, &streams);
	if (p.json)
		return eg_json_print(stdout, eg_json_forget(sandbox, endpoints, &streams))
			   ? EG_EXIT_ERROR
			   : EG_EXIT_OK;
	printf("sandbox %s: forgotten, %u endpoint%s removed", eg_cli_uuid(sandbox, u), endpoints,
	       endpoints == 1 ? "" : "s");
	eg_cli_text_streams(&streams);
	printf("\n");
	return EG_EXIT_OK;
}

const struct eg_cli_cmd eg_cmd_forget = {
    .name = "forget",
    .args = "--sandbox UUID [--json]",
    .about = "Deletes a retired sandbox's record, its endpoints and its grants. An active\n"
	     "record is refused: retire it first. Exit 7 when there is no record.",
    .opts = eg_cli_sandbox_opts,
    .dirs = true,
    .run = run_forget,
};
