/* SPDX-License-Identifier: Apache-2.0 */
/* Subcommands of `execgate` and the exit codes every one of them uses
 * (their meanings: exit_codes.c). */
#ifndef EXECGATE_CLI_COMMANDS_H
#define EXECGATE_CLI_COMMANDS_H

#include "execgate/cli.h"

enum eg_exit {
	EG_EXIT_OK = 0,		   /* done; for check/admit: allow */
	EG_EXIT_ERROR = 1,	   /* the operation failed: the message names object and reason */
	EG_EXIT_USAGE = 2,	   /* bad flag, missing argument, malformed value */
	EG_EXIT_REFRESH = 3,	   /* check/admit: refresh-route */
	EG_EXIT_DENY = 4,	   /* check/admit: deny */
	EG_EXIT_UNSUPPORTED = 5,   /* load --require: the kernel cannot give that tier */
	EG_EXIT_STALE = 6,	   /* install: older than what is installed, refused */
	EG_EXIT_NOT_FOUND = 7,	   /* unknown sandbox / key / grant; status: nothing loaded */
	EG_EXIT_REVOCATION = 8,	   /* install/retire: done, but stream revocation failed */
	EG_EXIT_UNTAKEN = 9,	   /* keys add/remove: done on disk, the serving daemon has not
				    * taken it within 1 s */
	EG_EXIT_REFUSED = 10,	   /* install: the install rule refused it, nothing written:
				    * another worker (wrong-worker) or, fleet on, not the
				    * selection in force (not-selected) */
	EG_EXIT_NO_ACCESS = 11,	   /* status/list/show/audit-report/events: permission denied
				    * on the pin dir; the message says what execgated answers */
	EG_EXIT_DAEMON_READS = 12, /* events: execgated reads this pin dir's ring */
	EG_EXIT__COUNT,
};

/* The table of the codes' meanings (exit_codes.c): the short forms folded
 * into one paragraph for --help; one "CODE<TAB>MEANING" line each for
 * `execgate --help-exit-codes`, which the docs are generated from. */
void eg_cli_exit_codes_brief(FILE *f);
void eg_cli_exit_codes_doc(FILE *f);

/* One per subcommand, in the order `execgate --help` lists them. */
extern const struct eg_cli_cmd eg_cmd_check, eg_cmd_load, eg_cmd_unload, eg_cmd_status,
    eg_cmd_probe, eg_cmd_keys, eg_cmd_install, eg_cmd_retire, eg_cmd_forget, eg_cmd_list,
    eg_cmd_show, eg_cmd_admit, eg_cmd_revoke, eg_cmd_events, eg_cmd_node_key, eg_cmd_verdict,
    eg_cmd_mode, eg_cmd_audit_report;

#endif
