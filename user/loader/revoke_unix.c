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
static struct bpf_link *self_link; /* the same program, this process only */
static pid_t self_link_pid;
static bool self_link_refused;

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
	bpf_link__destroy(self_link);
	self_link = NULL;
	self_link_refused = false;
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

/* A growing array of iterator hits. */
struct hits {
	struct eg_revoke_hit *v;
	size_t n, cap;
};

/* Runs the iterator behind link once and appends what it yields. Reads
 * ask for the room left (the kernel fills up to its 32 KiB seq buffer per
 * read), so 10 000 hits cost a few reads. */
static int iter_read(struct bpf_link *link, struct hits *h, char *err, size_t err_size)
{
	int it = bpf_iter_create(bpf_link__fd(link)), rc = 0;

	if (it < 0) {
		rc = -errno;
		snprintf(err, err_size, "iter/task_file: creating the iterator: %s",
			 strerror(errno));
		return rc;
	}
	for (;;) {
		ssize_t got;

		if (h->cap - h->n < 1024) {
			size_t ncap = h->cap ? h->cap * 2 : 2048;
			void *p = realloc(h->v, ncap * sizeof(*h->v));

			if (!p) {
				rc = -ENOMEM;
				snprintf(err, err_size, "iter/task_file: %s", strerror(ENOMEM));
				break;
			}
			h->v = p;
			h->cap = ncap;
		}
		got = read(it, h->v + h->n, (h->cap - h->n) * sizeof(*h->v));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = -errno;
			snprintf(err, err_size, "iter/task_file: reading: %s", strerror(errno));
			break;
		}
		if (got == 0)
			break;
		h->n += (size_t)got / sizeof(*h->v);
	}
	close(it);
	return rc;
}

/* The re-check's link: the iterator limited to this process (kernel 6.1+
 * takes a task parameter), so it walks only the loader's own files. Older
 * kernels refuse it and the whole walk runs, filtered by target_tgid in the
 * program. Called with iter_lock held. */
static struct bpf_link *self_iter_link(void)
{
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info li;
	pid_t me = getpid();

	if (self_link && self_link_pid == me)
		return self_link;
	bpf_link__destroy(self_link);
	self_link = NULL;
	if (!self_link_refused) {
		memset(&li, 0, sizeof(li));
		li.task.pid = (__u32)me;
		opts.link_info = &li;
		opts.link_info_len = sizeof(li);
		self_link = bpf_program__attach_iter(iter_skel->progs.eg_revoke_unix_iter, &opts);
		self_link_refused = !self_link;
		self_link_pid = me;
	}
	return self_link ? self_link : iter_link;
}

/* One candidate (pid, fd) of a stream, tried in a round: the duplicate, or
 * why there is none. */
enum cut_result {
	CUT_DONE,
	CUT_GONE,	 /* holder exited or closed the fd: try another */
	CUT_NOT_STALE,	 /* fd re-used since, or stopped meanwhile */
	CUT_UNREACHABLE, /* no access (EPERM, ...) */
	CUT_RETRY,	 /* this process was out of fds: next round */
	CUT_HELD,	 /* duplicated, not checked yet */
	CUT_CHECKED,	 /* duplicated, the stale socket found: to cut */
};

struct
try {
	size_t stream, hit;
	int dup;
	enum cut_result r;
};

/* A stream: hits [first, end) of the sorted array (every holder of either
 * end), next the first untried one. */
struct stream {
	size_t first, end, next;
	bool done, unreachable;
};

static __u64 stream_key(const struct eg_revoke_hit *h)
{
	return h->peer && h->peer < h->sk ? h->peer : h->sk;
}

static int hit_cmp(const void *a, const void *b)
{
	const struct eg_revoke_hit *x = a, *y = b;
	__u64 kx = stream_key(x), ky = stream_key(y);

	if (kx != ky)
		return kx < ky ? -1 : 1;
	if (x->sk != y->sk)
		return x->sk < y->sk ? -1 : 1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return (x->fd > y->fd) - (x->fd < y->fd);
}

static const struct eg_revoke_hit *cmp_hits; /* for try_cmp; iter_lock held */

static int try_cmp(const void *a, const void *b) /* by holder, for the pidfd cache */
{
	const struct try *x = a, *y = b;
	__u32 px = cmp_hits[x->hit].tgid, py = cmp_hits[y->hit].tgid;

	if (px != py)
		return px < py ? -1 : 1;
	return (x->hit > y->hit) - (x->hit < y->hit);
}

static int fd_hit_cmp(const void *a, const void *b)
{
	const struct eg_revoke_hit *x = a, *y = b;

	return (x->fd > y->fd) - (x->fd < y->fd);
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Closes the duplicates: close_range over each run of consecutive numbers.
 * Every number of a run is one of ours and open, so no other thread's fd
 * can be in it. */
static void close_dups(int *fds, size_t n)
{
	qsort(fds, n, sizeof(*fds), int_cmp);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;

		while (j < n && fds[j] == fds[j - 1] + 1)
			j++;
		if (syscall(SYS_close_range, (unsigned)fds[i], (unsigned)fds[j - 1], 0))
			for (size_t k = i; k < j; k++)
				close(fds[k]);
		i = j;
	}
}

