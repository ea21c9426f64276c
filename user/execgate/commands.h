/* SPDX-License-Identifier: Apache-2.0 */
/* Subcommands of `execgate` and the exit codes every one of them uses
 * (documented in README.md and docs/operators.md). */
#ifndef EXECGATE_CLI_COMMANDS_H
#define EXECGATE_CLI_COMMANDS_H

enum eg_exit {
	EG_EXIT_OK = 0,		 /* done; for check/admit: allow */
	EG_EXIT_ERROR = 1,	 /* the operation failed: the message names object and reason */
	EG_EXIT_USAGE = 2,	 /* bad flag, missing argument, malformed value */
	EG_EXIT_REFRESH = 3,	 /* check/admit: refresh-route */
	EG_EXIT_DENY = 4,	 /* check/admit: deny */
	EG_EXIT_UNSUPPORTED = 5, /* load --require: the kernel cannot give that tier */
	EG_EXIT_STALE = 6,	 /* install: older than what is installed, refused */
	EG_EXIT_NOT_FOUND = 7,	 /* unknown sandbox / key / grant */
};

int cmd_check(int argc, char **argv);
int cmd_load(int argc, char **argv);
int cmd_unload(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_keys(int argc, char **argv);
int cmd_install(int argc, char **argv);
int cmd_retire(int argc, char **argv);
int cmd_admit(int argc, char **argv);
int cmd_revoke(int argc, char **argv);
int cmd_events(int argc, char **argv);

#endif
