// SPDX-License-Identifier: Apache-2.0
/* eg_connect_unix: a Unix connection whose listener was verified against
 * the runtime record before the first byte is sent (docs/design.md §9). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "core/ids.h"
#include "core/peer_check.h"
#include "core/vsock_handshake.h"
#include "lib/connect_int.h"
#include "loader/maps/maps.h"
#include "loader/endpoints/path_filter.h"
#include "loader/maps/view.h"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The path must be installed as an endpoint of this sandbox in this role:
 * a bridge told the wrong --vmm-socket is refused before it connects. */
static int endpoint_check(struct eg_worker *w, const struct eg_connect_target *t,
			  const struct eg_path_key *key, const char *what, char *err,
			  size_t err_size)
{
	char s[EG_UUID_TEXT_LEN], o[EG_UUID_TEXT_LEN];
	struct eg_endpoint ep;
	int rc;

	eg_uuid_format(t->sandbox, s);
	rc = eg_wk_maps_enter(w, err, err_size);
	if (rc)
		return rc;
	rc = eg_endpoint_read(&w->rt.maps, EG_MAP_ENDPOINTS, key, &ep);
	eg_wk_maps_exit(w);
	if (rc == -ENOENT) {
		snprintf(err, err_size,
			 "%s: not an installed endpoint (expected the %s socket of sandbox %s)",
			 what, eg_peer_role_name(t->role), s);
		return -EPERM;
	}
	if (rc) {
		snprintf(err, err_size, "%s: reading eg_endpoints: %s", what, strerror(-rc));
		return rc;
	}
	if (memcmp(ep.sandbox, t->sandbox, EG_ID_BYTES)) {
		eg_uuid_format(ep.sandbox, o);
		snprintf(err, err_size, "%s: an endpoint of sandbox %s, not of sandbox %s", what, o,
			 s);
		return -EPERM;
	}
	if (ep.role != t->role) {
		snprintf(err, err_size, "%s: the %s socket of sandbox %s, not its %s socket", what,
			 eg_peer_role_name(ep.role), s, eg_peer_role_name(t->role));
		return -EPERM;
	}
	return 0;
}

/* Writes CONNECT <port>\n and reads the reply one byte at a time, so that
 * guest bytes following "OK <n>\n" stay in the socket for the caller. */
static int hybrid_handshake(int fd, __u32 port, long long deadline, const char *what,
			    __u32 *assigned, char *err, size_t err_size)
{
	char line[32], reply[EG_VSOCK_REPLY_MAX], why[EG_ERR_MAX];
	size_t got = 0;
	int n = eg_vsock_connect_line(port, line, sizeof(line));
	bool closed = false;

	if (send(fd, line, (size_t)n, MSG_NOSIGNAL) != n) {
		int rc = -errno;

		snprintf(err, err_size, "%s: writing CONNECT %u: %s", what, port, strerror(errno));
		return rc;
	}
	while (got < sizeof(reply) && (!got || reply[got - 1] != '\n')) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		long long left = deadline - now_ms();
		ssize_t r;

		if (left <= 0 || poll(&p, 1, (int)left) == 0) {
			eg_escape_bounded(reply, got, why, sizeof(why));
			snprintf(err, err_size,
				 "%s: hybrid vsock handshake: no complete reply to CONNECT %u in "
				 "time (got \"%s\")",
				 what, port, why);
			return -ETIMEDOUT;
		}
		r = recv(fd, reply + got, 1, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int rc = -errno;

			snprintf(err, err_size, "%s: hybrid vsock handshake: %s", what,
				 strerror(errno));
			return rc;
		}
		if (r == 0) {
			closed = true;
			break;
		}
		got++;
	}
	if (eg_vsock_reply_parse(reply, got, assigned, why, sizeof(why))) {
		snprintf(err, err_size, "%s: CONNECT %u: %s%s", what, port, why,
			 closed ? " (the VMM closed the connection)" : "");
		return -EPROTO;
	}
	return 0;
}