/* Duplicates a slice of a batch (one pidfd per holder). */
static void take_part(struct try *tr, size_t n, const struct eg_revoke_hit *hits)
{
	struct pidfd_cache pc = {0, -1};

	for (size_t i = 0; i < n; i++) {
		const struct eg_revoke_hit *h = &hits[tr[i].hit];
		int pfd = holder_pidfd(&pc, (pid_t)h->tgid);

		tr[i].dup = -1;
		if (pfd < 0) {
			tr[i].r = pfd == -ESRCH			     ? CUT_GONE
				  : pfd == -EMFILE || pfd == -ENFILE ? CUT_RETRY
								     : CUT_UNREACHABLE;
			continue;
		}
		tr[i].dup = (int)syscall(SYS_pidfd_getfd, pfd, (int)h->fd, 0);
		if (tr[i].dup >= 0)
			tr[i].r = CUT_HELD;
		else if (errno == EMFILE || errno == ENFILE)
			tr[i].r = CUT_RETRY;
		else
			tr[i].r = errno == ESRCH || errno == EBADF ? CUT_GONE : CUT_UNREACHABLE;
	}
	if (pc.fd >= 0)
		close(pc.fd);
}

/* Cuts the checked duplicates of a slice. */
static void shut_part(struct try *tr, size_t n, const struct eg_revoke_hit *hits)
{
	(void)hits;
	for (size_t i = 0; i < n; i++)
		if (tr[i].r == CUT_CHECKED)
			tr[i].r = !shutdown(tr[i].dup, SHUT_RDWR) || errno == ENOTCONN
				      ? CUT_DONE
				      : CUT_UNREACHABLE;
}

/* A duplicate and a cut are one system call each, ~2 us apiece on the
 * project's machines (syscall entry dominates), so a large batch is split
 * across the online CPUs; slices below this stay on the caller's thread. */
#define PART_MIN  512
#define PARTS_MAX 4

struct part {
	void (*fn)(struct try *tr, size_t n, const struct eg_revoke_hit *hits);
	struct try *tr;
	size_t n;
	const struct eg_revoke_hit *hits;
};

static void *part_main(void *arg)
{
	struct part *p = arg;

	p->fn(p->tr, p->n, p->hits);
	return NULL;
}

static void run_parts(void (*fn)(struct try *, size_t, const struct eg_revoke_hit *),
		      struct try *tr, size_t n, const struct eg_revoke_hit *hits)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t k = n / PART_MIN, lo = 0;
	struct part p[PARTS_MAX];
	pthread_t th[PARTS_MAX];
	bool started[PARTS_MAX] = {false};

	if (cpus > 0 && k > (size_t)cpus)
		k = (size_t)cpus;
	k = k > PARTS_MAX ? PARTS_MAX : k ? k : 1;
	for (size_t i = 0; i < k; i++) {
		size_t len = n / k + (i < n % k);

		p[i] = (struct part){fn, tr + lo, len, hits};
		lo += len;
	}
	for (size_t i = 1; i < k; i++)
		started[i] = !pthread_create(&th[i], NULL, part_main, &p[i]);
	part_main(&p[0]);
	for (size_t i = 1; i < k; i++) {
		if (started[i])
			pthread_join(th[i], NULL);
		else
			part_main(&p[i]); /* no thread: here */
	}
}

/* Re-checks the batch's duplicates in one pass of the iterator over this
 * process: a duplicate is cut only if it is the socket the walk found, still
 * stale and not shut down (an fd number re-used in between, or a stream
 * stopped meanwhile, is not cut). One read replaces a tag lookup and a poll
 * per socket. */
static int check_dups(struct try *tr, size_t n, const struct eg_revoke_hit *hits, struct hits *mine,
		      char *err, size_t err_size)
{
	int rc;

	mine->n = 0;
	iter_skel->bss->target_tgid = (__u32)getpid();
	rc = iter_read(self_iter_link(), mine, err, err_size);
	iter_skel->bss->target_tgid = 0;
	if (rc)
		return rc;
	qsort(mine->v, mine->n, sizeof(*mine->v), fd_hit_cmp);
	for (size_t i = 0; i < n; i++) {
		struct eg_revoke_hit key = {.fd = (__u32)tr[i].dup}, *m;

		if (tr[i].r != CUT_HELD)
			continue;
		m = bsearch(&key, mine->v, mine->n, sizeof(*mine->v), fd_hit_cmp);
		tr[i].r = m && m->sk == hits[tr[i].hit].sk ? CUT_CHECKED : CUT_NOT_STALE;
	}
	return 0;
}

/* Largest batch of duplicates held at once: each is an fd of this process
 * (one that runs out of fds cuts what it holds and retries the rest). */
#define CUT_BATCH 4096

