/* SPDX-License-Identifier: Apache-2.0 */
/* What every loader subcommand shares: --pin-dir / --state-dir, errno to
 * exit code, one-line errors, and a minimal JSON writer. */
#ifndef EXECGATE_CLI_CLI_H
#define EXECGATE_CLI_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "execgate/abi.h"

struct eg_cli_dirs {
	const char *pin_dir;
	const char *state_dir;
};

void eg_cli_dirs_init(struct eg_cli_dirs *d);
/* Handles --pin-dir / --state-dir; returns true when name was one. */
bool eg_cli_dirs_opt(struct eg_cli_dirs *d, const char *name, const char *value);

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
