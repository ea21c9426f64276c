// SPDX-License-Identifier: Apache-2.0
/* execgate load / unload / status / probe: the tiers the kernel offers,
 * attached and pinned, and the report of what holds. */
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
	bool json = false;
	int c, rc;

	eg_cli_parse_init(&p, cmd, argc, argv);
	while ((c = eg_cli_next(&p, &name, &val)) == 1) {
		if (!strcmp(name, "cgroup"))
			cgroup = val;
		else if (!strcmp(name, "require"))
			require = val;
		else if (!strcmp(name, "json"))
			json = true;
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
	rc = eg_load_report(p.pin_dir, p.state_dir, stdout, json);
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

static const struct eg_opt no_opts[] = {EG_OPT_END};

static int run_unload(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	struct eg_cli_parse p;
	const char *name, *val;
	char err[EG_ERR_MAX];
	int c;

	eg_cli_parse_init(&p, cmd, argc, argv);
	c = eg_cli_next(&p, &name, &val); /* only the dirs, which it handles */
	if (c < 0)
		return p.exit;
	if (p.npos)
		return eg_cli_usage(&p, "%s: unexpected argument", p.pos[0]);
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

static const struct eg_opt status_opts[] = {
    EG_OPT("json", NULL, "print the report as one JSON object (schema_version 2)"),
    EG_OPT_END,
};

static const struct eg_opt status_only_opts[] = {
    EG_OPT("json", NULL, "print the report as one JSON object (schema_version 2)"),
    EG_OPT("require-root-attach", NULL,
	   "exit 1 when a cgroup program is attached below the cgroup root (status warns "
	   "either way)"),
    EG_OPT_END,
};

static int run_status(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	struct eg_attach_info attach;
	struct eg_cli_parse p;
	const char *name, *val;
	bool json = false, require_root = false;
	int c, rc;

	eg_cli_parse_init(&p, cmd, argc, argv);
	while ((c = eg_cli_next(&p, &name, &val)) == 1) {
		if (!strcmp(name, "json"))
			json = true;
		else
			require_root = true;
	}
	if (c < 0)
		return p.exit;
	if (p.npos)
		return eg_cli_usage(&p, "%s: unexpected argument", p.pos[0]);
	rc = eg_status_write_attach(p.pin_dir, p.state_dir, stdout, json, &attach);
	if (rc && rc != -ENOENT)
		eg_cli_err("%s", strerror(-rc));
	if (!rc && require_root && attach.where == EG_ATTACHED_BELOW_ROOT) {
		eg_cli_err(
		    "%s: attached at cgroup %s, not the cgroup root %s (--require-root-attach)",
		    attach.hook, attach.cgroup, attach.root);
		return EG_EXIT_ERROR;
	}
	return eg_cli_exit_for(rc);
}

const struct eg_cli_cmd eg_cmd_status = {
    .name = "status",
    .args = "[--json] [--require-root-attach]",
    .about = "Tiers, programs, guarantees (held or not, and why), counters and map fill.\n"
	     "Changes nothing: what the kernel offers is what load probed. Exit 0 when\n"
	     "loaded, 7 when nothing is loaded at the pin dir (the report is printed).\n"
	     "Warns (cgroup-not-root) when the cgroup programs are attached below the\n"
	     "cgroup root; exit 1 for that only with --require-root-attach.",
    .opts = status_only_opts,
    .dirs = true,
    .run = run_status,
};

static int run_probe(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	struct eg_cli_parse p;
	const char *name, *val;
	bool json = false;
	int c, rc;

	eg_cli_parse_init(&p, cmd, argc, argv);
	while ((c = eg_cli_next(&p, &name, &val)) == 1)
		json = true;
	if (c < 0)
		return p.exit;
	if (p.npos)
		return eg_cli_usage(&p, "%s: unexpected argument", p.pos[0]);
	rc = eg_probe_write(p.pin_dir, stdout, json);
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
    .opts = status_opts,
    .dirs = true,
    .run = run_probe,
};
