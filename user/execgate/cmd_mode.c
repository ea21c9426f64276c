// SPDX-License-Identifier: Apache-2.0
/* execgate mode: switch between enforce and audit at run time, globally
 * or for one sandbox (docs/design.md, "Modes: enforce and audit"). */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <execgate/admin.h>
#include "execgate/text.h"
#include "execgate/commands.h"

static const struct eg_opt mode_opts[] = {
    EG_OPT("sandbox", "UUID",
	   "switch only this sandbox's own mode (it overrides the global one; inherit "
	   "returns it to the global mode)"),
    EG_OPT_END,
};

static int run_mode(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	struct eg_cli_parse p;
	uint8_t sandbox[EG_ID_BYTES];
	bool have_sandbox = false;
	char err[EG_ERR_MAX], who[96], before[8] = "", u[EG_UUID_TEXT_LEN];
	const char *name, *val;
	struct passwd *pw;
	int c, rc;

	eg_cli_parse_init(&p, cmd, argc, argv);
	while ((c = eg_cli_next(&p, &name, &val)) == 1) {
		if (eg_uuid_from_text(val, sandbox))
			return eg_cli_usage(&p, "--sandbox %s: not a UUID", val);
		have_sandbox = true;
	}
	if (c < 0)
		return p.exit;
	if (p.npos != 1)
		return eg_cli_usage(&p, "expected one mode: enforce or audit");
	if (strcmp(p.pos[0], "enforce") && strcmp(p.pos[0], "audit") &&
	    !(have_sandbox && !strcmp(p.pos[0], "inherit")))
		return eg_cli_usage(&p, "mode %s: not %s", p.pos[0],
				    have_sandbox ? "enforce, audit or inherit"
						 : "enforce or audit");
	pw = getpwuid(getuid());
	snprintf(who, sizeof(who), "uid %u (%s) pid %d (execgate mode)", (unsigned)getuid(),
		 pw ? pw->pw_name : "?", (int)getpid());
	rc = eg_mode_set(p.pin_dir, p.state_dir, have_sandbox ? sandbox : NULL, p.pos[0], who,
			 before, err, sizeof(err));
	if (rc) {
		eg_cli_err("%s", err);
		return rc == -ENOENT   ? EG_EXIT_NOT_FOUND
		       : rc == -EINVAL ? EG_EXIT_USAGE
				       : EG_EXIT_ERROR;
	}
	if (have_sandbox)
		printf("sandbox %s: mode %s (was %s)\n", eg_cli_uuid(sandbox, u), p.pos[0], before);
	else
		printf("mode %s (was %s)\n", p.pos[0], before);
	return EG_EXIT_OK;
}

const struct eg_cli_cmd eg_cmd_mode = {
    .name = "mode",
    .args = "enforce|audit [--sandbox UUID]   (with --sandbox also inherit)",
    .about = "Switches the enforcement mode at run time, without reloading: in audit every\n"
	     "hook decides as in enforce, but allows what it would deny, counts it as a\n"
	     "would-deny and marks its event audit. Globally, or for one sandbox (its mode\n"
	     "overrides the global one). One atomic write; logged with who switched.\n"
	     "Exit 7 when nothing is loaded or the sandbox has no record.",
    .opts = mode_opts,
    .dirs = true,
    .run = run_mode,
};
