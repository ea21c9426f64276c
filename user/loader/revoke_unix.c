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
 *                   socket, peer) of each stale-tagged Unix socket that is
 *                   not shut down both ways. Cut in batches: duplicate
 *                   each (split across CPUs), re-check the whole batch with
 *                   one more pass of the iterator over this process only,
 *                   shut down, close_range. Per stream that is two system
 *                   calls (getfd, shutdown), ~2 us each here;
 *   procfs          where that program is refused: every socket fd under
 *                   /proc/PID/fd is duplicated and its tag looked up by fd
 *                   (bpf_map_lookup_elem on eg_sk_tags), slower but exact.
 * Either way the duplicate is re-checked before the cut, so an fd number
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
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "execgate/revoke_abi.h"
#include "loader/maps.h"
#include "loader/pins.h"
#include "loader/revoke.h"
#include "loader/runtime.h"
#include "revoke_unix_iter.skel.h"

static const char METHOD_ITER[] = "iter/task_file";
static const char METHOD_PROCFS[] = "procfs";

/* The iterator is loaded once per pin dir and its link pinned there
 * (links/revoke_unix_iter, removed by unload with the maps): loading it
 * costs 70-80 ms of verifier time, which would otherwise fall on every
 * install and retire, each its own process. A process adopts the pin (link,
 * program, the program's .bss mapped) and keeps it for the eg_sk_tags map it
 * names; a pin left by a build with another ABI, or for another map, is
 * replaced. The target lives in the pinned program's .bss, shared by every
 * process: install and retire write it under the writer lock. This mutex
 * only guards the per-process cache. */
static pthread_mutex_t iter_lock = PTHREAD_MUTEX_INITIALIZER;
static int iter_link_fd = -1, iter_prog_fd = -1;
static struct revoke_unix_iter__bss *iter_bss;
static __u32 iter_map_id;
static bool iter_refused, force_procfs;
static int self_link_fd = -1; /* the same program, this process only */
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

static int map_info_of(int fd, struct bpf_map_info *info)
{
	__u32 len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	return bpf_obj_get_info_by_fd(fd, info, &len) ? -errno : 0;
}

static __u32 map_id_of(int fd)
{
	struct bpf_map_info info;

	return map_info_of(fd, &info) ? 0 : info.id;
}

