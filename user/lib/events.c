// SPDX-License-Identifier: Apache-2.0
/* eg_worker_events_next (execgate.h): the handle's one reader of the
 * eg_events ring buffer, one record per call, and the record as a struct
 * eg_denial (lib/events.h). The reader is libbpf's ring_buffer: its
 * callback returning an error stops the consume after that record, with
 * the record consumed and the next left in the ring for the next call
 * (`execgate events --count N` prints exactly N and loses none). */
#include <errno.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <bpf/libbpf.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "abi/abi.h"
#include "lib/events.h"
#include "lib/worker.h"
#include "loader/maps/maps.h"

static int64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int eg_denial_of(const void *record, size_t size, struct eg_denial *out)
{
	struct eg_event e;

	if (size < sizeof(e))
		return -EINVAL;
	/* The ring's data area is only 8-byte aligned per record: copy. */
	memcpy(&e, record, sizeof(e));
	memset(out, 0, sizeof(*out));
	out->boottime_ns = e.ts_ns;
	out->realtime_ns = (int64_t)e.ts_ns + clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_BOOTTIME);
	out->pid = e.pid;
	out->tid = e.tid;
	_Static_assert(sizeof(out->comm) == sizeof(e.comm) + 1, "comm: TASK_COMM_LEN and a NUL");
	memcpy(out->comm, e.comm, sizeof(e.comm));
	out->reason = e.reason;
	out->hook = e.hook;
	out->audit = e.flags & EG_EVENT_AUDIT;
	memcpy(out->sandbox, e.sandbox, sizeof(out->sandbox));
	out->epoch = e.epoch;
	/* The hooks fill one destination and leave the others zero. */
	if (e.path[0]) {
		out->dest = EG_DENIAL_DEST_UNIX;
		_Static_assert(sizeof(out->path) == sizeof(e.path) + 1,
			       "path: 108 bytes and a NUL");
		memcpy(out->path, e.path, sizeof(e.path));
	} else if (e.inet.family) {
		out->dest = EG_DENIAL_DEST_INET;
		out->inet.family = e.inet.family;
		memcpy(out->inet.addr, e.inet.addr, sizeof(out->inet.addr));
		out->inet_port = e.inet_port;
		out->inet_proto = e.inet_proto;
	} else if (e.vsock.cid || e.vsock.port) {
		out->dest = EG_DENIAL_DEST_VSOCK;
		out->vsock.cid = e.vsock.cid;
		out->vsock.port = e.vsock.port;
	}
	return 0;
}

void eg_wk_events_close(struct eg_worker *w)
{
	if (w->events_fd < 0)
		return;
	ring_buffer__free(w->events_ring);
	w->events_ring = NULL;
	close(w->events_fd);
	w->events_fd = -1;
}

/* What take_one returns once it has a denial: stops libbpf's consume
 * after this record. Never an errno libbpf returns of its own. */
#define TAKEN (-ECANCELED)

/* libbpf's sample callback (ctx: the handle, its events_out set by the
 * caller under events_lock). A record shorter than an event (none is) is
 * consumed and skipped: it would block the ring for every later one. */
static int take_one(void *ctx, void *data, size_t size)
{
	struct eg_worker *w = ctx;

	return eg_denial_of(data, size, w->events_out) ? 0 : TAKEN;
}

/* Caller holds events_lock. Points the reader at the ring the handle holds
 * now: after an unload and a new load that is another map. */
static int events_follow(struct eg_worker *w)
{
	char err[EG_ERR_MAX];
	uint64_t gen;
	int rc, fd;

	rc = eg_wk_maps_enter(w, err, sizeof(err));
	if (rc) {
		eg_wk_events_close(w); /* the old map goes once nothing holds it */
		return rc;
	}
	gen = atomic_load(&w->pins_generation);
	if (w->events_fd >= 0 && gen == w->events_generation) {
		eg_wk_maps_exit(w);
		return 0;
	}
	eg_wk_events_close(w);
	/* Its own fd: the wait below runs without the maps held, and a
	 * reopen by another thread closes the handle's. */
	fd = fcntl(w->rt.maps.fd[EG_MAP_EVENTS], F_DUPFD_CLOEXEC, 0);
	eg_wk_maps_exit(w);
	if (fd < 0)
		return -errno;
	w->events_ring = ring_buffer__new(fd, take_one, w, NULL);
	if (!w->events_ring) {
		rc = -errno;
		close(fd);
		return rc ? rc : -ENOMEM;
	}
	w->events_fd = fd;
	w->events_generation = gen;
	return 0;
}

int eg_worker_events_next(struct eg_worker *w, struct eg_denial *out, int timeout_ms)
{
	int64_t deadline = clock_ns(CLOCK_MONOTONIC) + (int64_t)timeout_ms * 1000000LL;
	struct epoll_event ev;
	int rc, wait_ms = timeout_ms;

	pthread_mutex_lock(&w->events_lock);
	w->events_out = out;
	for (;;) {
		rc = events_follow(w);
		if (rc)
			break;
		rc = ring_buffer__consume(w->events_ring);
		if (rc == TAKEN) {
			rc = 1;
			break;
		}
		if (rc < 0)
			break;
		if (timeout_ms >= 0) {
			int64_t left = deadline - clock_ns(CLOCK_MONOTONIC);

			if (timeout_ms == 0 || left <= 0) {
				rc = 0;
				break;
			}
			wait_ms = (int)((left + 999999) / 1000000);
		}
		if (epoll_wait(ring_buffer__epoll_fd(w->events_ring), &ev, 1, wait_ms) < 0) {
			rc = -errno;
			break;
		}
	}
	w->events_out = NULL;
	pthread_mutex_unlock(&w->events_lock);
	return rc;
}
