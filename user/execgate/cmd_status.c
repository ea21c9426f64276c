// SPDX-License-Identifier: Apache-2.0
/* execgate status: the report of what is loaded and what holds. */
#include <errno.h>
#include <string.h>
#include <execgate/admin.h>
#include "execgate/commands.h"
#include "execgate/daemon_ask.h"

static const struct eg_opt status_opts[] = {
    EG_OPT("json", NULL, "print the report as one JSON object (schema_version 2)"),
    EG_OPT("require-root-attach", NULL,
	   "exit 1 when a cgroup program is attached below the cgroup root (status warns "
	   "either way)"),
    EG_OPT("require-enforce", NULL,
	   "exit 1 when audit decides anywhere: the global mode, or any sandbox's own mode "
	   "(for health checks; the report reads audit (not enforced) either way)"),
    EG_CLI_SOCKET_OPT("asked what it serves when the pin dir cannot be read here"),
    EG_OPT_END,
};

static int run_status(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	struct eg_attach_info attach;
	struct eg_cli_parse p;
	const char *name, *val, *sock = EG_DAEMON_DEFAULT_SOCKET;
	bool require_root = false, require_enforce = false;
	char mode[8], err[EG_ERR_MAX];
	unsigned n_audit = 0;
	int c, rc;

	eg_cli_parse_init(&p, cmd, argc, argv);
	while ((c = eg_cli_next(&p, &name, &val)) == 1) {
		if (!strcmp(name, "require-enforce"))
			require_enforce = true;
		else if (!strcmp(name, "socket"))
			sock = val;
		else
			require_root = true; /* --require-root-attach */
	}
	if (c < 0)
		return p.exit;
	if (p.npos)
		return eg_cli_usage(&p, "%s: unexpected argument", p.pos[0]);
	/* A user of the admit group cannot read root's pins: "not loaded"
	 * would be a lie while the daemon serving them answers. */
	rc = eg_cli_pins_denied(p.pin_dir, sock);
	if (rc >= 0)
		return rc;
	rc = eg_status_write_attach(p.pin_dir, p.state_dir, stdout, p.json, &attach);
	if (rc && rc != -ENOENT)
		eg_cli_err("%s", strerror(-rc));
	if (!rc && require_root && attach.where == EG_ATTACHED_BELOW_ROOT) {
		eg_cli_err(
		    "%s: attached at cgroup %s, not the cgroup root %s (--require-root-attach)",
		    attach.hook, attach.cgroup, attach.root);
		return EG_EXIT_ERROR;
	}
	if (!rc && require_enforce) {
		rc = eg_mode_get(p.pin_dir, mode, NULL, NULL, &n_audit, err, sizeof(err));
		if (rc) {
			eg_cli_err("%s (--require-enforce)", err);
			return EG_EXIT_ERROR;
		}
		if (strcmp(mode, "enforce") || n_audit) {
			eg_cli_err(
			    "mode %s, %u sandbox%s in audit: not enforced (--require-enforce)",
			    mode, n_audit, n_audit == 1 ? "" : "es");
			return EG_EXIT_ERROR;
		}
	}
	return eg_cli_exit_for(rc);
}

const struct eg_cli_cmd eg_cmd_status = {
    .name = "status",
    .args = "[--json] [--require-root-attach] [--require-enforce] [--socket PATH]",
    .about = "Tiers, programs, guarantees (held or not, and why), counters and map fill.\n"
	     "Changes nothing: what the kernel offers is what load probed. Exit 0 when\n"
	     "loaded, 7 when nothing is loaded at the pin dir (the report is printed).\n"
	     "Warns (cgroup-not-root) when the cgroup programs are attached below the\n"
	     "cgroup root; exit 1 for that only with --require-root-attach. Under audit\n"
	     "(global or any sandbox) each guarantee reads audit (not enforced); exit 1\n"
	     "for that only with --require-enforce. Where the pin dir cannot be read here\n"
	     "(permission denied), exit 11 with what execgated at --socket answers.",
    .opts = status_opts,
    .dirs = true,
    .run = run_status,
};
