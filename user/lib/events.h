/* SPDX-License-Identifier: Apache-2.0 */
/* A record of the eg_events ring buffer (struct eg_event, bpf/abi/abi.h)
 * as the library hands it out (struct eg_denial, execgate.h): the one
 * place the ring's layout becomes the public type, for
 * eg_worker_events_next and eg_audit_add. Internal to the library. */
#ifndef EXECGATE_LIB_EVENTS_H
#define EXECGATE_LIB_EVENTS_H

#include <stddef.h>
#include "execgate/execgate.h"

/* 0 with *out, or -EINVAL when record is shorter than the kernel's event.
 * realtime_ns is boottime_ns moved by the clocks' offset now. */
int eg_denial_of(const void *record, size_t size, struct eg_denial *out);

#endif
