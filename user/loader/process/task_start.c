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
#include "loader/process/task_start.h"
#include "iter_task_start.skel.h"

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static struct iter_task_start *skel; /* kept for the process's life */
static int probe_rc;
static char probe_why[256];

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

static void probe(void)
{
	struct eg_task_start self[2];
	size_t n = 0;
	int rc;

	eg_log_libbpf_quiet(true); /* a refusal is a probe result, worded below */
	skel = iter_task_start__open_and_load();
	rc = skel ? 0 : -errno;
	eg_log_libbpf_quiet(false);
	if (rc) {
		snprintf(probe_why, sizeof(probe_why),
			 "the task iterator (iter/task) does not load here: %s", strerror(-rc));
		goto fail;
	}
	/* A kernel without task iterator parameters (before 6.1) refuses
	 * link info or ignores it and visits every task. */
	rc = run_iter(bpf_program__fd(skel->progs.eg_task_start), getpid(), self, &n);
	if (rc || n != 1 || self[0].tid != (__u32)getpid()) {
		snprintf(probe_why, sizeof(probe_why),
			 "the task iterator does not filter by tid here (kernel 6.1+ needed): %s",
			 rc ? strerror(-rc) : "it visited other tasks");
		iter_task_start__destroy(skel);
		skel = NULL;
		goto fail;
	}
	probe_rc = 0;
	return;
fail:
	probe_rc = -EOPNOTSUPP;
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
	rc = run_iter(bpf_program__fd(skel->progs.eg_task_start), pid, recs, &n);
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
