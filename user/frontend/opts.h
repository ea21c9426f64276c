/* SPDX-License-Identifier: Apache-2.0 */
/* The one command-line parser of execgate, execgated, execgate-issue and
 * execgate-bridge. A command is a table of flags, one row each with its
 * help text; the parser takes long names exactly (getopt_long would take
 * an unambiguous prefix, so a typo like --bridge-sock would silently mean
 * --bridge-socket), a single-valued flag at most once, "--name VALUE" or
 * "--name=VALUE", a short alias where the row names one, and --help/-h and
 * --version/-V everywhere. Every refusal is one line on stderr,
 * "PROG: [CMD: ]WHAT: REASON (PROG [CMD] --help)", and exit code 2. */
#ifndef EXECGATE_FRONTEND_OPTS_H
#define EXECGATE_FRONTEND_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define EG_OPTS_EXIT_OK	   0
#define EG_OPTS_EXIT_USAGE 2

/* One flag: name without "--"; arg the value's placeholder ("PID"), NULL
 * for a flag without a value; repeat when it may be given more than once;
 * short_name a one-letter alias ('c' for -c), 0 for none. */
struct eg_opt {
	const char *name;
	const char *arg;
	const char *help;
	bool repeat;
	char short_name;
};

#define EG_OPT(name, arg, help)                                                                    \
	{                                                                                          \
		name, arg, help, false, 0                                                          \
	}
#define EG_OPT_MANY(name, arg, help)                                                               \
	{                                                                                          \
		name, arg, help, true, 0                                                           \
	}
#define EG_OPT_SHORT(short_name, name, arg, help)                                                  \
	{                                                                                          \
		name, arg, help, false, short_name                                                 \
	}
#define EG_OPT_END                                                                                 \
	{                                                                                          \
		NULL, NULL, NULL, false, 0                                                         \
	}

#define EG_OPTS_TABLES	3  /* a command's own flags, then shared ones */
#define EG_OPTS_PER_TAB 40 /* rows per table */
#define EG_OPTS_MAX_POS 64 /* execgate-issue keyset: one per key, EG_KEYSET_MAX */

struct eg_opts {
	/* Set by eg_opts_init, then by the caller before the first next. */
	const char *prog; /* "execgate-issue" */
	const char *cmd;  /* "cap", or NULL for a program without commands */
	const struct eg_opt *tables[EG_OPTS_TABLES]; /* each ends with EG_OPT_END */
	/* An argument "-x" that is not -h, -V or a row's short alias is
	 * positional ("-" for stdin; a base64url token may start with "-");
	 * otherwise it is an unknown option. */
	bool dash_positional;
	size_t max_pos; /* positional arguments taken; more is a usage error */
	/* Prints the command's --help (to f). */
	void (*help)(const struct eg_opts *p, FILE *f);
	const void *ctx; /* for help */

	/* Parser state. */
	int argc, i;
	char **argv;
	bool only_pos; /* after "--" */
	unsigned char seen[EG_OPTS_TABLES][EG_OPTS_PER_TAB];
	const char *pos[EG_OPTS_MAX_POS];
	size_t npos;
	int exit; /* when eg_opts_next returned -1: EG_OPTS_EXIT_OK or _USAGE */
};

/* argv[0] is the program's or the command's name and is skipped. */
void eg_opts_init(struct eg_opts *p, const char *prog, const char *cmd, int argc, char **argv);

/* 1: one option, *o its row, *value its value (NULL for a flag); 0: done,
 * the positional arguments in p->pos; -1: the command exits with p->exit
 * (--help or --version printed on stdout, or a usage error on stderr). */
int eg_opts_next(struct eg_opts *p, const struct eg_opt **o, const char **value);

/* "PROG: [CMD: ]MSG (PROG [CMD] --help)" on stderr; returns
 * EG_OPTS_EXIT_USAGE. */
int eg_opts_usage(const struct eg_opts *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The help rows of a table: "  -c, --name ARG   help (repeatable)". */
void eg_opts_help_rows(FILE *f, const struct eg_opt *table);
/* The rows every command gets: --help and --version, and -v/--verbose
 * where the program set a verbose hook. */
void eg_opts_help_std(FILE *f);

/* A program whose library can say more (libbpf's messages) sets fn: every
 * command of it then takes -v/--verbose anywhere, calls fn for it and
 * lists it with --help. */
void eg_opts_verbose(void (*fn)(void));

/* "PROG VERSION" on stdout. */
void eg_opts_print_version(const char *prog);

/* argv[1] of a program with commands (execgate, execgate-issue), after any
 * leading -v/--verbose (taken out of argv, *argc less): -1 when it
 * is a command word for the caller to dispatch; else the exit code, after
 * printing the usage (none given: to stderr, exit 2; -h/--help/help:
 * stdout, 0), the version (-V/--version) or a one-line error (any other
 * "-..." is an unknown option). */
int eg_opts_top(const char *prog, int *argc, char **argv, void (*usage)(FILE *f));

#endif