int eg_connect_unix(struct eg_worker *w, const struct eg_connect_target *t, struct eg_conn **out,
		    char *err, size_t err_size)
{
	EG_WK_ERRBUF(err, err_size);
	int timeout = t->timeout_ms > 0 ? t->timeout_ms : EG_CONNECT_DEFAULT_TIMEOUT_MS;
	long long deadline = now_ms() + timeout;
	struct timeval tv = {.tv_sec = timeout / 1000, .tv_usec = (timeout % 1000) * 1000};
	struct timeval zero = {0};
	struct eg_exec_record rec, again;
	const struct eg_proc_id *expected;
	struct eg_proc_id found;
	struct eg_path_key key;
	struct sockaddr_un sun;
	struct eg_conn *c;
	char what[EG_UNIX_PATH_MAX + 16], s[EG_UUID_TEXT_LEN];
	int fd = -1, pidfd = -1, rc;
	bool via = false;
	__u32 assigned = 0;

	*out = NULL;
	snprintf(what, sizeof(what), "connect %s", t->path ? t->path : "(null)");
	eg_uuid_format(t->sandbox, s);
	if (t->role != EG_ROLE_BRIDGE && t->role != EG_ROLE_VMM) {
		snprintf(err, err_size, "%s: role %u is neither bridge (1) nor VMM (2)", what,
			 t->role);
		return -EINVAL;
	}
	if (!t->path || eg_path_key_make(t->path, &key)) {
		snprintf(err, err_size, "%s: must be an absolute path shorter than %d bytes", what,
			 EG_UNIX_PATH_MAX);
		return -EINVAL;
	}
	rc = eg_cn_record(w, t->sandbox, what, &rec, err, err_size);
	if (rc)
		return rc;
	expected = t->role == EG_ROLE_BRIDGE ? &rec.bridge : &rec.vmm;
	if (!expected->tgid) {
		snprintf(err, err_size, "%s: sandbox %s: its record names no %s process", what, s,
			 eg_peer_role_name(t->role));
		return -ENOENT;
	}
	rc = endpoint_check(w, t, &key, what, err, err_size);
	if (rc)
		return rc;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, key.path, sizeof(sun.sun_path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, err_size, "%s: socket: %s", what, strerror(errno));
		return rc;
	}
	/* A Unix connect() waits for backlog room up to SO_SNDTIMEO. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		rc = errno == EAGAIN || errno == EINPROGRESS ? -ETIMEDOUT : -errno;
		if (rc == -ETIMEDOUT)
			snprintf(err, err_size, "%s: listener backlog full until the timeout",
				 what);
		else if (rc == -EPERM || rc == -EACCES)
			/* execgate's hooks (`execgate events` names the reason)
			 * or another LSM: nothing was sent either way. */
			snprintf(err, err_size, "%s: refused by the kernel (%s)", what,
				 strerror(errno));
		else
			snprintf(err, err_size, "%s: %s", what, strerror(errno));
		goto cleanup;
	}

	rc = eg_cn_peer(fd, what, &pidfd, &found, &via, err, err_size);
	if (rc)
		goto cleanup;
	if (eg_peer_diff(expected, &found) != EG_PEER_SAME) {
		eg_peer_mismatch_text(what, t->role, s, expected, &found, err, err_size);
		rc = -EPERM;
		goto cleanup;
	}
	/* Re-check after reading: the record still names this process at the
	 * same epoch, and the process the pidfd names is still alive. */
	rc = eg_cn_record(w, t->sandbox, what, &again, err, err_size);
	if (rc)
		goto cleanup;
	if (again.epoch != rec.epoch ||
	    eg_peer_diff(expected, t->role == EG_ROLE_BRIDGE ? &again.bridge : &again.vmm)) {
		snprintf(err, err_size,
			 "%s: sandbox %s: record replaced while connecting (epoch %llu -> %llu)",
			 what, s, (unsigned long long)rec.epoch, (unsigned long long)again.epoch);
		rc = -ESTALE;
		goto cleanup;
	}
	if (eg_cn_pidfd_alive(pidfd)) {
		snprintf(err, err_size, "%s: listener pid %u exited while it was verified", what,
			 found.tgid);
		rc = -ESRCH;
		goto cleanup;
	}

	if (t->hybrid_vsock) {
		rc = hybrid_handshake(fd, t->vsock_port, deadline, what, &assigned, err, err_size);
		if (rc)
			goto cleanup;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &zero, sizeof(zero));
	c = eg_cn_new(fd, pidfd, what);
	fd = pidfd = -1;
	if (!c) {
		snprintf(err, err_size, "%s: out of memory", what);
		return -ENOMEM;
	}
	eg_runtime_record_of(&rec, &c->info.record);
	eg_process_of(&found, &c->info.peer);
	c->info.via_peerpidfd = via;
	c->info.assigned_port = assigned;
	*out = c;
	return 0;

cleanup:
	if (pidfd >= 0)
		close(pidfd);
	if (fd >= 0)
		close(fd);
	return rc;
}
