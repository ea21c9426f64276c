// SPDX-License-Identifier: Apache-2.0
/* The ring-buffer consumer and its fan-out (events.h says how). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/libbpf.h>
#include <jansson.h>
#include <microhttpd.h>
#include "core/ids.h"
#include "daemon/daemon.h"
#include "daemon/events.h"
#include "daemon/log.h"
#include "loader/inet.h"
#include "loader/kreason.h"

struct egd_reader {
	struct egd_reader *prev, *next;
	struct egd_events *ev;
	struct MHD_Connection *conn;
	uint64_t seq; /* next line to send */
	size_t off;   /* bytes of line seq already sent */
	bool suspended;
};

struct egd_events {
	struct egd *d;
	pthread_t thread;
	bool thread_started;
	struct ring_buffer *rb;
	pthread_mutex_t mu;
	char *lines[EGD_EVENTS_KEPT]; /* line seq lives at seq % EGD_EVENTS_KEPT */
	size_t lens[EGD_EVENTS_KEPT];
	uint64_t head; /* seq of the next line */
	struct egd_reader readers;
	size_t nreaders;
	uint64_t skipped;
	bool stopping;
	atomic_bool stop_thread;
	int64_t boot_to_real_ns; /* CLOCK_REALTIME - CLOCK_BOOTTIME */
};

static int64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Bytes from the kernel (comm, a socket path) as printable text: anything
 * outside printable ASCII becomes \xNN, so a path cannot forge a line. */
static json_t *safe_string(const char *s, size_t max)
{
	char buf[4 * 128 + 1];
	size_t o = 0;

	for (size_t i = 0; i < max && s[i] && o + 5 < sizeof(buf); i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, "\\x%02x", c);
	}
	buf[o] = '\0';
	return json_string(buf);
}

static void rfc3339(int64_t ns, char out[64])
{
	time_t secs = (time_t)(ns / 1000000000LL);
	struct tm tm;

	gmtime_r(&secs, &tm);
	snprintf(out, 64, "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (long long)((uint64_t)ns % 1000000000ULL));
}

static char *event_line(struct egd_events *ev, const struct eg_event *e, size_t *len)
{
	int64_t wall = (int64_t)e->ts_ns + ev->boot_to_real_ns;
	char when[64], uuid[EG_UUID_TEXT_LEN], *text, *line;
	json_t *o;

	rfc3339(wall, when);
	eg_uuid_format(e->sandbox, uuid);
	o = json_pack("{s:i,s:s,s:s,s:I,s:s,s:s,s:s,s:i,s:i,s:o,s:s,s:I}", "schema_version", 1,
		      "kind", "denial", "time", when, "time_unix_ns", (json_int_t)wall, "worker_id",
		      ev->d->cfg.worker_id_text, "hook", eg_hook_name(e->hook), "reason",
		      eg_kreason_name(e->reason), "pid", (int)e->pid, "tid", (int)e->tid, "comm",
		      safe_string(e->comm, sizeof(e->comm)), "sandbox", uuid, "epoch",
		      (json_int_t)e->epoch);
	if (!o)
		return NULL;
	if (e->path[0])
		json_object_set_new(o, "path", safe_string(e->path, sizeof(e->path)));
	if (e->vsock.cid || e->vsock.port)
		json_object_set_new(o, "vsock",
				    json_pack("{s:I,s:I}", "cid", (json_int_t)e->vsock.cid, "port",
					      (json_int_t)e->vsock.port));
	if (e->inet.family) {
		char addr[EG_INET_TEXT_MAX];

		json_object_set_new(
		    o, "inet",
		    json_pack("{s:s,s:i,s:s}", "addr", eg_inet_key_format(&e->inet, addr), "port",
			      (int)e->inet_port, "proto", eg_proto_name(e->inet_proto)));
	}
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

static int on_event(void *ctx, void *data, size_t size)
{
	struct egd_events *ev = ctx;
	size_t len, slot;
	char *line;

	if (size < sizeof(struct eg_event))
		return 0;
	line = event_line(ev, data, &len);
	if (!line)
		return 0;
	pthread_mutex_lock(&ev->mu);
	slot = ev->head % EGD_EVENTS_KEPT;
	free(ev->lines[slot]);
	ev->lines[slot] = line;
	ev->lens[slot] = len;
	ev->head++;
	pthread_mutex_unlock(&ev->mu);
	return 0;
}

static void *consumer(void *arg)
{
	struct egd_events *ev = arg;

	while (!atomic_load(&ev->stop_thread)) {
		int n = ring_buffer__poll(ev->rb, 1000);

		if (n < 0 && n != -EINTR) {
			egd_log(EGD_LOG_ERR, "events: ring buffer: %s", strerror(-n));
			break;
		}
		/* Resume on news, and at least once a second even without:
		 * a resumed stream whose client is gone gets closed by MHD. */
		pthread_mutex_lock(&ev->mu);
		resume_all(ev);
		pthread_mutex_unlock(&ev->mu);
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
	ev->boot_to_real_ns = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_BOOTTIME);
	d->events = ev;
	ev->rb = ring_buffer__new(eg_worker_events_fd(d->worker), on_event, ev, NULL);
	if (!ev->rb) {
		rc = -errno;
		snprintf(err, err_size, "events: eg_events ring buffer: %s", strerror(-rc));
		return rc;
	}
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
	ring_buffer__free(ev->rb);
	ev->rb = NULL;
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
				 "{\"schema_version\":1,\"kind\":\"gap\",\"worker_id\":\"%s\","
				 "\"missed\":%llu}\n",
				 ev->d->cfg.worker_id_text, (unsigned long long)missed);

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
	pthread_mutex_unlock(&ev->mu);
	free(r);
}

struct MHD_Response *egd_events_response(struct egd *d, struct MHD_Connection *conn)
{
	struct egd_events *ev = d->events;
	struct MHD_Response *resp;
	struct egd_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->ev = ev;
	r->conn = conn;
	pthread_mutex_lock(&ev->mu);
	r->seq = ev->head;
	r->next = &ev->readers;
	r->prev = ev->readers.prev;
	ev->readers.prev->next = r;
	ev->readers.prev = r;
	ev->nreaders++;
	pthread_mutex_unlock(&ev->mu);
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, reader_cb, r, reader_free);
	if (!resp)
		reader_free(r);
	return resp;
}

void egd_events_stats(struct egd_events *ev, struct egd_events_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!ev)
		return;
	pthread_mutex_lock(&ev->mu);
	out->readers = ev->nreaders;
	out->events = ev->head;
	out->skipped = ev->skipped;
	pthread_mutex_unlock(&ev->mu);
}
