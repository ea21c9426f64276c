// SPDX-License-Identifier: Apache-2.0
/* Unix stream revocation (a row of loader/revoke.h's table).
 *
 * The cgroup tier has no hook on a stream's I/O, so a stream admitted at an
 * old epoch is cut instead: find every socket whose eg_sk_tags entry names
 * the sandbox at a stale epoch, take a duplicate of one holder's fd
 * (pidfd_getfd, root), shutdown(SHUT_RDWR) it. A Unix stream shutdown is
 * mirrored to the peer, so both ends see EOF on read and EPIPE on write.
 *
 * Finding the holders, probed once per process (compat in one place):
 *   iter/task_file  bpf/revoke_unix_iter.bpf.c walks every open file of
 *                   every process (all namespaces) and yields (tgid, fd,
 *                   socket) of each stale-tagged Unix socket;
 *   procfs          where that program is refused: every socket fd under
 *                   /proc/PID/fd is duplicated and its tag looked up by fd
 *                   (bpf_map_lookup_elem on eg_sk_tags), slower but exact.
 * Either way the duplicate's tag is re-read before the cut, so an fd number
 * re-used between finding and cutting is never shut down by mistake.
 *
 * A holder that exited or closed the fd in between is neither cut nor
 * unreachable (the socket went with it, or another holder is tried); a
 * socket none of whose holders could be duplicated (EPERM, ...) counts as
 * unreachable. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "execgate/revoke_abi.h"
#include "loader/revoke.h"
#include "loader/runtime.h"
#include "revoke_unix_iter.skel.h"

static const char METHOD_ITER[] = "iter/task_file";
static const char METHOD_PROCFS[] = "procfs";

/* One loaded iterator per process, for the eg_sk_tags map it was loaded
 * against (a handle on another pin dir reloads it). Install and retire hold
 * the writer lock; this mutex only guards the cache. */
static pthread_mutex_t iter_lock = PTHREAD_MUTEX_INITIALIZER;
static struct revoke_unix_iter *iter_skel;
static struct bpf_link *iter_link;
static __u32 iter_map_id;
static bool iter_refused, force_procfs;

void eg_revoke_unix_force_procfs(bool on)
{
	pthread_mutex_lock(&iter_lock);
	force_procfs = on;
	pthread_mutex_unlock(&iter_lock);
}

static int silent_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

static __u32 map_id_of(int fd)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.id;
}

static void iter_drop(void)
{
	bpf_link__destroy(iter_link);
	revoke_unix_iter__destroy(iter_skel);
	iter_link = NULL;
	iter_skel = NULL;
	iter_map_id = 0;
}

/* Loads the iterator against tags_fd. Called with iter_lock held. */
static int iter_ensure(int tags_fd)
{
	libbpf_print_fn_t old;
	__u32 id = map_id_of(tags_fd);
	int rc;

	if (iter_skel && id && id == iter_map_id)
		return 0;
	iter_drop();
	old = libbpf_set_print(silent_print); /* a refusal is a probe result */
	iter_skel = revoke_unix_iter__open();
	rc = iter_skel ? 0 : -errno;
	if (!rc)
		rc = bpf_map__reuse_fd(iter_skel->maps.eg_sk_tags, tags_fd);
	if (!rc)
		rc = revoke_unix_iter__load(iter_skel);
	if (!rc) {
		iter_link = bpf_program__attach_iter(iter_skel->progs.eg_revoke_unix_iter, NULL);
		if (!iter_link)
			rc = -errno;
	}
	libbpf_set_print(old);
	if (rc) {
		iter_drop();
		return rc < 0 ? rc : -EINVAL;
	}
	iter_map_id = id;
	return 0;
}

static __u64 eg_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static bool stale(const struct eg_revoke_target *t, const struct eg_sk_tag *tag)
{
	return !memcmp(tag->sandbox, t->sandbox, EG_ID_BYTES) &&
	       (t->retired || tag->epoch != t->current_epoch);
}

/* Last pidfd, so a holder of many sockets costs one pidfd_open. */
struct pidfd_cache {
	pid_t pid;
	int fd;
};

static int holder_pidfd(struct pidfd_cache *pc, pid_t pid)
{
	if (pc->fd >= 0 && pc->pid == pid)
		return pc->fd;
	if (pc->fd >= 0)
		close(pc->fd);
	pc->pid = pid;
	pc->fd = (int)syscall(SYS_pidfd_open, pid, 0);
	return pc->fd < 0 ? -errno : pc->fd;
}

