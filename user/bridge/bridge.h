/* SPDX-License-Identifier: Apache-2.0 */
/* execgate-bridge: the reference host bridge. main.c parses the command
 * line and accepts clients; stream.c verifies and forwards one client. */
#ifndef EXECGATE_BRIDGE_BRIDGE_H
#define EXECGATE_BRIDGE_BRIDGE_H

#include <signal.h>
#include <stdbool.h>
#include "execgate/connect.h"
#include "execgate/execgate.h"

/* How often a stream re-checks its lease (the record's epoch). */
#define EGB_LEASE_CHECK_MS 100

struct egb {
	struct eg_worker *w;
	uint8_t sandbox[EG_ID_BYTES];
	char sandbox_text[EG_UUID_TEXT_LEN];
	const char *listen_path, *vmm_path;
	uint32_t vsock_port;
};

extern volatile sig_atomic_t egb_stop;

/* One line on stderr: "execgate-bridge: " + fmt. */
void egb_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Starts a thread for an accepted client (fd taken over). 0 or -errno. */
int egb_stream_start(struct egb *b, int client_fd, unsigned long id);
/* Waits until every stream thread has ended (they end on egb_stop). */
void egb_streams_wait(void);

#endif
