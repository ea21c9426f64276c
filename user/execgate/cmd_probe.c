// SPDX-License-Identifier: Apache-2.0
/* execgate probe: what the kernel offers now, reported, nothing kept. */
#include <errno.h>
#include <string.h>
#include <execgate/admin.h>
#include "execgate/commands.h"

static const struct eg_opt probe_opts[] = {
    EG_OPT("json", NULL, "print the report as one JSON object (schema_version 2)"),
    EG_OPT_END,
};

static int run_probe(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	struct eg_cli_parse p;
	int rc;

	rc = eg_cli_parse_json_only(&p, cmd, argc, argv);
	if (rc >= 0)
		return rc;
	rc = eg_probe_write(p.pin_dir, stdout, p.json);
	if (rc && rc != -ENOENT) {
		eg_cli_err("%s", strerror(-rc));
		return EG_EXIT_ERROR;
	}
	return EG_EXIT_OK;
}

const struct eg_cli_cmd eg_cmd_probe = {
    .name = "probe",
    .args = "[--json]",
    .about = "Probes now which tiers the kernel offers (loads probe programs and attaches one\n"
	     "for an instant to a scratch child cgroup of the cgroup v2 root), and prints the\n"
	     "report with every guarantee. Records nothing; exit 0 whether or not anything\n"
	     "is loaded.",
    .opts = probe_opts,
    .dirs = true,
    .run = run_probe,
};
