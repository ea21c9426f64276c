/* SPDX-License-Identifier: Apache-2.0 */
/* GET /v1/events: one consumer of the eg_events ring buffer (a ring buffer
 * has one consumer position, so the daemon owns it), fanned out to any
 * number of HTTP readers as newline-delimited JSON.
 *
 * The consumer thread turns each event into one JSON line and appends it to
 * a ring of the newest EGD_EVENTS_KEPT lines; every reader has its own
 * cursor into that ring. A reader with nothing to send suspends its MHD
 * connection (returning 0 from a content reader without suspending makes
 * MHD call it again at once: a busy loop) and the consumer resumes it when
 * a line arrives, and once a second so that a vanished reader is noticed
 * and closed. A reader that falls more than EGD_EVENTS_KEPT lines behind
 * gets one {"kind":"gap"} line saying how many it missed. */
#ifndef EXECGATE_DAEMON_EVENTS_H
#define EXECGATE_DAEMON_EVENTS_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct egd;
struct egd_events;
struct MHD_Connection;
struct MHD_Response;

#define EGD_EVENTS_KEPT 4096

struct egd_events_stats {
	size_t readers;
	uint64_t events, skipped;
	uint64_t refused; /* streams refused: per-uid or total cap */
};

int egd_events_start(struct egd *d, char *err, size_t err_size);
/* Ends every stream and joins the consumer; MHD may be stopped afterwards
 * (no connection stays suspended). */
void egd_events_stop(struct egd *d);
/* Frees what stop left, after MHD has stopped. */
void egd_events_free(struct egd *d);
/* A streaming response for one reader (uid; admin: root or admin_group),
 * starting at the next event. -EUSERS when uid holds
 * max_event_streams_per_uid streams already, -EBUSY when a caller that is
 * not admin would pass max_event_streams, -ENOMEM. */
int egd_events_response(struct egd *d, struct MHD_Connection *conn, uid_t uid, bool admin,
			struct MHD_Response **out);
void egd_events_stats(struct egd_events *ev, struct egd_events_stats *out);

#endif
