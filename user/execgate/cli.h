/* SPDX-License-Identifier: Apache-2.0 */
/* What every loader subcommand shares: --pin-dir / --state-dir, errno to
 * exit code, one-line errors, and a minimal JSON writer. */
#ifndef EXECGATE_CLI_CLI_H
#define EXECGATE_CLI_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "execgate/abi.h"
#include "loader/runtime.h"

struct eg_cli_dirs {
	const char *pin_dir;
	const char *state_dir;
};

void eg_cli_dirs_init(struct eg_cli_dirs *d);
/* Handles --pin-dir / --state-dir; returns true when name was one. */
bool eg_cli_dirs_opt(struct eg_cli_dirs *d, const char *name, const char *value);

/* The struct option entries of --pin-dir and --state-dir. */
/* clang-format off */
#define EG_CLI_DIRS_LONG_OPTS                                                                      \
	{"pin-dir", required_argument, NULL, 0},                                                   \
	{"state-dir", required_argument, NULL, 0}
/* clang-format on */

/* getopt_long over long-only opts (val 0) that handles --pin-dir and
 * --state-dir itself: returns 0 with *name (and optarg) for any other
 * option, else what getopt_long returned (-1 at the end, '?' on a bad one).
 * The caller sets optind = 1 before the first call. */
int eg_cli_getopt(int argc, char **argv, const struct option *opts, struct eg_cli_dirs *d,
		  const char **name);

/* eg_runtime_open (locked), after eg_proc_check_namespaces when check_ns;
 * prints the error. 0 or the negative errno. */
int eg_cli_runtime_open(struct eg_runtime *rt, const struct eg_cli_dirs *d, bool check_ns);

/* "execgate: <msg>\n" on stderr. */
void eg_cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Negative errno of a failed operation -> enum eg_exit. */
int eg_cli_exit_for(int rc);

/* UUID, hex and process identity text forms. */
const char *eg_cli_uuid(const __u8 *id, char *buf);
void eg_cli_print_proc(FILE *f, const struct eg_proc_id *p);

/* JSON: strings escaped per RFC 8259. */
void eg_json_str(FILE *f, const char *s);
void eg_json_strn(FILE *f, const char *s, size_t max);
void eg_json_proc(FILE *f, const struct eg_proc_id *p);

/* Tiers, programs, guarantees; with full also counters and map fill
 * (`execgate status`). */
int eg_cli_report(const struct eg_cli_dirs *dirs, bool json, bool full);

/* argv helpers for getopt_long-based commands. */
int eg_parse_pid(const char *s, int *pid);

#endif
