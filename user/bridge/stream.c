// SPDX-License-Identifier: Apache-2.0
/* One client of the bridge: check the client's grant, open a verified
 * connection to the VMM socket (hybrid VSOCK handshake included), then
 * forward bytes both ways until either side ends, the lease is revoked
 * (the record's epoch moved or the sandbox was retired) or the bridge
 * stops. Not one client byte is read before the VMM side is verified, so
 * nothing of the client's can reach a listener that failed the check. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include "execgate/text.h"
#include "bridge/bridge.h"

#define EGB_BUF 65536

static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t streams_done = PTHREAD_COND_INITIALIZER;
static unsigned streams_running;

struct stream {
	struct egb *b;
	unsigned long id;
	int client;
	struct eg_conn *vmm;
};

/* One direction: bytes read from `from`, not yet written to `to`. */
struct pipe_dir {
	int from, to;
	char buf[EGB_BUF];
	size_t len, off;
	bool eof;  /* `from` ended */
	bool shut; /* EOF passed on: shutdown(to, SHUT_WR) */
	unsigned long long bytes;
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Moves what it can without blocking (poll said which side is ready; a
 * send that would block is tried again on POLLOUT). -1 on a socket error
 * (errno set). */
static int pump(struct pipe_dir *d, short rev_from)
{
	ssize_t n;

	if (d->len == d->off && !d->eof && (rev_from & (POLLIN | POLLHUP | POLLERR))) {
		n = recv(d->from, d->buf, sizeof(d->buf), MSG_DONTWAIT);
		if (n > 0) {
			d->len = (size_t)n;
			d->off = 0;
		} else if (n == 0) {
			d->eof = true;
		} else if (errno != EAGAIN && errno != EINTR) {
			return -1;
		}
	}
	if (d->len > d->off) {
		n = send(d->to, d->buf + d->off, d->len - d->off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			d->off += (size_t)n;
			d->bytes += (unsigned long long)n;
		} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			return -1;
		}
	}
	if (d->eof && d->len == d->off && !d->shut) {
		shutdown(d->to, SHUT_WR);
		d->shut = true;
	}
	return 0;
}

/* The lease failed (why says how). In audit, the sandbox's mode as the hooks
 * read it, a stream lease reports and keeps the stream (docs/design.md,
 * "Modes: enforce and audit"): logged once, true. Enforce, or a mode that
 * cannot be read: false, and the caller cuts. A switch to enforce is seen
 * at the next check. */
static bool lease_audited(struct stream *s, const char *why, bool *reported)
{
	char mode[8], err[EG_ERR_MAX];

	if (eg_worker_mode(s->b->w, s->b->sandbox, mode, sizeof(mode), err, sizeof(err))) {
		egb_log("connection %lu: %s; cutting it as in enforce", s->id, err);
		return false;
	}
	if (strcmp(mode, "audit"))
		return false;
	if (!*reported)
		egb_log("connection %lu: would be revoked (audit, not enforced): %s", s->id, why);
	*reported = true;
	return true;
}

/* The client check failed (why says how). The kernel let this client
 * reach the bridge socket; in audit, the sandbox's mode as the hooks read
 * it, it decided exactly as in enforce and allowed, and so does the bridge:
 * it reports what it would have refused, and why, and forwards. Enforce,
 * or a mode that cannot be read: false, and the caller refuses. */
static bool client_audited(struct stream *s, const char *why)
{
	char mode[8], err[EG_ERR_MAX];

	if (eg_worker_mode(s->b->w, s->b->sandbox, mode, sizeof(mode), err, sizeof(err))) {
		egb_log("connection %lu: %s; refusing it as in enforce", s->id, err);
		return false;
	}
	if (strcmp(mode, "audit"))
		return false;
	egb_log("connection %lu: would refuse (audit, not enforced): %s", s->id, why);
	return true;
}

