/* SPDX-License-Identifier: Apache-2.0 */
/* A BPF ring buffer read one record at a time, for eg_worker_events_next
 * (lib/events.c). libbpf's ring_buffer__poll hands over everything
 * pending, and a callback that stops early still has its record consumed;
 * a caller that takes one denial (`execgate events --count N` prints
 * exactly N) must leave the next one in the ring for the next reader.
 * Internal to the library. */
#ifndef EXECGATE_LIB_RING_H
#define EXECGATE_LIB_RING_H

#include <stddef.h>

struct eg_ring {
	int map_fd, epoll_fd;
	unsigned long *consumer_pos;
	const unsigned long *producer_pos;
	const char *data;
	size_t mask, page, prod_len;
};

/* 0 or a negative errno; map_fd stays the caller's. */
int eg_ring_open(struct eg_ring *r, int map_fd);
void eg_ring_close(struct eg_ring *r);
/* Hands the next record to fn and consumes it: 1, or 0 when none is
 * ready. */
int eg_ring_next(struct eg_ring *r, void (*fn)(void *ctx, const void *data, size_t size),
		 void *ctx);
/* Waits up to timeout_ms for data: 0, or -EINTR. */
int eg_ring_wait(struct eg_ring *r, int timeout_ms);

#endif
