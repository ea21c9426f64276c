// SPDX-License-Identifier: Apache-2.0
/* Does the handle still hold the maps the kernel uses? `execgate unload`
 * removes the pins, and a later `execgate load` pins new maps under the same
 * names: fds opened before then name maps no program reads any more. Every
 * call that touches the maps enters through eg_wk_maps_enter(), which checks
 * the pins, reopens them when they were replaced, and fails with -ENOLINK
 * while nothing is loaded.
 *
 * The check is one fstat() of the pin dir, held open (O_PATH): creating or
 * removing a pin in it moves the directory's mtime and ctime, and an unload
 * removes the directory itself (its link count drops to 0; a later load
 * makes a new one). bpffs stamps times at the kernel's coarse clock tick, so
 * a change in the same tick as the stamp we hold could leave the times
 * equal: while the directory changed less than a second ago, each pin's
 * inode is compared by path as well (16 stats). Once a second the path is
 * looked up again too, for what no fstat of the old directory shows (a
 * bpffs mounted over it).
 *
 * Races. A call checks and then uses the fds under the read side of
 * pins_lock; a reopen swaps them under the write side, so an fd is never
 * closed (and its number reused) while a call uses it. A pin replaced after
 * the check and before the use leaves the call on the old maps, which the
 * kernel dropped together: the call then answers as if it ran just before
 * the unload, which it started before. A call that starts after the new
 * pins exist sees them, since its check comes after its start. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "lib/worker.h"
#include "loader/maps/pins.h"

#define REOPEN_TRIES 3
#define YOUNG_NS     1000000000LL /* far more than a coarse clock tick */

static long long ts_ns(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
}

/* Each pin's inode; -ENOENT when one is missing. */
static int pin_inodes(const char *pin_dir, ino_t ino[EG_MAP__COUNT])
{
	char path[EG_PIN_PATH_MAX];
	struct stat st;

	for (int i = 0; i < EG_MAP__COUNT; i++) {
		if (eg_pin_path(path, sizeof(path), pin_dir, eg_map_names[i]))
			return -ENAMETOOLONG;
		if (stat(path, &st))
			return -errno;
		ino[i] = st.st_ino;
	}
	return 0;
}

static bool same_times(const struct stat *a, const struct stat *b)
{
	return ts_ns(&a->st_mtim) == ts_ns(&b->st_mtim) && ts_ns(&a->st_ctim) == ts_ns(&b->st_ctim);
}

/* pin_dir, looked up by path, is still the directory we hold. */
static bool same_path(struct eg_worker *w)
{
	struct stat st;

	return stat(w->pin_dir, &st) == 0 && st.st_dev == w->pins_dir.st_dev &&
	       st.st_ino == w->pins_dir.st_ino;
}

/* Under pins_lock (either side): are the fds still the pinned maps? */
static bool pins_current(struct eg_worker *w)
{
	struct timespec now, mono;
	ino_t ino[EG_MAP__COUNT];
	struct stat st;
	long long changed, next;

	if (w->pins_gone || fstat(w->pins_dir_fd, &st) || st.st_nlink == 0 ||
	    !same_times(&st, &w->pins_dir))
		return false;
	clock_gettime(CLOCK_REALTIME, &now);
	changed = ts_ns(&st.st_mtim) > ts_ns(&st.st_ctim) ? ts_ns(&st.st_mtim) : ts_ns(&st.st_ctim);
	if (ts_ns(&now) - changed < YOUNG_NS)
		return same_path(w) && pin_inodes(w->pin_dir, ino) == 0 &&
		       !memcmp(ino, w->pins_ino, sizeof(ino));
	clock_gettime(CLOCK_MONOTONIC, &mono);
	next = atomic_load_explicit(&w->pins_next_path_check, memory_order_relaxed);
	if (ts_ns(&mono) < next)
		return true;
	atomic_store_explicit(&w->pins_next_path_check, ts_ns(&mono) + YOUNG_NS,
			      memory_order_relaxed);
	return same_path(w);
}

/* Opens the maps pinned now into m, with the pins' inodes and the pin dir's
 * stamp taken around the open: a pin swapped during it is seen and the open
 * retried. -ENOLINK when nothing (or not everything) is pinned. */
static int open_current(struct eg_worker *w, struct eg_maps *m, ino_t ino[EG_MAP__COUNT],
			struct stat *dir, int *dir_fd, char *err, size_t err_size)
{
	ino_t after[EG_MAP__COUNT];
	char why[EG_ERR_MAX];
	int rc = -EAGAIN, fd;

