// SPDX-License-Identifier: Apache-2.0
/* execgate retire: the sandbox's record retired, its epoch moved, its
 * streams cut. */
#include <errno.h>
#include <string.h>
#include "execgate/commands.h"
#include "execgate/sandbox_cmd.h"
#include "lib/json.h"

static int run_retire(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	struct eg_inet_addr addrs[EG_WORKER_MAX_ENDPOINTS];
	struct eg_stream_cuts streams;
	size_t naddrs = 0;
	struct eg_runtime_record after;
	struct eg_cli_parse p;
	struct eg_worker *w;
	uint8_t sandbox[EG_ID_BYTES];
	char err[EG_ERR_MAX], u[EG_UUID_TEXT_LEN];
	int rc;

	rc = eg_cli_open_sandbox(&p, cmd, argc, argv, sandbox, &w, true);
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
	eg_cli_warn_streams(sandbox, &streams);
	if (p.json)
		return eg_json_print(stdout, eg_json_retire(&after, addrs, naddrs, &streams))
			   ? EG_EXIT_ERROR
			   : eg_cli_streams_exit(&streams);
	printf("sandbox %s: retired generation %llu attempt %u, epoch %llu; its endpoints deny "
	       "every connect",
	       eg_cli_uuid(sandbox, u), (unsigned long long)after.generation, after.activation,
	       (unsigned long long)after.epoch);
	eg_cli_text_streams(&streams);
	printf("\n");
	return eg_cli_streams_exit(&streams);
}

const struct eg_cli_cmd eg_cmd_retire = {
    .name = "retire",
    .args = "--sandbox UUID [--json]",
    .about = "Marks the sandbox's record retired and moves its epoch: every endpoint of it\n"
	     "denies every connect, every grant and stream of it is dead. The record stays\n"
	     "(so a late install of an older generation is still refused) until forget.\n"
	     "Exit 8 when its streams could not all be cut (the record is retired).",
    .opts = eg_cli_sandbox_opts,
    .dirs = true,
    .run = run_retire,
};
