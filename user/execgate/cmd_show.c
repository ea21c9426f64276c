// SPDX-License-Identifier: Apache-2.0
/* execgate show: one sandbox's record. */
#include <errno.h>
#include <string.h>
#include "execgate/commands.h"
#include "execgate/sandbox_cmd.h"
#include "lib/json.h"

static int run_show(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	static struct eg_sandbox_info info;
	struct eg_cli_parse p;
	struct eg_worker *w;
	uint8_t sandbox[EG_ID_BYTES];
	char err[EG_ERR_MAX];
	int rc;

	rc = eg_cli_open_sandbox(&p, cmd, argc, argv, sandbox, &w, false);
	if (rc >= 0)
		return rc;
	rc = eg_worker_show(w, sandbox, &info, err, sizeof(err));
	eg_worker_close(w);
	if (rc) {
		eg_cli_err("%s", err);
		return eg_cli_exit_for(rc);
	}
	if (p.json)
		return eg_json_print(stdout, eg_json_show(&info)) ? EG_EXIT_ERROR : EG_EXIT_OK;
	eg_cli_record_text(&info.record, info.service_addrs, info.n_service_addrs);
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
    .opts = eg_cli_sandbox_opts,
    .dirs = true,
    .run = run_show,
};
