/* SPDX-License-Identifier: Apache-2.0 */
/* What the record commands (install, retire, forget, show, list) share. */
#ifndef EXECGATE_CLI_SANDBOX_CMD_H
#define EXECGATE_CLI_SANDBOX_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include "execgate/cli.h"

/* --sandbox UUID [--json]: the one shape of retire, forget and show. */
extern const struct eg_opt eg_cli_sandbox_opts[];

/* Parses that shape and opens the worker: -1 with *w open, else the exit
 * code. writes: the command is retire or forget, which finishes and
 * reports the sandbox's own pending stream cut (eg_cli_worker_open_for). */
int eg_cli_open_sandbox(struct eg_cli_parse *p, const struct eg_cli_cmd *cmd, int argc, char **argv,
			uint8_t sandbox[EG_ID_BYTES], struct eg_worker **w, bool writes);

/* The streams install or retire cut: a text clause, and a warning on
 * stderr when some could not be cut (the JSON member is eg_json_streams).
 * streams_exit: 8 after a failed revocation (the record change stands),
 * else 0. */
void eg_cli_text_streams(const struct eg_stream_cuts *s);
void eg_cli_warn_streams(const uint8_t sandbox[EG_ID_BYTES], const struct eg_stream_cuts *s);
int eg_cli_streams_exit(const struct eg_stream_cuts *s);

/* A record on one line (no newline): list, and show's first line. */
void eg_cli_record_text(const struct eg_runtime_record *r, const struct eg_inet_addr *addrs,
			size_t naddrs);

#endif