/* Shut down both ways already (an earlier cut, or the peer closed): the
 * stream is stopped; cutting it again would count it twice. */
static bool stopped(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLRDHUP};

	return poll(&p, 1, 0) == 1 && (p.revents & POLLHUP);
}

enum cut_result { CUT_DONE, CUT_GONE, CUT_NOT_STALE, CUT_UNREACHABLE };

/* Duplicates (pid, fd), confirms its tag is still stale and that it is not
 * shut down already, cuts it: five syscalls, the cost of a cut. The iterator
 * skipped sockets shut down before it ran; the poll catches the other end of
 * a stream cut in this pass (the LSM tier tags both ends of a Unix stream,
 * and a shutdown is mirrored to the peer), so a stream counts once. */
static enum cut_result cut_one(struct pidfd_cache *pc, int tags_fd, pid_t pid, int fd,
			       const struct eg_revoke_target *t)
{
	struct eg_sk_tag tag;
	int pfd, dup, rc;

	pfd = holder_pidfd(pc, pid);
	if (pfd < 0)
		return pfd == -ESRCH ? CUT_GONE : CUT_UNREACHABLE;
	dup = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
	if (dup < 0)
		return errno == ESRCH || errno == EBADF ? CUT_GONE : CUT_UNREACHABLE;
	if (bpf_map_lookup_elem(tags_fd, &dup, &tag) || !stale(t, &tag)) {
		close(dup);
		return CUT_NOT_STALE; /* fd re-used since, or not a tagged socket */
	}
	if (stopped(dup)) {
		close(dup);
		return CUT_NOT_STALE; /* its peer was cut a moment ago: one stream */
	}
	rc = shutdown(dup, SHUT_RDWR);
	close(dup);
	if (rc && errno != ENOTCONN)
		return CUT_UNREACHABLE;
	return CUT_DONE;
}

static int hit_cmp(const void *a, const void *b)
{
	const struct eg_revoke_hit *x = a, *y = b;

	if (x->sk != y->sk)
		return x->sk < y->sk ? -1 : 1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return (x->fd > y->fd) - (x->fd < y->fd);
}

static int run_iter(const struct eg_revoke_target *t, int tags_fd, struct eg_revoke_count *out,
		    char *err, size_t err_size)
{
	struct pidfd_cache pc = {0, -1};
	struct eg_revoke_hit *hits = NULL;
	__u64 t0 = eg_monotonic_ns();
	size_t n = 0, cap = 0;
	int it, rc = 0;

	memcpy(iter_skel->bss->target_sandbox, t->sandbox, EG_ID_BYTES);
	iter_skel->bss->target_epoch = t->current_epoch;
	iter_skel->bss->target_retired = t->retired;
	it = bpf_iter_create(bpf_link__fd(iter_link));
	if (it < 0) {
		rc = -errno;
		snprintf(err, err_size, "iter/task_file: creating the iterator: %s",
			 strerror(errno));
		return rc;
	}
	for (;;) {
		ssize_t got;

		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 256;
			void *p = realloc(hits, ncap * sizeof(*hits));

			if (!p) {
				rc = -ENOMEM;
				goto cleanup;
			}
			hits = p;
			cap = ncap;
		}
		got = read(it, hits + n, (cap - n) * sizeof(*hits));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = -errno;
			snprintf(err, err_size, "iter/task_file: reading: %s", strerror(errno));
			goto cleanup;
		}
		if (got == 0)
			break;
		n += (size_t)got / sizeof(*hits);
	}
	out->find_ns = eg_monotonic_ns() - t0;
	t0 = eg_monotonic_ns();
	/* One socket may have several holders (fork, SCM_RIGHTS): cut it once. */
	qsort(hits, n, sizeof(*hits), hit_cmp);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		bool done = false, unreachable = false;

		for (; j < n && hits[j].sk == hits[i].sk; j++) {
			enum cut_result r;

			if (done)
				continue;
			r = cut_one(&pc, tags_fd, (pid_t)hits[j].tgid, (int)hits[j].fd, t);
			done = r == CUT_DONE;
			unreachable |= r == CUT_UNREACHABLE;
		}
		if (done)
			out->cut++;
		else if (unreachable)
			out->unreachable++;
		i = j;
	}
	out->cut_ns = eg_monotonic_ns() - t0;
