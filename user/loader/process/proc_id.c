// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "loader/process/proc_id.h"
#include "loader/process/task_start.h"

static int pidfd_open_(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int pidfd_alive(int pidfd)
{
	return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0 ? 0 : -errno;
}

int eg_proc_pidfd_alive(int pidfd)
{
	return pidfd_alive(pidfd) ? -ESRCH : 0;
}

__u32 eg_kernel_dev(dev_t st_dev)
{
	/* include/linux/kdev_t.h: MKDEV(ma, mi) = ma << MINORBITS | mi, MINORBITS 20 */
	return (__u32)(major(st_dev) << 20 | minor(st_dev));
}

static int read_file(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	return (int)n;
}

/* Field 22 of /proc/PID/stat. comm (field 2) may hold spaces and ')', so
 * fields are counted from the last ')'. */
int eg_proc_stat_start_ticks(pid_t pid, __u64 *ticks)
{
	char path[64], buf[2048], *p, *end;
	int rc;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	rc = read_file(path, buf, sizeof(buf));
	if (rc < 0)
		return rc == -ENOENT ? -ESRCH : rc;
	p = strrchr(buf, ')');
	if (!p)
		return -EINVAL;
	p++;
	/* After ')': field 3 (state) is the first; skip to field 22. */
	/* p is at the space before field 3; each step moves to the next. */
	for (int field = 3; field < 22; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -EINVAL;
	}
	errno = 0;
	*ticks = strtoull(p + 1, &end, 10);
	if (errno || end == p + 1 || (*end != ' ' && *end != '\n' && *end))
		return -EINVAL;
	return 0;
}

static int status_field(pid_t pid, const char *name, char *out, size_t size)
{
	char path[64], buf[8192], *line, *save = NULL;
	size_t nlen = strlen(name);
	int rc;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	rc = read_file(path, buf, sizeof(buf));
	if (rc < 0)
		return rc == -ENOENT ? -ESRCH : rc;
	/* strtok_r: the worker handle identifies processes from many threads. */
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, name, nlen) && line[nlen] == ':') {
			line += nlen + 1;
			line += strspn(line, " \t");
			snprintf(out, size, "%s", line);
			return 0;
		}
	}
	return -ENOENT;
}

int eg_proc_check_namespaces(char *err, size_t err_size)
{
	char nspid[256], buf[256];
	long long off_s = 0, off_ns = 0;
	char *line, *save = NULL;
	int rc;

	rc = status_field(getpid(), "NSpid", nspid, sizeof(nspid));
	if (rc == 0 && strchr(nspid, '\t')) {
		snprintf(err, err_size,
			 "execgate must run in the initial PID namespace (NSpid: %s): BPF "
			 "compares initial-namespace tgids",
			 nspid);
		return -EPERM;
	}
	/* Without CONFIG_TIME_NS the file is absent: no offsets. */
	if (read_file("/proc/self/timens_offsets", buf, sizeof(buf)) > 0) {
		for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			if (sscanf(line, "boottime %lld %lld", &off_s, &off_ns) == 2)
				break;
		if (off_s || off_ns) {
			snprintf(err, err_size,
				 "execgate must run in the initial time namespace (boottime offset "
				 "%llds): /proc start times would not match the kernel's",
				 off_s);
			return -EPERM;
		}
	}
	return 0;
}

int eg_proc_identify(pid_t pid, struct eg_proc_id *out, char *err, size_t err_size)
{
	char val[64], why[256];
	struct eg_task_start ts;
	int pidfd, rc;
	long tgid;

	if (pid <= 0) {
		snprintf(err, err_size, "pid %d: not a process id", (int)pid);
		return -EINVAL;
	}
	/* pidfd_open succeeds only for a thread-group leader, so a success
	 * is also the answer to "is this a process"; /proc/PID/status is read
	 * only to word the refusal. */
	pidfd = pidfd_open_(pid);
	if (pidfd < 0) {
		rc = -errno;
		/* A thread id: EINVAL before 6.9, ENOENT since (pidfd_open wants
		 * PIDFD_THREAD for those). Say which process it belongs to. */
		if ((rc == -EINVAL || rc == -ENOENT) &&
		    !status_field(pid, "Tgid", val, sizeof(val)) &&
		    (tgid = strtol(val, NULL, 10)) != pid) {
			snprintf(err, err_size, "pid %d: is a thread of process %ld, not a process",
				 (int)pid, tgid);
			return -EINVAL;
		}
		snprintf(err, err_size, "pid %d: %s", (int)pid,
			 rc == -ESRCH || rc == -ENOENT ? "no such process"
			 : rc == -EINVAL	       ? "is a thread, not a process"
						       : strerror(-rc));
		return rc == -ENOENT ? -ESRCH : rc;
	}
	memset(out, 0, sizeof(*out));
	/* Everything from the task iterator: start time in ns (the tick of
	 * /proc/PID/stat would let a pid reused within 10 ms pass) and the
	 * executable's inode and superblock s_dev through the very pointers
	 * the hooks follow (stat() reports another device on overlayfs and
	 * btrfs). */
	rc = eg_task_start_read(pid, &ts, why, sizeof(why));
	if (rc) {
		snprintf(err, err_size, "pid %d: %s%s", (int)pid,
			 rc == -EOPNOTSUPP ? "cannot read its start time in ns: " : "", why);
		goto out;
	}
	if (ts.tgid != (__u32)pid) { /* pidfd_open accepted a thread: cannot be */
		snprintf(err, err_size, "pid %d: is a thread of process %u, not a process",
			 (int)pid, ts.tgid);
		rc = -EINVAL;
		goto out;
	}
	if (!ts.has_exe) {
		snprintf(err, err_size, "pid %d: no executable (kernel thread or exited)",
			 (int)pid);
		rc = -ESRCH;
		goto out;
	}
	out->tgid = ts.tgid;
	out->start_boottime_ns = ts.start_boottime_ns;
	out->exe_dev = ts.exe_dev;
	out->exe_ino = ts.exe_ino;
	rc = pidfd_alive(pidfd);
	if (rc) {
		snprintf(err, err_size, "pid %d: exited while its identity was read", (int)pid);
		rc = -ESRCH;
	}
out:
	close(pidfd);
	return rc;
}

/* A pidfd from SO_PEERPIDFD names the peer for good, whatever happens to
 * its PID. Read the PID it names, identify that PID, then check the pidfd
 * is still alive: if the peer died and its PID was reused in between, the
 * identity read belongs to the newcomer but the pidfd check fails. */
int eg_proc_identify_pidfd(int pidfd, struct eg_proc_id *out, char *err, size_t err_size)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	long pid = 0;
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(path, "re");
	if (!f) {
		rc = -errno;
		snprintf(err, err_size, "pidfd %d: %s: %s", pidfd, path, strerror(errno));
		return rc;
	}
	while (getline(&line, &cap, f) > 0)
		if (!strncmp(line, "Pid:", 4)) {
			pid = strtol(line + 4, NULL, 10);
			break;
		}
	free(line);
	fclose(f);
	if (pid <= 0) {
		snprintf(err, err_size, "pidfd %d: %s", pidfd,
			 pid < 0 ? "the process has exited" : "not a pidfd");
		return pid < 0 ? -ESRCH : -EBADF;
	}
	rc = eg_proc_identify((pid_t)pid, out, err, err_size);
	if (rc)
		return rc;
	if (pidfd_alive(pidfd)) {
		snprintf(err, err_size, "pid %ld: exited while its identity was read", pid);
		return -ESRCH;
	}
	return 0;
}