	for (int t = 0; t < REOPEN_TRIES; t++) {
		fd = open(w->pin_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, dir) || pin_inodes(w->pin_dir, ino)) {
			if (fd >= 0)
				close(fd);
			rc = -ENOLINK;
			break;
		}
		rc = eg_maps_open(m, w->pin_dir, why, sizeof(why));
		if (rc) {
			close(fd);
			rc = rc == -ENOENT ? -ENOLINK : rc;
			break;
		}
		if (pin_inodes(w->pin_dir, after) == 0 && !memcmp(ino, after, sizeof(after))) {
			*dir_fd = fd;
			return 0;
		}
		eg_maps_close(m);
		close(fd);
		rc = -EAGAIN;
	}
	if (rc == -ENOLINK)
		snprintf(err, err_size,
			 "pin dir %s: not loaded (the pins this handle opened were removed: "
			 "execgate unload?); run execgate load",
			 w->pin_dir);
	else if (rc == -EAGAIN)
		snprintf(err, err_size,
			 "pin dir %s: pins keep changing (a load or unload is running)",
			 w->pin_dir);
	else
		snprintf(err, err_size, "pin dir %s: reopening the maps: %s", w->pin_dir, why);
	return rc;
}

/* Takes the write side: reopens the pins, or drops the dead fds. */
static int reopen(struct eg_worker *w, char *err, size_t err_size)
{
	ino_t ino[EG_MAP__COUNT];
	struct eg_maps m;
	struct stat dir;
	int rc = 0, dir_fd = -1;

	pthread_rwlock_wrlock(&w->pins_lock);
	if (pins_current(w))
		goto out; /* another thread reopened them first */
	rc = open_current(w, &m, ino, &dir, &dir_fd, err, err_size);
	if (rc) {
		/* Never answer from maps no program reads: close them now
		 * (which also frees them) and fail until a load. */
		if (!w->pins_gone && rc == -ENOLINK) {
			eg_maps_close(&w->rt.maps);
			close(w->pins_dir_fd);
			w->pins_dir_fd = -1;
			w->pins_gone = true;
			atomic_fetch_add(&w->pins_generation, 1);
		}
		goto out;
	}
	eg_maps_close(&w->rt.maps);
	if (w->pins_dir_fd >= 0)
		close(w->pins_dir_fd);
	w->pins_dir_fd = dir_fd;
	w->rt.maps = m;
	memcpy(w->pins_ino, ino, sizeof(ino));
	w->pins_dir = dir;
	w->pins_gone = false;
	atomic_fetch_add(&w->pins_generation, 1);
out:
	pthread_rwlock_unlock(&w->pins_lock);
	return rc;
}

int eg_wk_pins_init(struct eg_worker *w, char *err, size_t err_size)
{
	pthread_rwlockattr_t a;
	struct eg_maps m;
	int rc;

	pthread_rwlockattr_init(&a);
	/* A reopen must not wait behind an endless stream of admits. No call
	 * takes the read side twice, so writer preference cannot deadlock. */
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&w->pins_lock, &a);
	pthread_rwlockattr_destroy(&a);
	w->pins_lock_ready = true;
	/* Again, with the stamps around it: eg_runtime_open opened the first
	 * set without them. */
	rc = open_current(w, &m, w->pins_ino, &w->pins_dir, &w->pins_dir_fd, err, err_size);
	if (rc)
		return rc == -ENOLINK ? -ENOENT : rc;
	eg_maps_close(&w->rt.maps);
	w->rt.maps = m;
	return 0;
}

void eg_wk_pins_destroy(struct eg_worker *w)
{
	if (w->pins_dir_fd >= 0)
		close(w->pins_dir_fd);
	w->pins_dir_fd = -1;
	if (w->pins_lock_ready)
		pthread_rwlock_destroy(&w->pins_lock);
	w->pins_lock_ready = false;
}

int eg_wk_maps_enter(struct eg_worker *w, char *err, size_t err_size)
{
	int rc;

	for (int t = 0; t < REOPEN_TRIES; t++) {
		pthread_rwlock_rdlock(&w->pins_lock);
		if (pins_current(w))
			return 0;
		pthread_rwlock_unlock(&w->pins_lock);
		rc = reopen(w, err, err_size);
		if (rc)
			return rc;
	}
	snprintf(err, err_size, "pin dir %s: pins keep changing (a load or unload is running)",
		 w->pin_dir);
	return -EAGAIN;
}

void eg_wk_maps_exit(struct eg_worker *w)
{
	pthread_rwlock_unlock(&w->pins_lock);
}

int eg_worker_refresh(struct eg_worker *w, uint64_t *generation, char *err, size_t err_size)
{
	int rc;

	EG_WK_ERRBUF(err, err_size);
	rc = eg_wk_maps_enter(w, err, err_size);
	if (!rc)
		eg_wk_maps_exit(w);
	if (generation)
		*generation = atomic_load(&w->pins_generation);
	return rc;
}

int eg_worker_events_open(struct eg_worker *w, uint64_t *generation, char *err, size_t err_size)
{
	int rc;

	EG_WK_ERRBUF(err, err_size);
	rc = eg_wk_maps_enter(w, err, err_size);
	if (rc)
		return rc;
	rc = fcntl(w->rt.maps.fd[EG_MAP_EVENTS], F_DUPFD_CLOEXEC, 0);
	if (rc < 0) {
		rc = -errno;
		snprintf(err, err_size, "map eg_events: %s", strerror(-rc));
	}
	if (generation)
		*generation = atomic_load(&w->pins_generation);
	eg_wk_maps_exit(w);
	return rc;
}
