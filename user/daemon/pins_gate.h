/* SPDX-License-Identifier: Apache-2.0 */
/* Requests that answer from the pinned maps pass through here first: after
 * `execgate unload` they get 503 with the reason, after a new `execgate load`
 * they are answered from the new maps (the worker handle reopens them,
 * execgate.h, "Reloads"). Changes are logged once each. */
#ifndef EXECGATE_DAEMON_PINS_GATE_H
#define EXECGATE_DAEMON_PINS_GATE_H

#include <stdbool.h>
#include "daemon/http.h"

/* true when the request may go on to its handler; false after replying
 * 503 (*replied is the reply). needs_maps is the route's mark in the route
 * table (http.c, routes[]): a route without it always goes on. */
bool egd_pins_gate(struct egd_call *c, bool needs_maps, enum MHD_Result *replied);

/* Checks the pins without a request (the events thread, once a second) and
 * logs a change. Returns the handle's pins generation, or 0 with *gone set
 * while nothing is loaded. */
uint64_t egd_pins_poll(struct egd *d, bool *gone);

#endif
