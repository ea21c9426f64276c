// SPDX-License-Identifier: Apache-2.0
/* Who is at the other end of a Unix socket, and is the record still ours:
 * the pieces every verified connection and the client check use. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include "core/ids.h"
#include "kcompat.h"
#include "lib/connect_int.h"
#include "loader/maps/maps.h"
#include "loader/process/proc_id.h"

int eg_cn_record(struct eg_worker *w, const __u8 sandbox[EG_ID_BYTES], const char *what,
		 struct eg_exec_record *rec, char *err, size_t err_size)
{
	int rc = eg_wk_maps_enter(w, err, err_size);

	if (rc)
		return rc;
	rc = eg_cn_record_locked(w, sandbox, what, rec, err, err_size);
	eg_wk_maps_exit(w);
	return rc;
}

int eg_cn_record_locked(struct eg_worker *w, const __u8 sandbox[EG_ID_BYTES], const char *what,
			struct eg_exec_record *rec, char *err, size_t err_size)
{
	char s[EG_UUID_TEXT_LEN];
	int rc;

	eg_uuid_format(sandbox, s);
	/* One locked lookup: cheap enough for a lease check every 100 ms per
	 * stream (eg_worker_show also counts endpoints and grants). */
	rc = eg_record_read(&w->rt.maps, sandbox, rec);
	memset(&rec->lock, 0, sizeof(rec->lock));
	if (rc == -ENOENT) {
		snprintf(err, err_size, "%s: sandbox %s: no runtime record", what, s);
		return rc;
	}
	if (rc) {
		snprintf(err, err_size, "%s: sandbox %s: reading its record: %s", what, s,
			 strerror(-rc));
		return rc;
	}
	if (rec->state != EG_RECORD_ACTIVE) {
		snprintf(err, err_size, "%s: sandbox %s: retired (epoch %llu)", what, s,
			 (unsigned long long)rec->epoch);
		return -ESTALE;
	}
	return 0;
}

int eg_cn_pidfd_alive(int pidfd)
{
	/* Signal 0 to a pidfd: ESRCH once the process has exited, even if
	 * its pid was reused since. */
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0)
		return 0;
	return errno == ESRCH ? -ESRCH : -errno;
}

/* Identifies the process behind pfd (taken over) into *pidfd / *id. */
static int identify(int pfd, const char *what, int *pidfd, struct eg_proc_id *id, char *err,
		    size_t err_size)
{
	char why[EG_ERR_MAX];
	int rc = eg_proc_identify_pidfd(pfd, id, why, sizeof(why));

	if (rc) {
		snprintf(err, err_size, "%s: the peer process: %s", what, why);
		close(pfd);
		return rc;
	}
	*pidfd = pfd;
	return 0;
}

int eg_cn_peer_cred(int fd, const char *what, int *pidfd, struct eg_proc_id *id, char *err,
		    size_t err_size)
{
	struct ucred cred = {0};
	socklen_t len = sizeof(cred);
	int pfd, rc;

	/* The pid the kernel recorded at listen()/connect(), opened now. A
	 * pid reused in between is caught by the comparison: its start time
	 * is another. */
	*pidfd = -1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || cred.pid <= 0) {
		rc = cred.pid <= 0 ? -ESRCH : -errno;
		snprintf(err, err_size, "%s: SO_PEERCRED: %s", what,
			 cred.pid <= 0 ? "no peer process" : strerror(errno));
		return rc;
	}
	pfd = (int)syscall(SYS_pidfd_open, cred.pid, 0);
	if (pfd < 0) {
		rc = -errno;
		snprintf(err, err_size, "%s: peer pid %d: pidfd_open: %s", what, (int)cred.pid,
			 strerror(errno));
		return rc;
	}
	return identify(pfd, what, pidfd, id, err, err_size);
}

int eg_cn_peer(int fd, const char *what, int *pidfd, struct eg_proc_id *id, bool *via_peerpidfd,
	       char *err, size_t err_size)
{
	socklen_t len = sizeof(int);
	int pfd = -1, rc;

	*pidfd = -1;
	*via_peerpidfd = false;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pfd, &len) == 0 && pfd >= 0) {
		*via_peerpidfd = true;
		return identify(pfd, what, pidfd, id, err, err_size);
	}
	if (errno == ENOPROTOOPT || errno == EINVAL) /* before 6.5 */
		return eg_cn_peer_cred(fd, what, pidfd, id, err, err_size);
	rc = -errno;
	snprintf(err, err_size, "%s: SO_PEERPIDFD: %s", what, strerror(errno));
	return rc;
}

struct eg_conn *eg_cn_new(int fd, int peer_pidfd, const char *name)
{
	struct eg_conn *c = calloc(1, sizeof(*c));

	if (!c) {
		close(fd);
		if (peer_pidfd >= 0)
			close(peer_pidfd);
		return NULL;
	}
	c->fd = fd;
	c->peer_pidfd = peer_pidfd;
	snprintf(c->name, sizeof(c->name), "%s", name);
	return c;
}
