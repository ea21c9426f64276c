/* SPDX-License-Identifier: Apache-2.0 */
/* What every `execgate` subcommand shares: its option table (one row per
 * flag, with its help text), one parser for it (exact long names, no
 * abbreviations, every single-valued flag at most once, --help), errno to
 * exit code, one-line errors `execgate: <command>: ...`, and the text
 * forms of ids, processes, records and verdicts (the JSON forms are the
 * library's, lib/json.h). A command file is its
 * option table, the calls into libexecgate and its output. */
#ifndef EXECGATE_CLI_CLI_H
#define EXECGATE_CLI_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "frontend/opts.h"
#include "execgate/execgate.h"

struct eg_cli_cmd {
	const char *name;
	const char *args;	   /* the synopsis after the name */
	const char *about;	   /* what it does, for --help */
	const struct eg_opt *opts; /* frontend/opts.h rows, ending with EG_OPT_END */
	bool dirs;		   /* takes --pin-dir and --state-dir */
	int (*run)(const struct eg_cli_cmd *cmd, int argc, char **argv);
};

/* The command being run, for error messages (set by main). */
extern const char *eg_cli_command;

#define EG_CLI_MAX_POS EG_OPTS_MAX_POS

/* A command's parse: frontend/opts.h over the command's table and the dirs. */
struct eg_cli_parse {
	const struct eg_cli_cmd *cmd;
	struct eg_opts opts;
	const char *pin_dir, *state_dir;
	const char *pos[EG_CLI_MAX_POS];
	int npos;
	int exit;  /* when eg_cli_next returned -1: EG_EXIT_OK (--help) or EG_EXIT_USAGE */
	bool json; /* --json, for a command whose table has it (taken by eg_cli_next) */
};

/* argv[0] is the command's name. */
void eg_cli_parse_init(struct eg_cli_parse *p, const struct eg_cli_cmd *cmd, int argc, char **argv);
/* 1: one option, *name its full name, *value its value (NULL for a flag);
 * 0: done, the positional arguments in p->pos; -1: the command exits with
 * p->exit (help or version printed, or a usage error printed). --pin-dir,
 * --state-dir, --json (p->json), --help/-h and --version/-V are handled here. Arguments that do not
 * start with "--" are positional ("-" is stdin; a base64url token may start with "-"). */
int eg_cli_next(struct eg_cli_parse *p, const char **name, const char **value);
/* The whole parse of a command that takes no positional argument and, of
 * its own, at most --json (p->json): -1 to go on, else the exit code (help
 * printed, or a usage error). */
int eg_cli_parse_json_only(struct eg_cli_parse *p, const struct eg_cli_cmd *cmd, int argc,
			   char **argv);
/* eg_cli_next, with the identity flags (frontend/identity_opts.h) taken
 * into id: 1 only for an option that is not one of them. A bad identity
 * value is a usage error (-1, p->exit set). */
struct eg_identity_opts;
int eg_cli_next_identity(struct eg_cli_parse *p, struct eg_identity_opts *id, const char **name,
			 const char **value);
/* "execgate: <command>: <msg> (execgate <command> --help)" on stderr;
 * returns EG_EXIT_USAGE. */
int eg_cli_usage(const struct eg_cli_parse *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void eg_cli_help(const struct eg_cli_cmd *cmd, FILE *f);
/* The help rows of --pin-dir and --state-dir, which every command with
 * dirs takes, before its name (execgate --pin-dir X status) or after. */
void eg_cli_help_dirs(FILE *f);

/* "execgate: <command>: <msg>\n" on stderr. */
void eg_cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Opens the worker handle on the parsed dirs; prints the error. 0 or the
 * negative errno. Then finishes every stream cut a killed writer left
 * pending (eg_worker_finish_cuts), one line on stderr for each, except the
 * one of own (may be NULL): the sandbox the command itself installs,
 * retires or forgets, whose answer reports that cut. A cut that fails is
 * an error line; the command still runs. */
int eg_cli_worker_open(const struct eg_cli_parse *p, struct eg_worker **w);
int eg_cli_worker_open_for(const struct eg_cli_parse *p, struct eg_worker **w, const uint8_t *own);
/* The sweep of eg_cli_worker_open_for alone: install, retire and forget run
 * it again, without a skip, when their own call failed (a refused install
 * does not get to finish its sandbox's pending cut itself). */
void eg_cli_finish_cuts(struct eg_worker *w, const uint8_t *skip);

/* Negative errno of a failed operation -> enum eg_exit. */
int eg_cli_exit_for(int rc);
int eg_cli_verdict_exit(enum eg_verdict v);

/* Values. 0 or -EINVAL. */
int eg_parse_pid(const char *s, int *pid);
int eg_cli_parse_u64(const char *s, uint64_t max, uint64_t *out);
/* A socket path: non-empty, absolute or relative, no control characters
 * (a newline would forge lines in logs and in the text form of events),
 * shorter than sun_path. */
int eg_cli_check_path(const char *s, const char **why);

/* The token argument: the text itself, or "-" for stdin. One trailing
 * newline (what echo adds) is dropped. *text is malloc'd. -E2BIG when
 * longer than 64 KiB. */
int eg_cli_read_token(const char *arg, char **text);

/* Text forms. */
const char *eg_cli_uuid(const uint8_t *id, char *buf);
void eg_cli_print_proc(FILE *f, const struct eg_process *p);
/* Bytes as text: printable ASCII as is, everything else (control bytes,
 * backslash, bytes >= 0x7f) as \xHH, so one record is always one line. */
void eg_cli_print_escaped(FILE *f, const char *s, size_t max);

/* The ServicePort profile of a record as text: "ports 8080/tcp,53/udp
 * service-addrs 10.0.0.2,fd00::2" ("none" for an empty list). */
void eg_cli_print_service_profile(FILE *f, const struct eg_runtime_record *r,
				  const struct eg_inet_addr *addrs, size_t naddrs);

/* The verdict of admit and of check: one text form ("allow",
 * "refresh-route: REASON", "deny: REASON", "deny: malformed: DETAIL") and
 * the one JSON verdict object of the CLI and the API (eg_json_verdict,
 * docs/schema/verdict.schema.json). */
void eg_cli_print_verdict(FILE *f, const struct eg_verdict_result *r, const struct eg_request *req,
			  bool json);

#endif
