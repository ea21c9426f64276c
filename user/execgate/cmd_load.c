// SPDX-License-Identifier: Apache-2.0
/* execgate load: the tiers the kernel offers, attached and pinned, and the
 * report of what holds. */
#include <errno.h>
#include <string.h>
#include <execgate/admin.h>
#include "execgate/commands.h"

static const struct eg_opt load_opts[] = {
    EG_OPT("cgroup", "PATH",
	   "the cgroup v2 directory whose processes the cgroup tier checks "
	   "(default: the cgroup v2 root)"),
    EG_OPT("require", "TIER",
	   "fail (exit 5, nothing loaded) unless the kernel offers this tier: cgroup (Unix "
	   "connects), lsm (VSOCK, inode endpoints, listener identity), tcp (ServicePort "
	   "TCP/UDP) or full (all three)"),
    EG_OPT("json", NULL, "print the report as one JSON object (schema_version 2)"),
    EG_OPT_END,
};

static int run_load(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	struct eg_cli_parse p;
	const char *name, *val, *require = NULL, *cgroup = NULL;
	char err[EG_ERR_MAX];
	int c, rc;

	eg_cli_parse_init(&p, cmd, argc, argv);
	while ((c = eg_cli_next(&p, &name, &val)) == 1) {
		if (!strcmp(name, "cgroup"))
			cgroup = val;
		else if (!strcmp(name, "require"))
			require = val;
	}
	if (c < 0)
		return p.exit;
	if (p.npos)
		return eg_cli_usage(&p, "%s: unexpected argument", p.pos[0]);
	rc = eg_namespaces_check(err, sizeof(err));
	if (rc) {
		eg_cli_err("%s", err);
		return EG_EXIT_ERROR;
	}
	rc = eg_load(p.pin_dir, p.state_dir, cgroup, require, err, sizeof(err));
	if (rc) {
		eg_cli_err("%s", err);
		return rc == -EOPNOTSUPP ? EG_EXIT_UNSUPPORTED
		       : rc == -EINVAL	 ? EG_EXIT_USAGE
					 : EG_EXIT_ERROR;
	}
	rc = eg_load_report(p.pin_dir, p.state_dir, stdout, p.json);
	if (rc) {
		eg_cli_err("report: %s", strerror(-rc));
		return EG_EXIT_ERROR;
	}
	return EG_EXIT_OK;
}

const struct eg_cli_cmd eg_cmd_load = {
    .name = "load",
    .args = "[--cgroup PATH] [--require cgroup|lsm|tcp|full] [--json]",
    .about = "Probes which enforcement tiers the kernel offers, then loads, attaches and pins\n"
	     "each one (adopting programs already pinned, with no moment unguarded). Keeps\n"
	     "what it probed in <state-dir>/probe, for status. Prints the status report.",
    .opts = load_opts,
    .dirs = true,
    .run = run_load,
};
