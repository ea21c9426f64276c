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
#include "loader/proc_id.h"

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

/* The s_dev of the superblock the file behind fd lives on, as BPF reads it
 * (mm->exe_file->f_inode->i_sb->s_dev): the major:minor that mountinfo
 * shows for the file's mount. stat()'s st_dev is something else on overlayfs
 * (a layer's device: container images, /usr in virtme-ng guests) and btrfs
 * (a per-subvolume device). Mount ids are global, so the target's own
 * mountinfo finds mounts of other mount namespaces too. */
/* The kernel's s_dev of a mount, which BPF sees as exe_file's i_sb->s_dev
 * and which on overlayfs or btrfs is not what stat() reports. Read from
 * pid's mountinfo, the line of mount mnt_id. */
static int mount_sb_dev(pid_t pid, __u64 mnt_id, __u32 *dev)
{
	char path[64], *line = NULL;
	unsigned long long id;
	unsigned maj, min;
	size_t cap = 0;
	int rc = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0)
		if (sscanf(line, "%llu %*d %u:%u", &id, &maj, &min) == 3 && id == mnt_id) {
			*dev = maj << 20 | min;
			rc = 0;
			break;
		}
	fclose(f);
	free(line);
	return rc;
}

/* mnt_id -> s_dev, so that an admission does not read a whole mountinfo
 * (most of the cost of identifying a process, measured with perf in the
 * daemon). Mount ids are global; one reused after an unmount could map to
 * the old device, which gives an identity the kernel never sees: a grant
 * that matches nothing, so the cache can fail closed, never open. */
#define MNT_CACHE 32
static struct {
	__u64 mnt_id;
	__u32 dev;
	bool used;
} mnt_cache[MNT_CACHE];
static unsigned mnt_cache_next;
static pthread_mutex_t mnt_cache_lock = PTHREAD_MUTEX_INITIALIZER;

static int exe_sb_dev(pid_t pid, __u64 mnt_id, __u32 *dev)
{
	int rc;

	pthread_mutex_lock(&mnt_cache_lock);
	for (unsigned i = 0; i < MNT_CACHE; i++)
		if (mnt_cache[i].used && mnt_cache[i].mnt_id == mnt_id) {
			*dev = mnt_cache[i].dev;
			pthread_mutex_unlock(&mnt_cache_lock);
			return 0;
		}
	pthread_mutex_unlock(&mnt_cache_lock);
	rc = mount_sb_dev(pid, mnt_id, dev);
	if (rc)
		return rc;
	pthread_mutex_lock(&mnt_cache_lock);
	mnt_cache[mnt_cache_next].mnt_id = mnt_id;
	mnt_cache[mnt_cache_next].dev = *dev;
	mnt_cache[mnt_cache_next].used = true;
	mnt_cache_next = (mnt_cache_next + 1) % MNT_CACHE;
	pthread_mutex_unlock(&mnt_cache_lock);
	return 0;
}

int eg_proc_identify(pid_t pid, struct eg_proc_id *out, char *err, size_t err_size)
{
	char path[64], val[64];
	struct statx stx;
	int pidfd, exe, rc;
	__u64 ticks;
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
	rc = eg_proc_stat_start_ticks(pid, &ticks);
	if (rc) {
		snprintf(err, err_size, "pid %d: reading /proc/%d/stat: %s", (int)pid, (int)pid,
			 strerror(-rc));
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	exe = open(path, O_PATH | O_CLOEXEC);
	if (exe < 0 || statx(exe, "", AT_EMPTY_PATH, STATX_INO | STATX_MNT_ID, &stx)) {
		rc = errno == ENOENT ? -ESRCH : -errno;
		snprintf(err, err_size, "pid %d: %s: %s", (int)pid, path,
			 errno == ENOENT ? "no executable (kernel thread or exited)"
					 : strerror(errno));
		if (exe >= 0)
			close(exe);
		goto out;
	}
	close(exe);
	out->tgid = (__u32)pid;
	out->start_boottime_ns = ticks * EG_NSEC_PER_TICK;
	out->exe_ino = stx.stx_ino;
	if (!(stx.stx_mask & STATX_MNT_ID) || exe_sb_dev(pid, stx.stx_mnt_id, &out->exe_dev))
		out->exe_dev = eg_kernel_dev(makedev(stx.stx_dev_major, stx.stx_dev_minor));
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