static void forward(struct stream *s)
{
	struct pipe_dir *up = calloc(1, sizeof(*up)), *down = calloc(1, sizeof(*down));
	int vfd = eg_conn_fd(s->vmm);
	long long next_check = now_ms() + EGB_LEASE_CHECK_MS;
	char err[EG_ERR_MAX];
	const char *end = "closed";
	bool audit_reported = false;

	if (!up || !down) {
		egb_log("connection %lu: closed: out of memory", s->id);
		goto cleanup;
	}
	up->from = down->to = s->client;
	up->to = down->from = vfd;
	while (!(up->shut && down->shut)) {
		struct pollfd p[2] = {{.fd = s->client}, {.fd = vfd}};
		long long left = next_check - now_ms();
		int n;

		if (egb_stop) {
			end = "closed: the bridge is stopping";
			break;
		}
		/* Read a side only when its buffer is empty; wait for room to
		 * write when it is not (no busy loop either way). */
		if (!up->eof && up->len == up->off)
			p[0].events |= POLLIN;
		if (!down->eof && down->len == down->off)
			p[1].events |= POLLIN;
		if (up->len > up->off)
			p[1].events |= POLLOUT;
		if (down->len > down->off)
			p[0].events |= POLLOUT;
		/* Nothing wanted from a side: leave it out, or a peer that hung
		 * up would wake poll (POLLHUP) again and again. */
		for (int i = 0; i < 2; i++)
			if (!p[i].events)
				p[i].fd = -1;
		n = poll(p, 2, left > 0 ? (int)left : 0);
		if (n < 0 && errno != EINTR) {
			end = "closed: poll failed";
			break;
		}
		if (now_ms() >= next_check) {
			if (eg_conn_lease_check(s->b->w, s->vmm, err, sizeof(err)) &&
			    !lease_audited(s, err, &audit_reported)) {
				egb_log("connection %lu: revoked: %s", s->id, err);
				end = NULL;
				break;
			}
			next_check = now_ms() + EGB_LEASE_CHECK_MS;
		}
		if (n <= 0)
			continue;
		if (pump(up, p[0].revents) || pump(down, p[1].revents)) {
			egb_log(
			    "connection %lu: closed: %s (client->vmm %llu bytes, vmm->client %llu "
			    "bytes)",
			    s->id, strerror(errno), up->bytes, down->bytes);
			end = NULL;
			break;
		}
	}
	if (end)
		egb_log("connection %lu: %s (client->vmm %llu bytes, vmm->client %llu bytes)",
			s->id, end, up->bytes, down->bytes);
cleanup:
	/* Both sides, now: a revoked stream's I/O stops here, whatever the
	 * peers still hold. */
	shutdown(s->client, SHUT_RDWR);
	shutdown(vfd, SHUT_RDWR);
	free(up);
	free(down);
}

static void *stream_main(void *arg)
{
	struct stream *s = arg;
	struct egb *b = s->b;
	struct eg_connect_target t = {
	    .role = EG_CONNECT_VMM,
	    .path = b->vmm_path,
	    .hybrid_vsock = true,
	    .vsock_port = b->vsock_port,
	};
	const struct eg_conn_info *info;
	struct eg_process client;
	char err[EG_ERR_MAX], cid[96] = "not verified (audit)", vid[96];
	bool client_ok;

	memcpy(t.sandbox, b->sandbox, EG_ID_BYTES);
	client_ok =
	    !eg_connect_check_client(b->w, b->sandbox, s->client, &client, err, sizeof(err));
	if (!client_ok && !client_audited(s, err)) {
		egb_log("connection %lu: refused: %s", s->id, err);
		goto cleanup;
	}
	if (eg_connect_unix(b->w, &t, &s->vmm, err, sizeof(err))) {
		egb_log("connection %lu: refused: %s", s->id, err);
		goto cleanup;
	}
	info = eg_conn_info(s->vmm);
	if (client_ok)
		eg_process_text(&client, cid, sizeof(cid));
	eg_process_text(&info->peer, vid, sizeof(vid));
	egb_log("connection %lu: verified: client %s, VMM %s via %s, epoch %llu, vsock port %u "
		"(assigned %u)",
		s->id, cid, vid, info->via_peerpidfd ? "SO_PEERPIDFD" : "SO_PEERCRED",
		(unsigned long long)info->record.epoch, b->vsock_port, info->assigned_port);
	forward(s);
cleanup:
	eg_conn_close(s->vmm);
	close(s->client);
	free(s);
	pthread_mutex_lock(&streams_lock);
	if (--streams_running == 0)
		pthread_cond_broadcast(&streams_done);
	pthread_mutex_unlock(&streams_lock);
	return NULL;
}

int egb_stream_start(struct egb *b, int client_fd, unsigned long id)
{
	struct stream *s = calloc(1, sizeof(*s));
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	if (!s) {
		close(client_fd);
		return -ENOMEM;
	}
	s->b = b;
	s->id = id;
	s->client = client_fd;
	pthread_mutex_lock(&streams_lock);
	streams_running++;
	pthread_mutex_unlock(&streams_lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &attr, stream_main, s);
	pthread_attr_destroy(&attr);
	if (rc) {
		pthread_mutex_lock(&streams_lock);
		streams_running--;
		pthread_mutex_unlock(&streams_lock);
		close(client_fd);
		free(s);
		return -rc;
	}
	return 0;
}

void egb_streams_wait(void)
{
	pthread_mutex_lock(&streams_lock);
	while (streams_running)
		pthread_cond_wait(&streams_done, &streams_lock);
	pthread_mutex_unlock(&streams_lock);
}
