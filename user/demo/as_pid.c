// SPDX-License-Identifier: Apache-2.0
/* as-pid: runs a program under a pid that an exited process had.
 *
 *   execgate-demo as-pid PID [--cgroup CG] -- PROG ARGS...
 *
 * Writes PID-1 to /proc/sys/kernel/ns_last_pid and forks, until the child
 * gets PID. Other processes on the host fork too: one that forks between
 * the write and our fork takes PID, and the next tries find it in use. Such
 * a process (another test's short-lived helper) gives it back soon, so a
 * PID in use is waited for, up to AS_PID_WAIT_MS, not failed at once. The child
 * joins CG and exec()s PROG: the same pid, and whatever start time the
 * kernel gives it now, which is not the old one. Prints "pid PID (after N
 * tries)", then waits for the child and exits with its status; the child
 * dies with it (PR_SET_PDEATHSIG). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include "demo/demo.h"

#define AS_PID_WAIT_MS 5000
/* Held while steering ns_last_pid, as tests/kernel/test_pid_reuse.c does:
 * two steerers at once would take each other's pid. */
#define AS_PID_LOCK "/tmp/execgate-ns_last_pid.lock"

static pid_t child;

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool pid_in_use(pid_t pid)
{
	return kill(pid, 0) == 0 || errno != ESRCH;
}

static int set_last_pid(pid_t last)
{
	char buf[24];
	int fd, n = snprintf(buf, sizeof(buf), "%d", (int)last), rc = 0;

	fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, (size_t)n) != n)
		rc = -errno;
	close(fd);
	return rc;
}

int egd_as_pid(int argc, char **argv)
{
	const char *cg = egd_opt(argc, argv, "cgroup");
	char **prog = NULL;
	long long deadline;
	pid_t want;
	int status, i, rc, lock, tries = 0;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			prog = argv + i + 1;
			break;
		}
	if (argc < 2 || !prog || !*prog || (want = (pid_t)atoi(argv[1])) <= 1) {
		fprintf(stderr, "usage: execgate-demo as-pid PID [--cgroup CG] -- PROG ARGS...\n");
		return 2;
	}
	lock = open(AS_PID_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock < 0 || flock(lock, LOCK_EX)) {
		fprintf(stderr, "execgate-demo: as-pid: %s: %s\n", AS_PID_LOCK, strerror(errno));
		return 1;
	}
	deadline = now_ms() + AS_PID_WAIT_MS;
	for (;;) {
		if (pid_in_use(want)) {
			if (now_ms() >= deadline)
				break;
			usleep(10000);
			continue;
		}
		rc = set_last_pid(want - 1);
		if (rc) {
			fprintf(stderr, "execgate-demo: as-pid: /proc/sys/kernel/ns_last_pid: %s\n",
				strerror(-rc));
			return 1;
		}
		tries++;
		child = fork();
		if (child < 0)
			return 1;
		if (child == 0) {
			if (getpid() != want)
				_exit(0);
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (cg && (rc = egd_join_cgroup(cg))) {
				fprintf(stderr, "execgate-demo: as-pid: %s: %s\n", cg,
					strerror(-rc));
				_exit(1);
			}
			execvp(prog[0], prog);
			fprintf(stderr, "execgate-demo: as-pid: %s: %s\n", prog[0],
				strerror(errno));
			_exit(127);
		}
		if (child == want)
			break;
		waitpid(child, NULL, 0);
		child = 0;
		if (now_ms() >= deadline)
			break;
	}
	close(lock);
	if (child != want) {
		fprintf(stderr,
			"execgate-demo: as-pid: pid %d not obtained in %d ms (%d forks; %s)\n",
			(int)want, AS_PID_WAIT_MS, tries,
			pid_in_use(want) ? "another process holds it" : "other forks took it");
		return 1;
	}
	printf("pid %d (after %d tries)\n", (int)want, tries);
	fflush(stdout);
	signal(SIGTERM, forward);
	signal(SIGINT, forward);
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
