// SPDX-License-Identifier: Apache-2.0
/* execgate unload: every program detached, every pin removed. */
#include <errno.h>
#include <string.h>
#include <execgate/admin.h>
#include "execgate/commands.h"

static const struct eg_opt no_opts[] = {EG_OPT_END};

static int run_unload(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	struct eg_cli_parse p;
	char err[EG_ERR_MAX];
	int c;

	c = eg_cli_parse_json_only(&p, cmd, argc, argv); /* only the dirs */
	if (c >= 0)
		return c;
	if (eg_unload(p.pin_dir, err, sizeof(err))) {
		eg_cli_err("%s", err);
		return EG_EXIT_ERROR;
	}
	printf("unloaded %s\n", p.pin_dir);
	return EG_EXIT_OK;
}

const struct eg_cli_cmd eg_cmd_unload = {
    .name = "unload",
    .args = "",
    .about = "Detaches every program (their link pins go) and removes the map pins: all\n"
	     "enforcement and every record, endpoint and grant end.",
    .opts = no_opts,
    .dirs = true,
    .run = run_unload,
};
