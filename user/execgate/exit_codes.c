// SPDX-License-Identifier: Apache-2.0
/* The exit codes of every execgate command, written once: `execgate --help`
 * and each command's --help print the short forms, `execgate
 * --help-exit-codes` the meanings, from which scripts/gen-exit-codes-doc.sh
 * writes the tables of README.md, docs/operators.md and execgate(8)
 * (tests/ops/test-exit-codes-doc.sh fails when they differ). A meaning may
 * quote a command or a value in `backticks`: code in Markdown, bold in
 * roff. */
#include <stdio.h>
#include <string.h>
#include "execgate/commands.h"

static const struct eg_exit_doc {
	enum eg_exit code;
	const char *brief;   /* for --help: "5 tier not offered" */
	const char *meaning; /* for the docs */
} exit_docs[] = {
    {EG_EXIT_OK, "ok/allow", "done; `check`/`admit`: allow"},
    {EG_EXIT_ERROR, "failed",
     "the operation failed; the one-line message names the object and why. `status "
     "--require-root-attach`: a cgroup program is attached below the cgroup root"},
    {EG_EXIT_USAGE, "usage",
     "usage: an unknown command, a bad flag, a missing argument or a malformed value (for "
     "`load`, a `--pin-dir` not on bpffs); nothing was done"},
    {EG_EXIT_REFRESH, "refresh-route", "`check`/`admit`: refresh-route"},
    {EG_EXIT_DENY, "deny", "`check`/`admit`: deny"},
    {EG_EXIT_UNSUPPORTED, "tier not offered",
     "`load --require`: the kernel does not offer the required tier (or none at all); nothing "
     "was loaded"},
    {EG_EXIT_STALE, "stale install",
     "`install`: stale (older than what is installed), nothing written"},
    {EG_EXIT_NOT_FOUND, "not found/not loaded",
     "not found: no record (`retire`, `show`, `forget`), no grant (`revoke`), no key (`keys "
     "remove`); `status`: nothing is loaded at the pin dir"},
    {EG_EXIT_REVOCATION, "stream cut failed",
     "`install`/`retire`: the record changed, but cutting the stale streams of the old epoch "
     "failed (a `setns` or `pidfd_getfd` refused, or a stream left); the message says why, and "
     "one may still run"},
    {EG_EXIT_UNTAKEN, "key change not taken by execgated",
     "`keys add`/`remove`: the change is in the key directory, but an `execgated` serving this "
     "state dir did not answer, or did not hold the new key set, within 1 s: it may still trust "
     "the old set"},
    {EG_EXIT_REFUSED, "install refused (wrong-worker, not-selected)",
     "`install`: refused by the install rule, nothing written: the install names another worker "
     "than this one (`wrong-worker`), or `execgated` takes part in the fleet on this state dir "
     "and the signed selection in force does not name this execution (`not-selected`); "
     "docs/fleet.md, \"The install rule\""},
    {EG_EXIT_NO_ACCESS, "permission denied on the pins",
     "`status`, `list`, `show`, `audit-report`, `events`: permission denied on the pin dir (its "
     "pins are root's); the one line says what the daemon at `--socket` answers for it "
     "(`loaded`, `not loaded`, or that none answers), never \"not loaded\" of its own"},
    {EG_EXIT_DAEMON_READS, "execgated reads the events",
     "`events`: the daemon serving this pin dir reads its events ring, and a second reader "
     "would take events from it; read the daemon's `GET /v1/events`, or give `--force`"},
};

_Static_assert(sizeof(exit_docs) / sizeof(exit_docs[0]) == EG_EXIT__COUNT,
	       "one row per enum eg_exit code");

void eg_cli_exit_codes_brief(FILE *f)
{
	int col = fprintf(f, "exit codes:");

	for (size_t i = 0; i < EG_EXIT__COUNT; i++) {
		char item[96];
		int n = snprintf(item, sizeof(item), " %d %s%s", (int)exit_docs[i].code,
				 exit_docs[i].brief, i + 1 < EG_EXIT__COUNT ? "," : "");

		/* Fold at 80 columns, so the man page made from --help fits. */
		if (col + n > 80) {
			fputc('\n', f);
			col = 0;
			memmove(item, item + 1, strlen(item));
			n--;
		}
		col += fprintf(f, "%s", item);
	}
	fputc('\n', f);
}

void eg_cli_exit_codes_doc(FILE *f)
{
	for (size_t i = 0; i < EG_EXIT__COUNT; i++)
		fprintf(f, "%d\t%s\n", (int)exit_docs[i].code, exit_docs[i].meaning);
}
