// SPDX-License-Identifier: Apache-2.0
/* The denial consumer (eg_worker_events_next) and its fan-out (events.h
 * says how). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include <microhttpd.h>
#include <execgate/admin.h>
#include "execgate/text.h"
#include "daemon/daemon.h"
#include "daemon/events.h"
#include "daemon/log.h"
#include "daemon/pins_gate.h"
#include "lib/json.h"

struct egd_reader {
	struct egd_reader *prev, *next;
	struct egd_events *ev;
	struct MHD_Connection *conn;
	uid_t uid;
	bool admin;   /* not counted in nlimited */
	uint64_t seq; /* next line to send */
	size_t off;   /* bytes of line seq already sent */
	bool suspended;
};

struct egd_events {
	struct egd *d;
	pthread_t thread;
	bool thread_started;
	pthread_mutex_t mu;
	char *lines[EGD_EVENTS_KEPT]; /* line seq lives at seq % EGD_EVENTS_KEPT */
	size_t lens[EGD_EVENTS_KEPT];
	uint64_t head; /* seq of the next line */
	struct egd_reader readers;
	size_t nreaders;
	size_t nlimited; /* readers that are not root or admin_group */
	uint64_t refused;
	uint64_t skipped;
	bool stopping;
	atomic_bool stop_thread;
};

static int64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static char *event_line(struct egd_events *ev, const struct eg_denial *e, size_t *len)
{
	char *text, *line;
	json_t *o;

	o = eg_json_event(e, ev->d->cfg.worker_id_text);
	if (!o)
		return NULL;
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!text)
		return NULL;
	*len = strlen(text) + 1;
	line = realloc(text, *len + 1);
	if (!line) {
		free(text);
		return NULL;
	}
	line[*len - 1] = '\n';
	line[*len] = '\0';
	return line;
}

/* Caller holds mu. */
static void resume_all(struct egd_events *ev)
{
	for (struct egd_reader *r = ev->readers.next; r != &ev->readers; r = r->next)
		if (r->suspended) {
			r->suspended = false;
			MHD_resume_connection(r->conn);
		}
}

static void on_denial(struct egd_events *ev, const struct eg_denial *e)
{
	size_t len, slot;
	char *line;

	/* before the line: an event whose line cannot be made still counts */
	eg_audit_add_denial(ev->d->audit, e);
	line = event_line(ev, e, &len);
	if (!line)
		return;
	pthread_mutex_lock(&ev->mu);
	slot = ev->head % EGD_EVENTS_KEPT;
	free(ev->lines[slot]);
	ev->lines[slot] = line;
	ev->lens[slot] = len;
	ev->head++;
	pthread_mutex_unlock(&ev->mu);
}

static void *consumer(void *arg)
{
	struct egd_events *ev = arg;
	int64_t next_check = 0;
	struct eg_denial e;
	bool gone = false;

	while (!atomic_load(&ev->stop_thread)) {
		/* Up to a second per wait, so that stop_thread is seen. */
		int n = gone ? (poll(NULL, 0, 1000), 0)
			     : eg_worker_events_next(ev->d->worker, &e, 1000);
		int64_t now;

		if (n == 1) {
			on_denial(ev, &e);
		} else if (n == -ENOLINK) {
			gone = true; /* nothing loaded: wait for a load (below) */
		} else if (n < 0 && n != -EINTR) {
			egd_log(EGD_LOG_ERR, "events: ring buffer: %s", strerror(-n));
			poll(NULL, 0, 1000); /* a fault that stays: one line a second */
		}
		/* Resume on news, and at least once a second even without:
		 * a resumed stream whose client is gone gets closed by MHD. */
		pthread_mutex_lock(&ev->mu);
		resume_all(ev);
		pthread_mutex_unlock(&ev->mu);
		/* Once a second, not per event: a storm of events must not pay
		 * for a check each time. */
		now = clock_ns(CLOCK_MONOTONIC);
		if (now >= next_check) {
			next_check = now + 1000000000LL;
			egd_pins_poll(ev->d, &gone);
		}
	}
	return NULL;
}

int egd_events_start(struct egd *d, char *err, size_t err_size)
{
	struct egd_events *ev = calloc(1, sizeof(*ev));
	int rc;

	if (!ev)
		return -ENOMEM;
	ev->d = d;
	pthread_mutex_init(&ev->mu, NULL);
	ev->readers.next = ev->readers.prev = &ev->readers;
	d->events = ev;
	/* The ring must open at start (the consumer's own reads come from
	 * eg_worker_events_next): a fault shows here, not in the journal
	 * later. */
	rc = eg_worker_events_open(d->worker, NULL, err, err_size);
	if (rc < 0)
		return rc;
	close(rc);
	rc = -pthread_create(&ev->thread, NULL, consumer, ev);
	if (rc) {
		snprintf(err, err_size, "events: consumer thread: %s", strerror(-rc));
		return rc;
	}
	ev->thread_started = true;
	return 0;
}

void egd_events_stop(struct egd *d)
{
	struct egd_events *ev = d->events;

	if (!ev)
		return;
	pthread_mutex_lock(&ev->mu);
	ev->stopping = true;
	resume_all(ev);
	pthread_mutex_unlock(&ev->mu);
	atomic_store(&ev->stop_thread, true);
	if (ev->thread_started)
		pthread_join(ev->thread, NULL);
}

