// SPDX-License-Identifier: Apache-2.0
/* Cutting the stale Unix streams the iterator found (loader/revokers/revoke_unix.h),
 * in batches: duplicate each stream's socket from one holder (pidfd_getfd),
 * re-check the whole batch with one more pass of the iterator over this
 * process only, shut the checked duplicates down, close them. Per stream
 * that is two system calls (getfd, shutdown), ~2 us each here, on the
 * calling thread: splitting them across threads gained nothing measurable
 * (docs/bench/2026-12-03-revoke-unix-threads.md).
 *
 * The re-check is what makes a cut exact: a duplicate is cut only if it is
 * the socket the walk found, still stale and not shut down, so an fd number
 * re-used between finding and cutting is never shut down by mistake. A
 * holder that exited or closed the fd in between is neither cut nor
 * unreachable (the socket went with it, or another holder is tried); a
 * socket none of whose holders could be duplicated (EPERM, ...) counts as
 * unreachable. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "loader/revokers/revoke_unix.h"

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

/* Largest batch of duplicates held at once: each is an fd of this process
 * (one that runs out of fds cuts what it holds and retries the rest). */
#define CUT_BATCH 4096

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

static const struct eg_revoke_hit *cmp_hits; /* for try_cmp; the iterator's lock held */

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

/* Grows this process's fd table to hold a batch of n duplicates at once.
 * In a process with threads (the daemon), every doubling of the table
 * waits for an RCU grace period, milliseconds each here; one F_DUPFD above
 * the fds the batch will take pays that once. */
static void grow_fd_table(size_t n)
{
	struct rlimit rl;
	long want;
	int base, fd;

	if (n < 512 || getrlimit(RLIMIT_NOFILE, &rl))
		return;
	base = open("/", O_PATH | O_CLOEXEC);
	if (base < 0)
		return;
	want = (long)base + (long)n + 64;
	if ((rlim_t)want >= rl.rlim_cur)
		want = rl.rlim_cur > 1 ? (long)rl.rlim_cur - 1 : 0;
	fd = fcntl(base, F_DUPFD_CLOEXEC, (int)want);
	if (fd >= 0)
		close(fd);
	close(base);
}

/* Duplicates each try's socket (one pidfd per holder: the batch is sorted
 * by holder). */
static void take(struct try *tr, size_t n, const struct eg_revoke_hit *hits)
{
	pid_t pid = 0;
	int pfd = -ESRCH;

	for (size_t i = 0; i < n; i++) {
		const struct eg_revoke_hit *h = &hits[tr[i].hit];

		if (pfd < 0 || pid != (pid_t)h->tgid) { /* a failed open is tried again */
			if (pfd >= 0)
				close(pfd);
			pid = (pid_t)h->tgid;
			pfd = (int)syscall(SYS_pidfd_open, pid, 0);
			if (pfd < 0)
				pfd = -errno;
		}
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
	if (pfd >= 0)
		close(pfd);
}

/* Re-checks the batch's duplicates in one pass of the iterator over this
 * process: a duplicate is cut only if it is the socket the walk found, still
 * stale and not shut down (an fd number re-used in between, or a stream
 * stopped meanwhile, is not cut). One read replaces a tag lookup and a poll
 * per socket. */
static int check(struct try *tr, size_t n, const struct eg_revoke_hit *hits,
		 struct eg_unix_hits *mine, char *err, size_t err_size)
{
	int rc;

	mine->n = 0;
	rc = eg_unix_iter_read(false, mine, err, err_size);
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

/* One batch: duplicate, re-check, cut, close. A batch that ran out of fds
 * gives two back for the re-check's iterator; what it could not take is
 * retried in the next round, as long as each round cuts something. */
static int cut_batch(struct try *tr, size_t n, const struct eg_revoke_hit *hits,
		     struct eg_unix_hits *mine, int *fds, char *err, size_t err_size)
{
	size_t nfd = 0, held = 0, retry = 0, cut = 0;
	int rc;

	take(tr, n, hits);
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
	rc = check(tr, n, hits, mine, err, err_size);
	for (size_t i = 0; !rc && i < n; i++)
		if (tr[i].r == CUT_CHECKED)
			tr[i].r = !shutdown(tr[i].dup, SHUT_RDWR) || errno == ENOTCONN
				      ? CUT_DONE
				      : CUT_UNREACHABLE;
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

unsigned eg_unix_count_streams(struct eg_unix_hits *h)
{
	unsigned n = 0;

	qsort(h->v, h->n, sizeof(*h->v), hit_cmp);
	for (size_t i = 0; i < h->n; i++)
		n += !i || stream_key(&h->v[i]) != stream_key(&h->v[i - 1]);
	return n;
}

int eg_unix_cut_streams(struct eg_unix_hits *h, struct eg_revoke_count *out, char *err,
			size_t err_size)
{
	struct eg_unix_hits mine = {NULL, 0, 0};
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
