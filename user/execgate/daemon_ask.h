/* SPDX-License-Identifier: Apache-2.0 */
/* What a read-only command does beside execgated: the pins of a pin dir
 * are root's (0700 on bpffs), so a user of the admit group cannot read
 * them while the daemon serving them answers on its socket; and the
 * daemon reads the events ring, which has one position, so a second
 * reader takes events from it. The commands ask the daemon which of
 * these holds and say so, never "not loaded". */
#ifndef EXECGATE_CLI_DAEMON_ASK_H
#define EXECGATE_CLI_DAEMON_ASK_H

#include <stdbool.h>
#include <stddef.h>
#include "frontend/opts.h"
#include "frontend/unix_get.h"

/* The --socket row of a command that asks the daemon. */
#define EG_CLI_SOCKET_OPT(what)                                                                    \
	EG_OPT("socket", "PATH",                                                                   \
	       "execgated's API socket (default " EG_DAEMON_DEFAULT_SOCKET "): " what)

/* Whether a and b name one directory: by inode, or, where either cannot
 * be looked at (permission denied), by the path itself. */
bool eg_cli_same_pin_dir(const char *a, const char *b);

/* The daemon at sock, asked GET /v1/status: 1 when it serves pin_dir
 * (*loaded: whether something is loaded there), 0 when nobody answers or
 * it serves another pin dir; what it answered in said (for a message). */
int eg_cli_daemon_serves(const char *sock, const char *pin_dir, bool *loaded, char *said,
			 size_t said_size);

/* -1 when this process may read the pins of pin_dir (or they are not
 * there); else, after one line naming the pin dir and what the daemon at
 * sock answers ("permission denied on PIN_DIR; the daemon at SOCKET
 * answers: loaded"), EG_EXIT_NO_ACCESS. */
int eg_cli_pins_denied(const char *pin_dir, const char *sock);

#endif