/* One batch: duplicate, re-check, cut, close. A batch that ran out of fds
 * gives two back for the re-check's iterator; what it could not take is
 * retried in the next round, as long as each round cuts something. */
static int cut_batch(struct try *tr, size_t n, const struct eg_revoke_hit *hits, struct hits *mine,
		     int *fds, char *err, size_t err_size)
{
	size_t nfd = 0, held = 0, retry = 0, cut = 0;
	int rc;

	run_parts(take_part, tr, n, hits);
	for (size_t i = 0; i < n; i++) {
		held += tr[i].dup >= 0;
		retry += tr[i].r == CUT_RETRY;
	}
	for (size_t i = n, freed = 0; retry && held > 2 && freed < 2 && i-- > 0;)
		if (tr[i].dup >= 0) {
			close(tr[i].dup);
			tr[i].dup = -1;
			tr[i].r = CUT_RETRY;
			freed++;
		}
	rc = check_dups(tr, n, hits, mine, err, err_size);
	if (!rc)
		run_parts(shut_part, tr, n, hits);
	for (size_t i = 0; i < n; i++) {
		if (tr[i].dup >= 0)
			fds[nfd++] = tr[i].dup;
		cut += tr[i].r == CUT_DONE;
	}
	close_dups(fds, nfd);
	if (!cut) /* out of fds and no progress: not a passing shortage */
		for (size_t i = 0; i < n; i++)
			if (tr[i].r == CUT_RETRY)
				tr[i].r = CUT_UNREACHABLE;
	return rc;
}

static int cut_streams(struct hits *h, struct eg_revoke_count *out, char *err, size_t err_size)
{
	struct hits mine = {NULL, 0, 0};
	struct stream *st = NULL;
	struct try *tr = NULL;
	size_t ns = 0, ntr;
	int *fds = NULL, rc = 0;

	/* One stream may have several holders (fork, SCM_RIGHTS) and two
	 * tagged ends: grouped by stream, cut once, through one holder. */
	qsort(h->v, h->n, sizeof(*h->v), hit_cmp);
	st = calloc(h->n ? h->n : 1, sizeof(*st));
	tr = calloc(h->n ? h->n : 1, sizeof(*tr));
	fds = calloc(h->n < CUT_BATCH ? h->n + 1 : CUT_BATCH, sizeof(*fds));
	if (!st || !tr || !fds) {
		rc = -ENOMEM;
		snprintf(err, err_size, "cutting Unix streams: %s", strerror(ENOMEM));
		goto cleanup;
	}
	for (size_t i = 0; i < h->n; ns++) {
		size_t j = i + 1;

		while (j < h->n && stream_key(&h->v[j]) == stream_key(&h->v[i]))
			j++;
		st[ns] = (struct stream){.first = i, .end = j, .next = i};
		i = j;
	}
	cmp_hits = h->v;
	/* Rounds: each stream not cut yet tries its next holder. Nearly all
	 * are cut in the first. */
	while (!rc) {
		ntr = 0;
		for (size_t s = 0; s < ns; s++)
			if (!st[s].done && st[s].next < st[s].end)
				tr[ntr++] = (struct try){.stream = s, .hit = st[s].next++};
		if (!ntr)
			break;
		qsort(tr, ntr, sizeof(*tr), try_cmp);
		for (size_t i = 0; i < ntr && !rc; i += CUT_BATCH) {
			size_t n = ntr - i < CUT_BATCH ? ntr - i : CUT_BATCH;

			rc = cut_batch(tr + i, n, h->v, &mine, fds, err, err_size);
			for (size_t k = i; k < i + n; k++) {
				struct stream *s = &st[tr[k].stream];

				s->done |= tr[k].r == CUT_DONE;
				s->unreachable |= tr[k].r == CUT_UNREACHABLE;
				if (tr[k].r == CUT_RETRY)
					s->next = tr[k].hit; /* the same holder again */
			}
		}
	}
	for (size_t s = 0; s < ns; s++) {
		if (st[s].done)
			out->cut++;
		else if (st[s].unreachable)
			out->unreachable++;
	}
cleanup:
	free(mine.v);
	free(fds);
	free(tr);
	free(st);
	return rc;
}

static int run_iter(const struct eg_revoke_target *t, struct eg_revoke_count *out, char *err,
		    size_t err_size)
{
	struct hits h = {NULL, 0, 0};
	__u64 t0 = eg_monotonic_ns();
	int rc;

	memcpy(iter_skel->bss->target_sandbox, t->sandbox, EG_ID_BYTES);
	iter_skel->bss->target_epoch = t->current_epoch;
	iter_skel->bss->target_retired = t->retired;
	iter_skel->bss->target_tgid = 0;
	rc = iter_read(iter_link, &h, err, err_size);
	out->find_ns = eg_monotonic_ns() - t0;
	t0 = eg_monotonic_ns();
	if (!rc)
		rc = cut_streams(&h, out, err, err_size);
	out->cut_ns = eg_monotonic_ns() - t0;
	free(h.v);
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
			rc = run_iter(t, out, err, err_size);
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