cleanup:
	if (pc.fd >= 0)
		close(pc.fd);
	free(hits);
	close(it);
	return rc;
}

/* Socket inodes already cut (one socket, several holders): open addressing. */
struct ino_set {
	ino_t *slot;
	size_t cap, n;
};

static int ino_set_add(struct ino_set *s, ino_t ino) /* 1 added, 0 present, <0 */
{
	if ((s->n + 1) * 2 > s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 1024;
		ino_t *ns = calloc(ncap, sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		for (size_t i = 0; i < s->cap; i++)
			if (s->slot[i])
				for (size_t h = s->slot[i] % ncap;; h = (h + 1) % ncap)
					if (!ns[h]) {
						ns[h] = s->slot[i];
						break;
					}
		free(s->slot);
		s->slot = ns;
		s->cap = ncap;
	}
	for (size_t h = ino % s->cap;; h = (h + 1) % s->cap) {
		if (s->slot[h] == ino)
			return 0;
		if (!s->slot[h]) {
			s->slot[h] = ino;
			s->n++;
			return 1;
		}
	}
}

static void scan_process(pid_t pid, int tags_fd, const struct eg_revoke_target *t,
			 struct ino_set *cut, struct eg_revoke_count *out)
{
	char path[64], link[64];
	struct dirent *de;
	int pfd;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return; /* exited */
	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	while (pfd >= 0 && (de = readdir(d))) {
		struct eg_sk_tag tag;
		struct stat st;
		ssize_t len;
		int fd, dup;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		len = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (len < 8 || memcmp(link, "socket:[", 8))
			continue;
		fd = atoi(de->d_name);
		dup = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
		if (dup < 0) {
			if (errno != ESRCH && errno != EBADF)
				out->unreachable++; /* not known to be tagged: an upper bound */
			continue;
		}
		if (!bpf_map_lookup_elem(tags_fd, &dup, &tag) && stale(t, &tag) && !stopped(dup) &&
		    !fstat(dup, &st) && ino_set_add(cut, st.st_ino) == 1) {
			if (!shutdown(dup, SHUT_RDWR) || errno == ENOTCONN)
				out->cut++;
			else
				out->unreachable++;
		}
		close(dup);
	}
	if (pfd >= 0)
		close(pfd);
	closedir(d);
}

static int run_procfs(const struct eg_revoke_target *t, int tags_fd, struct eg_revoke_count *out,
		      char *err, size_t err_size)
{
	struct ino_set cut = {NULL, 0, 0};
	struct dirent *de;
	DIR *proc;

	proc = opendir("/proc");
	if (!proc) {
		snprintf(err, err_size, "/proc: %s", strerror(errno));
		return -errno;
	}
	while ((de = readdir(proc)))
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
			scan_process((pid_t)atoi(de->d_name), tags_fd, t, &cut, out);
	closedir(proc);
	free(cut.slot);
	return 0;
}

static int revoke_unix(struct eg_runtime *rt, const struct eg_revoke_target *t,
		       struct eg_revoke_count *out, char *err, size_t err_size)
{
	int tags_fd = rt->maps.fd[EG_MAP_SK_TAGS];
	int rc;

	pthread_mutex_lock(&iter_lock);
	if (!force_procfs && !iter_refused) {
		rc = iter_ensure(tags_fd);
		if (rc && rc != -ENOMEM)
			iter_refused = true; /* the kernel said no: never ask again */
		if (!rc) {
			out->method = METHOD_ITER;
			rc = run_iter(t, tags_fd, out, err, err_size);
			pthread_mutex_unlock(&iter_lock);
			return rc;
		}
	}
	pthread_mutex_unlock(&iter_lock);
	out->method = METHOD_PROCFS;
	return run_procfs(t, tags_fd, out, err, err_size);
}

const char *eg_revoke_unix_method(void)
{
	bool refused;

	pthread_mutex_lock(&iter_lock);
	refused = iter_refused || force_procfs;
	pthread_mutex_unlock(&iter_lock);
	return refused ? METHOD_PROCFS : METHOD_ITER;
}

const struct eg_revoker eg_revoker_unix = {"unix", EG_REVOKE_UNIX, revoke_unix};