/* After MHD has stopped (no reader left). */
static void events_free(struct egd_events *ev)
{
	for (size_t i = 0; i < EGD_EVENTS_KEPT; i++)
		free(ev->lines[i]);
	pthread_mutex_destroy(&ev->mu);
	free(ev);
}

void egd_events_free(struct egd *d)
{
	if (d->events)
		events_free(d->events);
	d->events = NULL;
}

static bool peer_gone(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct pollfd pfd;

	if (!ci)
		return false;
	pfd.fd = ci->connect_fd;
	pfd.events = POLLRDHUP;
	pfd.revents = 0;
	return poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

static ssize_t reader_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct egd_reader *r = cls;
	struct egd_events *ev = r->ev;
	size_t used = 0;

	(void)pos;
	pthread_mutex_lock(&ev->mu);
	if (ev->stopping) {
		pthread_mutex_unlock(&ev->mu);
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	if (ev->head > EGD_EVENTS_KEPT && r->seq < ev->head - EGD_EVENTS_KEPT) {
		uint64_t missed = ev->head - EGD_EVENTS_KEPT - r->seq;
		int n = snprintf(buf, max,
				 "{\"schema_version\":%d,\"kind\":\"gap\",\"worker_id\":\"%s\","
				 "\"missed\":%llu}\n",
				 EG_JSON_SCHEMA_VERSION, ev->d->cfg.worker_id_text,
				 (unsigned long long)missed);

		if (n < 0 || (size_t)n >= max) {
			pthread_mutex_unlock(&ev->mu);
			return 0; /* MHD offers a bigger buffer next time */
		}
		used = (size_t)n;
		ev->skipped += missed;
		r->seq = ev->head - EGD_EVENTS_KEPT;
		r->off = 0;
	}
	while (r->seq < ev->head && used < max) {
		size_t slot = r->seq % EGD_EVENTS_KEPT, n = ev->lens[slot] - r->off;

		if (n > max - used)
			n = max - used;
		memcpy(buf + used, ev->lines[slot] + r->off, n);
		used += n;
		r->off += n;
		if (r->off == ev->lens[slot]) {
			r->seq++;
			r->off = 0;
		}
	}
	if (!used && peer_gone(r->conn)) {
		/* MHD does not watch a suspended socket, and a quiet stream
		 * never writes: look for the hang-up here, on every resume. */
		pthread_mutex_unlock(&ev->mu);
		return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	if (!used) {
		/* Suspended under mu, so the consumer's resume (also under mu)
		 * can only come after it. */
		r->suspended = true;
		MHD_suspend_connection(r->conn);
	}
	pthread_mutex_unlock(&ev->mu);
	return (ssize_t)used;
}

static void reader_free(void *cls)
{
	struct egd_reader *r = cls;
	struct egd_events *ev = r->ev;

	pthread_mutex_lock(&ev->mu);
	r->prev->next = r->next;
	r->next->prev = r->prev;
	ev->nreaders--;
	if (!r->admin)
		ev->nlimited--;
	pthread_mutex_unlock(&ev->mu);
	free(r);
}

/* Caller holds mu. */
static size_t streams_of(struct egd_events *ev, uid_t uid)
{
	size_t n = 0;

	for (struct egd_reader *r = ev->readers.next; r != &ev->readers; r = r->next)
		n += r->uid == uid;
	return n;
}

int egd_events_response(struct egd *d, struct MHD_Connection *conn, uid_t uid, bool admin,
			struct MHD_Response **out)
{
	struct egd_events *ev = d->events;
	struct MHD_Response *resp;
	struct egd_reader *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->ev = ev;
	r->conn = conn;
	r->uid = uid;
	r->admin = admin;
	pthread_mutex_lock(&ev->mu);
	/* A stream holds its connection for as long as the client likes,
	 * outside the reaper's reach: their number is bounded, per uid and,
	 * for callers other than root and admin_group, in all. */
	if (streams_of(ev, uid) >= d->cfg.max_event_streams_per_uid ||
	    (!admin && ev->nlimited >= d->cfg.max_event_streams)) {
		int rc = streams_of(ev, uid) >= d->cfg.max_event_streams_per_uid ? -EUSERS : -EBUSY;

		ev->refused++;
		pthread_mutex_unlock(&ev->mu);
		free(r);
		return rc;
	}
	if (!admin)
		ev->nlimited++;
	r->seq = ev->head;
	r->next = &ev->readers;
	r->prev = ev->readers.prev;
	ev->readers.prev->next = r;
	ev->readers.prev = r;
	ev->nreaders++;
	pthread_mutex_unlock(&ev->mu);
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, reader_cb, r, reader_free);
	if (!resp) {
		reader_free(r);
		return -ENOMEM;
	}
	*out = resp;
	return 0;
}

void egd_events_stats(struct egd_events *ev, struct egd_events_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!ev)
		return;
	pthread_mutex_lock(&ev->mu);
	out->readers = ev->nreaders;
	out->refused = ev->refused;
	out->events = ev->head;
	out->skipped = ev->skipped;
	pthread_mutex_unlock(&ev->mu);
}
