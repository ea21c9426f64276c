// SPDX-License-Identifier: Apache-2.0
/* execgate load / unload: attach the tiers the kernel offers, pinned. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "execgate/cli.h"
#include "execgate/commands.h"
#include "loader/pins.h"
#include "loader/proc_id.h"
#include "loader/tier.h"

int cmd_load(int argc, char **argv)
{
	static const struct option opts[] = {
	    EG_CLI_DIRS_LONG_OPTS,
	    {"cgroup", required_argument, NULL, 0},
	    {"require", required_argument, NULL, 0},
	    {"json", no_argument, NULL, 0},
	    {NULL, 0, NULL, 0},
	};
	struct eg_cli_dirs dirs;
	struct eg_tier_ctx ctx = {0};
	const char *require = NULL;
	bool json = false;
	char err[768];
	const char *name;
	int c, rc;

	eg_cli_dirs_init(&dirs);
	optind = 1;
	while ((c = eg_cli_getopt(argc, argv, opts, &dirs, &name)) == 0) {
		if (!strcmp(name, "cgroup"))
			ctx.cgroup_path = optarg;
		else if (!strcmp(name, "require"))
			require = optarg;
		else if (!strcmp(name, "json"))
			json = true;
	}
	if (c != -1 || optind != argc) {
		eg_cli_err("load: usage: load [--pin-dir DIR] [--cgroup PATH] "
			   "[--require cgroup|lsm|full] [--json]");
		return EG_EXIT_USAGE;
	}
	if (require && strcmp(require, "full") && !eg_tier_find(require)) {
		if (!strcmp(require, "lsm") || !strcmp(require, "cgroup")) {
			eg_cli_err("--require %s: this build of execgate has no %s tier", require,
				   require);
			return EG_EXIT_UNSUPPORTED;
		}
		eg_cli_err("--require %s: unknown tier (cgroup, lsm, full)", require);
		return EG_EXIT_USAGE;
	}
	rc = eg_proc_check_namespaces(err, sizeof(err));
	if (rc) {
		eg_cli_err("%s", err);
		return EG_EXIT_ERROR;
	}
	ctx.pin_dir = dirs.pin_dir;
	rc = eg_tiers_load(&ctx, require, err, sizeof(err));
	if (rc) {
		eg_cli_err("%s", err);
		return rc == -EOPNOTSUPP ? EG_EXIT_UNSUPPORTED : EG_EXIT_ERROR;
	}
	return eg_cli_report(&dirs, json, false) ? EG_EXIT_ERROR : EG_EXIT_OK;
}

int cmd_unload(int argc, char **argv)
{
	static const struct option opts[] = {
	    EG_CLI_DIRS_LONG_OPTS,
	    {NULL, 0, NULL, 0},
	};
	struct eg_cli_dirs dirs;
	struct eg_tier_ctx ctx = {0};
	char err[768];
	const char *name;
	int c, rc, exit_code = EG_EXIT_OK;

	eg_cli_dirs_init(&dirs);
	optind = 1;
	/* It takes only the directories, which eg_cli_getopt handles. */
	c = eg_cli_getopt(argc, argv, opts, &dirs, &name);
	if (c != -1 || optind != argc) {
		eg_cli_err("unload: usage: unload [--pin-dir DIR]");
		return EG_EXIT_USAGE;
	}
	ctx.pin_dir = dirs.pin_dir;
	for (size_t i = 0; i < eg_tier_count; i++) {
		rc = eg_tiers[i]->unload(&ctx, err, sizeof(err));
		if (rc) {
			eg_cli_err("%s", err);
			exit_code = EG_EXIT_ERROR;
		}
	}
	rc = eg_pins_remove_maps(dirs.pin_dir);
	if (rc && rc != -ENOTEMPTY) {
		eg_cli_err("pin dir %s: %s", dirs.pin_dir, strerror(-rc));
		exit_code = EG_EXIT_ERROR;
	} else if (rc == -ENOTEMPTY) {
		eg_cli_err("pin dir %s: not empty after unload (foreign pins left in place)",
			   dirs.pin_dir);
		exit_code = EG_EXIT_ERROR;
	}
	if (exit_code == EG_EXIT_OK)
		printf("unloaded %s\n", dirs.pin_dir);
	return exit_code;
}