static void iter_drop(void)
{
	if (self_link_fd >= 0)
		close(self_link_fd);
	if (iter_bss)
		munmap(iter_bss, sizeof(*iter_bss));
	if (iter_prog_fd >= 0)
		close(iter_prog_fd);
	if (iter_link_fd >= 0)
		close(iter_link_fd);
	self_link_fd = iter_link_fd = iter_prog_fd = -1;
	self_link_refused = false;
	iter_bss = NULL;
	iter_map_id = 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/* Takes the iterator behind link fd lfd (owned from here on) into the cache
 * if its program reads tags_id and speaks this build's ABI: -ESTALE if not. */
static int iter_adopt(int lfd, __u32 tags_id)
{
	struct bpf_link_info li;
	struct bpf_prog_info pi;
	__u32 len = sizeof(li), ids[8], abi = 0, key = 0;
	int rc = 0, bss_fd = -1, data_fd = -1;
	bool tags = false;

	iter_link_fd = lfd;
	memset(&li, 0, sizeof(li));
	if (bpf_obj_get_info_by_fd(lfd, &li, &len))
		return -errno;
	iter_prog_fd = bpf_prog_get_fd_by_id(li.prog_id);
	if (iter_prog_fd < 0)
		return -errno;
	memset(&pi, 0, sizeof(pi));
	pi.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
	pi.map_ids = (__u64)(unsigned long)ids;
	len = sizeof(pi);
	if (bpf_obj_get_info_by_fd(iter_prog_fd, &pi, &len))
		return -errno;
	for (__u32 i = 0; i < pi.nr_map_ids && i < sizeof(ids) / sizeof(ids[0]); i++) {
		struct bpf_map_info mi;
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue;
		if (ids[i] == tags_id)
			tags = true;
		if (!map_info_of(fd, &mi) && ends_with(mi.name, ".bss") && bss_fd < 0 &&
		    mi.value_size == sizeof(*iter_bss)) {
			bss_fd = fd;
			continue;
		}
		if (!map_info_of(fd, &mi) && ends_with(mi.name, ".data") && data_fd < 0 &&
		    mi.value_size == sizeof(abi)) {
			data_fd = fd;
			continue;
		}
		close(fd);
	}
	if (!tags || bss_fd < 0 || data_fd < 0 || bpf_map_lookup_elem(data_fd, &key, &abi) ||
	    abi != EG_REVOKE_ITER_ABI)
		rc = -ESTALE;
	if (!rc) {
		iter_bss =
		    mmap(NULL, sizeof(*iter_bss), PROT_READ | PROT_WRITE, MAP_SHARED, bss_fd, 0);
		if (iter_bss == MAP_FAILED) {
			iter_bss = NULL;
			rc = -errno;
		}
	}
	if (bss_fd >= 0)
		close(bss_fd);
	if (data_fd >= 0)
		close(data_fd);
	if (!rc)
		iter_map_id = tags_id;
	return rc;
}

/* Loads the iterator against tags_fd and pins its link at pin; returns the
 * link's fd, or a negative errno (the kernel refused it). A pin that cannot
 * be made costs the next process a load, nothing more. */
static int iter_load(int tags_fd, const char *pin)
{
	struct revoke_unix_iter *skel;
	struct bpf_link *link = NULL;
	libbpf_print_fn_t old;
	int rc, fd = -1;

	old = libbpf_set_print(silent_print); /* a refusal is a probe result */
	skel = revoke_unix_iter__open();
	rc = skel ? 0 : -errno;
	if (!rc)
		rc = bpf_map__reuse_fd(skel->maps.eg_sk_tags, tags_fd);
	if (!rc)
		rc = revoke_unix_iter__load(skel);
	if (!rc) {
		link = bpf_program__attach_iter(skel->progs.eg_revoke_unix_iter, NULL);
		rc = link ? 0 : -errno;
	}
	if (!rc) {
		fd = dup(bpf_link__fd(link));
		rc = fd < 0 ? -errno : 0;
	}
	if (!rc && pin) {
		unlink(pin); /* another ABI's, or another map's */
		bpf_link__pin(link, pin);
	}
	libbpf_set_print(old);
	bpf_link__destroy(link);
	revoke_unix_iter__destroy(skel);
	return rc ? (rc < 0 ? rc : -EINVAL) : fd;
}

/* The iterator for rt's eg_sk_tags, adopted from its pin or loaded (and
 * pinned). Called with iter_lock held. */
static int iter_ensure(struct eg_runtime *rt, int tags_fd)
{
	char pin[EG_PIN_PATH_MAX];
	__u32 id = map_id_of(tags_fd);
	bool have_pin = !eg_link_pin_path(pin, sizeof(pin), rt->pin_dir, EG_PIN_REVOKE_UNIX_ITER);
	int lfd, rc;

	if (iter_link_fd >= 0 && id && id == iter_map_id)
		return 0;
	iter_drop();
	lfd = have_pin ? bpf_obj_get(pin) : -1;
	if (lfd >= 0 && !iter_adopt(lfd, id))
		return 0;
	iter_drop();
	lfd = iter_load(tags_fd, have_pin ? pin : NULL);
	if (lfd < 0)
		return lfd;
	rc = iter_adopt(lfd, id);
	if (rc)
		iter_drop();
	return rc;
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
static int iter_read(int link_fd, struct hits *h, char *err, size_t err_size)
{
	int it = bpf_iter_create(link_fd), rc = 0;

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
static int self_iter_link(void)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts);
	union bpf_iter_link_info li;
	pid_t me = getpid();

	if (self_link_fd >= 0 && self_link_pid == me)
		return self_link_fd;
	if (self_link_fd >= 0)
		close(self_link_fd);
	self_link_fd = -1;
	if (!self_link_refused) {
		memset(&li, 0, sizeof(li));
		li.task.pid = (__u32)me;
		opts.iter_info = &li;
		opts.iter_info_len = sizeof(li);
		self_link_fd = bpf_link_create(iter_prog_fd, 0, BPF_TRACE_ITER, &opts);
		/* A kernel without task parameters says EINVAL: never ask again.
		 * Out of fds is not a refusal. */
		self_link_refused = self_link_fd < 0 && (errno == EINVAL || errno == EOPNOTSUPP);
		self_link_pid = me;
	}
	return self_link_fd >= 0 ? self_link_fd : iter_link_fd;
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
	iter_bss->target_tgid = (__u32)getpid();
	rc = iter_read(self_iter_link(), mine, err, err_size);
	iter_bss->target_tgid = 0;
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

/* Grows this process's fd table to hold a batch of n duplicates before the
 * threads start: growing it while they run (fd_install from two threads)
 * waits for an RCU grace period at every doubling, milliseconds each here.
 * One F_DUPFD above the fds the batch will take does it at once. */
static void grow_fd_table(size_t n)
{
	struct rlimit rl;
	long want;
	int fd;

	if (n < PART_MIN || getrlimit(RLIMIT_NOFILE, &rl))
		return;
	want = (long)iter_link_fd + (long)n + 64;
	if ((rlim_t)want >= rl.rlim_cur)
		want = rl.rlim_cur > 1 ? (long)rl.rlim_cur - 1 : 0;
	fd = fcntl(iter_link_fd, F_DUPFD_CLOEXEC, (int)want);
	if (fd >= 0)
		close(fd);
}

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
	grow_fd_table(h->n < CUT_BATCH ? h->n : CUT_BATCH);
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

	memcpy(iter_bss->target_sandbox, t->sandbox, EG_ID_BYTES);
	iter_bss->target_epoch = t->current_epoch;
	iter_bss->target_retired = t->retired;
	iter_bss->target_tgid = 0;
	rc = iter_read(iter_link_fd, &h, err, err_size);
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
	if (!d) {
		/* Gone is not a failure; no access is: its sockets were not
		 * looked at (an upper bound, as below). */
		if (errno == EACCES || errno == EPERM)
			out->unreachable++;
		return;
	}
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
		rc = iter_ensure(rt, tags_fd);
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
	pthread_mutex_lock(&iter_lock);
	iter_drop(); /* this process's cache may hold the pin being replaced */
	lfd = iter_load(tfd, pin);
	pthread_mutex_unlock(&iter_lock);
	close(tfd);
	if (lfd < 0)
		return lfd;
	close(lfd);
	return 0;
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
