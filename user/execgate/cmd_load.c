// SPDX-License-Identifier: Apache-2.0
/* execgate load: the tiers the kernel offers, attached and pinned, and the
 * report of what holds. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
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
    EG_OPT("mode", "enforce|audit",
	   "enforce (the default, also on a reload that does not name it) or audit: allow "
	   "what would be denied and only count and report it (execgate mode switches later)"),
    /* clang-format off */
    EG_OPT("inet-tags", "N",
	   "capacity of eg_inet_tags, the tcp tier's tags: admitted TCP/UDP sockets open at "
	   "once, " EG_SIZE_TEXT(EG_INET_TAGS_MIN) " to " EG_SIZE_TEXT(EG_INET_TAGS_MAX) " (default: the pinned "
	   "map's, else " EG_SIZE_TEXT(EG_INET_TAGS_DEFAULT) "). Larger costs every admitted connect "
	   "more; a full map denies (deny-no-tag). Changes only after an unload"),
    /* clang-format on */
    EG_OPT("json", NULL, "print the report as one JSON object (schema_version 2)"),
    EG_OPT_END,
};

static int run_load(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	struct eg_cli_parse p;
	const char *name, *val, *require = NULL, *cgroup = NULL, *mode = "enforce";
	const char *inet_val = NULL;
	char err[EG_ERR_MAX], who[64];
	char now[8] = "";
	uint64_t inet_tags = 0;
	bool mode_given = false;
	int c, rc;

	eg_cli_parse_init(&p, cmd, argc, argv);
	while ((c = eg_cli_next(&p, &name, &val)) == 1) {
		if (!strcmp(name, "cgroup"))
			cgroup = val;
		else if (!strcmp(name, "require"))
			require = val;
		else if (!strcmp(name, "mode"))
			mode = val, mode_given = true;
		else if (!strcmp(name, "inet-tags"))
			inet_val = val;
	}
	if (c < 0)
		return p.exit;
	if (p.npos)
		return eg_cli_usage(&p, "%s: unexpected argument", p.pos[0]);
	if (strcmp(mode, "enforce") && strcmp(mode, "audit"))
		return eg_cli_usage(&p, "--mode %s: not enforce or audit", mode);
	if (inet_val && (eg_cli_parse_u64(inet_val, UINT32_MAX, &inet_tags) ||
			 inet_tags < EG_INET_TAGS_MIN || inet_tags > EG_INET_TAGS_MAX))
		return eg_cli_usage(&p, "--inet-tags %s: not a number from %u to %u", inet_val,
				    EG_INET_TAGS_MIN, EG_INET_TAGS_MAX);
	rc = eg_namespaces_check(err, sizeof(err));
	if (rc) {
		eg_cli_err("%s", err);
		return EG_EXIT_ERROR;
	}
	rc = eg_load_sized(p.pin_dir, p.state_dir, cgroup, require, (unsigned)inet_tags, err,
			   sizeof(err));
	if (rc) {
		eg_cli_err("%s", err);
		return rc == -EOPNOTSUPP ? EG_EXIT_UNSUPPORTED
		       : rc == -EINVAL	 ? EG_EXIT_USAGE
					 : EG_EXIT_ERROR;
	}
	/* Right after the load: a fresh load has no records, so nothing is
	 * decided before this; a reload keeps the pinned mode until here.
	 * Without --mode, a node already enforcing is left as it is: no
	 * switch to count or log (a fresh load's maps start in enforce). */
	snprintf(who, sizeof(who), "uid %u pid %d (execgate load --mode)", (unsigned)getuid(),
		 (int)getpid());
	rc = 0;
	if (mode_given || eg_mode_get(p.pin_dir, now, NULL, NULL, NULL, err, sizeof(err)) ||
	    strcmp(now, mode))
		rc = eg_mode_set(p.pin_dir, p.state_dir, NULL, mode, who, NULL, err, sizeof(err));
	if (rc) {
		eg_cli_err("loaded, but the mode was not set: %s", err);
		return EG_EXIT_ERROR;
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
    .args = "[--cgroup PATH] [--require cgroup|lsm|tcp|full] [--mode enforce|audit]\n"
	    "       [--inet-tags N] [--json]",
    .about = "Probes which enforcement tiers the kernel offers, then loads, attaches and pins\n"
	     "each one (adopting programs already pinned, with no moment unguarded). Keeps\n"
	     "what it probed in <state-dir>/probe, for status. Prints the status report.",
    .opts = load_opts,
    .dirs = true,
    .run = run_load,
};
