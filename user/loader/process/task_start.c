// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "loader/log.h"
#include "loader/maps/pins.h"
#include "loader/process/task_start.h"
#include "iter_task_start.skel.h"

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static struct iter_task_start *skel; /* loaded here, kept for the process's life */
static int prog_fd = -1;	     /* skel's program, or the adopted pin's */
static int probe_rc;
static char probe_why[256];
/* The pin the first probe adopts from (eg_task_start_use_pins); guarded,
 * as the daemon's threads open maps while another may probe. */
static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;
static char pin_path[EG_PIN_PATH_MAX];

static int run_iter(int prog_fd, pid_t tid, struct eg_task_start *out, size_t *n)
{
	union bpf_iter_link_info info;
	LIBBPF_OPTS(bpf_link_create_opts, opts, .iter_info = &info, .iter_info_len = sizeof(info));
	int lfd, ifd, rc = 0;
	ssize_t got;

	memset(&info, 0, sizeof(info));
	info.task.tid = (__u32)tid;
	lfd = bpf_link_create(prog_fd, 0, BPF_TRACE_ITER, &opts);
	if (lfd < 0)
		return -errno;
	ifd = bpf_iter_create(lfd);
	if (ifd < 0) {
		rc = -errno;
		goto out;
	}
	/* One record per visited task; with the tid filter there is one at
	 * most, a second would mean the filter was ignored. */
	got = read(ifd, out, 2 * sizeof(*out));
	if (got < 0)
		rc = -errno;
	else if (got % sizeof(*out))
		rc = -EIO;
	else
		*n = (size_t)got / sizeof(*out);
	close(ifd);
out:
	close(lfd);
	return rc;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/* This build's program: FNV-1a over the object's ELF bytes, which the
 * loaded program carries in .data (eg_task_start_build). */
static __u64 object_hash(void)
{
	size_t n = 0;
	const unsigned char *p = iter_task_start__elf_bytes(&n);
	__u64 h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	return h ? h : 1;
}

/* Opens and loads this build's program, its .data naming the build. */
static struct iter_task_start *load_own(void)
{
	struct iter_task_start *s = iter_task_start__open();
	int rc;

	if (!s)
		return NULL;
	s->data->eg_task_start_build = object_hash();
	rc = iter_task_start__load(s);
	if (rc) {
		iter_task_start__destroy(s);
		errno = rc < 0 ? -rc : EINVAL;
		return NULL;
	}
	return s;
}

/* The program behind the iterator link pinned at pin, when it is this
 * build's: an iter/task program named eg_task_start whose .data holds
 * EG_TASK_START_ABI and this build's object hash (a pin of another build,
 * even one that writes the same record, is another program: `load` puts
 * its own in place, as it does with every program it pins).
 * Returns its fd, or a negative errno: -ESTALE for another program. */
static int pin_adopt(const char *pin)
{
	struct iter_task_start__data d;
	struct bpf_link_info li;
	struct bpf_prog_info pi;
	struct bpf_map_info mi;
	__u32 len, ids[4], key = 0;
	int lfd, pfd, rc = -ESTALE;

	lfd = bpf_obj_get(pin);
	if (lfd < 0)
		return -errno;
	memset(&li, 0, sizeof(li));
	len = sizeof(li);
	if (bpf_obj_get_info_by_fd(lfd, &li, &len)) {
		rc = -errno;
		close(lfd);
		return rc;
	}
	close(lfd);
	if (li.type != BPF_LINK_TYPE_ITER)
		return -ESTALE;
	pfd = bpf_prog_get_fd_by_id(li.prog_id);
	if (pfd < 0)
		return -errno;
	memset(&pi, 0, sizeof(pi));
	pi.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
	pi.map_ids = (__u64)(unsigned long)ids;
	len = sizeof(pi);
	if (bpf_obj_get_info_by_fd(pfd, &pi, &len) || pi.type != BPF_PROG_TYPE_TRACING ||
	    strcmp(pi.name, "eg_task_start"))
		goto out;
	for (__u32 i = 0; i < pi.nr_map_ids && i < sizeof(ids) / sizeof(ids[0]); i++) {
		int mfd = bpf_map_get_fd_by_id(ids[i]);

		if (mfd < 0)
			continue;
		memset(&mi, 0, sizeof(mi));
		len = sizeof(mi);
		if (!bpf_obj_get_info_by_fd(mfd, &mi, &len) && ends_with(mi.name, ".data") &&
		    mi.value_size == sizeof(d) && !bpf_map_lookup_elem(mfd, &key, &d) &&
		    d.eg_task_start_abi == EG_TASK_START_ABI &&
		    d.eg_task_start_build == object_hash())
			rc = 0;
		close(mfd);
	}
out:
	if (rc) {
		close(pfd);
		return rc;
	}
	return pfd;
}

/* Whether the program behind fd filters by tid here: it visits this
 * process and only it. A kernel without task iterator parameters
 * (before 6.1) refuses link info or ignores it and visits every task. */
static int self_check(int fd)
{
	struct eg_task_start self[2];
	size_t n = 0;
	int rc;

	rc = run_iter(fd, getpid(), self, &n);
	if (rc || n != 1 || self[0].tid != (__u32)getpid()) {
		snprintf(probe_why, sizeof(probe_why),
			 "the task iterator does not filter by tid here (kernel 6.1+ needed): %s",
			 rc ? strerror(-rc) : "it visited other tasks");
		return -EOPNOTSUPP;
	}
	return 0;
}

static void probe(void)
{
	char pin[EG_PIN_PATH_MAX];
	int rc, fd;

	pthread_mutex_lock(&pin_lock);
	snprintf(pin, sizeof(pin), "%s", pin_path);
	pthread_mutex_unlock(&pin_lock);
	/* A program that `load` pinned is the same program, verified once:
	 * an install or admit then reads no kernel BTF and runs no verifier
	 * (under TCG that load was most of an install's time). */
	if (pin[0] && (fd = pin_adopt(pin)) >= 0) {
		if (!self_check(fd)) {
			prog_fd = fd;
			probe_rc = 0;
			eg_log(EG_LOG_DEBUG, "task iterator: adopted %s", pin);
			return;
		}
		close(fd);
	}
	eg_log_libbpf_quiet(true); /* a refusal is a probe result, worded below */
	skel = load_own();
	rc = skel ? 0 : -errno;
	eg_log_libbpf_quiet(false);
	if (rc) {
		snprintf(probe_why, sizeof(probe_why),
			 "the task iterator (iter/task) does not load here: %s", strerror(-rc));
		goto fail;
	}
	if (self_check(bpf_program__fd(skel->progs.eg_task_start))) {
		iter_task_start__destroy(skel);
		skel = NULL;
		goto fail;
	}
	prog_fd = bpf_program__fd(skel->progs.eg_task_start);
	probe_rc = 0;
	return;
fail:
	probe_rc = -EOPNOTSUPP;
}

void eg_task_start_use_pins(const char *pin_dir)
{
	pthread_mutex_lock(&pin_lock);
	if (!pin_path[0] &&
	    eg_link_pin_path(pin_path, sizeof(pin_path), pin_dir, EG_PIN_TASK_START))
		pin_path[0] = '\0';
	pthread_mutex_unlock(&pin_lock);
}

int eg_task_start_keep(const char *pin_dir, char *err, size_t err_size)
{
	char pin[EG_PIN_PATH_MAX];
	struct bpf_link *link;
	int fd, rc;

	rc = eg_link_pin_path(pin, sizeof(pin), pin_dir, EG_PIN_TASK_START);
	if (rc) {
		snprintf(err, err_size, "pin dir %s: %s", pin_dir, strerror(-rc));
		return rc;
	}
	fd = pin_adopt(pin);
	if (fd >= 0) {
		close(fd);
		return 0; /* this build's program is pinned already */
	}
	/* This process's own load (the pin, if any, is another build's). */
	rc = eg_task_start_probe(err, err_size);
	if (rc)
		return rc;
	if (!skel) {
		skel = load_own();
		if (!skel) {
			rc = -errno;
			snprintf(err, err_size, "the task iterator (iter/task): %s", strerror(-rc));
			return rc;
		}
	}
	/* A link without a tid filter, never read: it only keeps the program
	 * in bpffs, where every later process adopts it (pin_adopt). */
	link = bpf_program__attach_iter(skel->progs.eg_task_start, NULL);
	if (!link) {
		rc = -errno;
		snprintf(err, err_size, "%s: attaching the task iterator: %s", pin, strerror(-rc));
		return rc;
	}
	if (unlink(pin) && errno != ENOENT) {
		rc = -errno;
		snprintf(err, err_size, "%s: %s", pin, strerror(-rc));
	} else if (bpf_link__pin(link, pin)) {
		rc = -errno;
		snprintf(err, err_size, "%s: pinning the task iterator: %s", pin, strerror(-rc));
	}
	bpf_link__destroy(link);
	return rc;
}

int eg_task_start_probe(char *err, size_t err_size)
{
	pthread_once(&probe_once, probe);
	if (probe_rc && err_size)
		snprintf(err, err_size, "%s", probe_why);
	return probe_rc;
}

int eg_task_start_read(pid_t pid, struct eg_task_start *out, char *err, size_t err_size)
{
	struct eg_task_start recs[2];
	size_t n = 0;
	int rc;

	rc = eg_task_start_probe(err, err_size);
	if (rc) {
		/* The caller's err names the pid; keep the reason whole. */
		return rc;
	}
	rc = run_iter(prog_fd, pid, recs, &n);
	if (rc) {
		snprintf(err, err_size, "task iterator for tid %d: %s", (int)pid, strerror(-rc));
		return rc;
	}
	if (n == 0) {
		snprintf(err, err_size, "no task with tid %d", (int)pid);
		return -ESRCH;
	}
	if (n != 1 || recs[0].tid != (__u32)pid) {
		snprintf(err, err_size, "task iterator for tid %d visited another task", (int)pid);
		return -EIO;
	}
	*out = recs[0];
	return 0;
}

void eg_task_start_guarantee_add(struct eg_guarantee *out, size_t *n, size_t max, const char *name,
				 const char *summary, bool tier_held, const char *tier_on)
{
	char why[256], on[384];
	bool held = false;

	if (!tier_held)
		snprintf(on, sizeof(on), "%s", tier_on);
	else if (eg_task_start_probe(why, sizeof(why)))
		snprintf(on, sizeof(on),
			 "%s: identities cannot be read in ns, install and admit fail", why);
	else {
		snprintf(on, sizeof(on), "%.250s; identities read in ns by the iter/task program",
			 tier_on);
		held = true;
	}
	eg_guarantee_add(out, n, max, name, summary, held, on);
}
