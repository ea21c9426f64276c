// SPDX-License-Identifier: Apache-2.0
/* Unix stream revocation (a row of loader/revokers/revoke.h's table).
 *
 * The cgroup tier has no hook on a stream's I/O, so a stream admitted at an
 * old epoch is cut instead: find every socket whose eg_sk_tags entry names
 * the sandbox at a stale epoch, take a duplicate of one holder's fd
 * (pidfd_getfd, root), shutdown(SHUT_RDWR) it. A Unix stream shutdown is
 * mirrored to the peer, so both ends see EOF on read and EPIPE on write.
 *
 * Two methods, the first the kernel takes, probed once per process
 * (loader/revokers/revoke_unix.h has one file for each):
 *   iter/task_file  a pinned iterator yields every stale-tagged socket and
 *                   its holders, cut in batches;
 *   procfs          every socket fd under /proc/PID/fd is duplicated and
 *                   its tag looked up.
 * Either way the duplicate is re-checked before the cut, so an fd number
 * re-used between finding and cutting is never shut down by mistake. */
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "loader/maps/maps.h"
#include "loader/maps/pins.h"
#include "loader/revokers/revoke_unix.h"
#include "loader/records/runtime.h"

static const char METHOD_ITER[] = "iter/task_file";
static const char METHOD_PROCFS[] = "procfs";

/* Under the iterator's lock. */
static bool iter_refused, force_procfs;

void eg_revoke_unix_force_procfs(bool on)
{
	eg_unix_iter_lock();
	force_procfs = on;
	eg_unix_iter_unlock();
}

bool eg_unix_stale(const struct eg_revoke_target *t, const struct eg_sk_tag *tag)
{
	return !memcmp(tag->sandbox, t->sandbox, EG_ID_BYTES) &&
	       (t->retired || tag->epoch != t->current_epoch);
}

static __u64 monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* With the iterator's lock held. */
static int run_iter(const struct eg_revoke_target *t, struct eg_revoke_count *out, char *err,
		    size_t err_size)
{
	struct eg_unix_hits h = {NULL, 0, 0};
	__u64 t0 = monotonic_ns();
	int rc;

	eg_unix_iter_target(t);
	rc = eg_unix_iter_read(true, &h, err, err_size);
	out->find_ns = monotonic_ns() - t0;
	t0 = monotonic_ns();
	/* Audit: the streams the cut below would take, counted the way it
	 * counts them (one per stream, whatever its holders), none cut. */
	if (!rc && t->audit)
		out->would_cut = eg_unix_count_streams(&h);
	else if (!rc)
		rc = eg_unix_cut_streams(&h, out, err, err_size);
	out->cut_ns = monotonic_ns() - t0;
	free(h.v);
	return rc;
}

static int revoke_unix(struct eg_runtime *rt, const struct eg_revoke_target *t,
		       struct eg_revoke_count *out, char *err, size_t err_size)
{
	int tags_fd = rt->maps.fd[EG_MAP_SK_TAGS];
	int rc;

	eg_unix_iter_lock();
	if (!force_procfs && !iter_refused) {
		rc = eg_unix_iter_ensure(rt, tags_fd);
		if (rc && rc != -ENOMEM)
			iter_refused = true; /* the kernel said no: never ask again */
		if (!rc) {
			out->method = METHOD_ITER;
			rc = run_iter(t, out, err, err_size);
			eg_unix_iter_unlock();
			return rc;
		}
	}
	eg_unix_iter_unlock();
	out->method = METHOD_PROCFS;
	return eg_unix_revoke_procfs(t, tags_fd, out, err, err_size);
}

int eg_revoke_unix_prepare(const char *pin_dir)
{
	char tags[EG_PIN_PATH_MAX], pin[EG_PIN_PATH_MAX];
	int tfd, lfd;

	if (eg_pin_path(tags, sizeof(tags), pin_dir, eg_map_names[EG_MAP_SK_TAGS]) ||
	    eg_link_pin_path(pin, sizeof(pin), pin_dir, EG_PIN_REVOKE_UNIX_ITER))
		return -ENAMETOOLONG;
	tfd = bpf_obj_get(tags);
	if (tfd < 0)
		return -errno;
	eg_unix_iter_lock();
	eg_unix_iter_drop(); /* this process's cache may hold the pin being replaced */
	lfd = eg_unix_iter_load(tfd, pin);
	eg_unix_iter_unlock();
	close(tfd);
	if (lfd < 0)
		return lfd;
	close(lfd);
	return 0;
}

const char *eg_revoke_unix_method(void)
{
	bool refused;

	eg_unix_iter_lock();
	refused = iter_refused || force_procfs;
	eg_unix_iter_unlock();
	return refused ? METHOD_PROCFS : METHOD_ITER;
}

const struct eg_revoker eg_revoker_unix = {"unix", EG_REVOKE_UNIX, revoke_unix};
