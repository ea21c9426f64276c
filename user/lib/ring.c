// SPDX-License-Identifier: Apache-2.0
/* The BPF ring buffer's memory layout (kernel/bpf/ringbuf.c): page 0 holds
 * the consumer position (writable), page 1 the producer position, then the
 * data area, mapped twice in a row so a record never wraps. Each record
 * starts with an 8-byte header: length (with BUSY and DISCARD bits) and a
 * page offset. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include "lib/ring.h"

#define RB_BUSY	   (1U << 31)
#define RB_DISCARD (1U << 30)
#define RB_HDR	   8

int eg_ring_open(struct eg_ring *r, int map_fd)
{
	struct bpf_map_info info;
	uint32_t len = sizeof(info);
	struct epoll_event ev = {.events = EPOLLIN};
	void *p;
	int rc;

	memset(r, 0, sizeof(*r));
	r->epoll_fd = -1;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(map_fd, &info, &len))
		return -errno;
	if (info.type != BPF_MAP_TYPE_RINGBUF)
		return -EINVAL;
	r->map_fd = map_fd;
	r->page = (size_t)sysconf(_SC_PAGESIZE);
	r->mask = info.max_entries - 1;
	p = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	r->consumer_pos = p;
	r->prod_len = r->page + 2 * (size_t)info.max_entries;
	p = mmap(NULL, r->prod_len, PROT_READ, MAP_SHARED, map_fd, (off_t)r->page);
	if (p == MAP_FAILED) {
		rc = -errno;
		goto fail;
	}
	r->producer_pos = p;
	r->data = (const char *)p + r->page;
	r->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (r->epoll_fd < 0 || epoll_ctl(r->epoll_fd, EPOLL_CTL_ADD, map_fd, &ev)) {
		rc = -errno;
		goto fail;
	}
	return 0;
fail:
	eg_ring_close(r);
	return rc;
}

void eg_ring_close(struct eg_ring *r)
{
	if (r->consumer_pos)
		munmap(r->consumer_pos, r->page);
	if (r->producer_pos)
		munmap((void *)r->producer_pos, r->prod_len);
	if (r->epoll_fd >= 0)
		close(r->epoll_fd);
	memset(r, 0, sizeof(*r));
	r->epoll_fd = -1;
}

int eg_ring_next(struct eg_ring *r, void (*fn)(void *ctx, const void *data, size_t size), void *ctx)
{
	unsigned long cons, prod;
	uint32_t len;

	for (;;) {
		cons = __atomic_load_n(r->consumer_pos, __ATOMIC_ACQUIRE);
		prod = __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE);
		if (cons >= prod)
			return 0;
		len = __atomic_load_n((const uint32_t *)(r->data + (cons & r->mask)),
				      __ATOMIC_ACQUIRE);
		if (len & RB_BUSY)
			return 0; /* reserved, not yet committed */
		if (!(len & RB_DISCARD))
			fn(ctx, r->data + (cons & r->mask) + RB_HDR, len & ~(RB_BUSY | RB_DISCARD));
		cons += ((len & ~(RB_BUSY | RB_DISCARD)) + RB_HDR + 7) & ~7UL;
		__atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
		if (!(len & RB_DISCARD))
			return 1;
	}
}

int eg_ring_wait(struct eg_ring *r, int timeout_ms)
{
	struct epoll_event ev;

	if (epoll_wait(r->epoll_fd, &ev, 1, timeout_ms) < 0)
		return -errno;
	return 0;
}
