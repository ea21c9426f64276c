// SPDX-License-Identifier: Apache-2.0
/* TCP stream revocation (loader/revokers/revoke.h): destroys every TCP socket whose
 * eg_inet_tags entry names an execution that is no longer current. Two
 * methods, chosen by what the tier pinned at load (tcp_tier.h):
 *   "iter/tcp"            the pinned iter/tcp revoker
 *                         (bpf/iter_tcp_revoke.bpf.c) calls bpf_sock_destroy
 *                         on each (6.5+);
 *   "iter/tcp+sock_diag"  the pinned finder (bpf/iter_tcp_find.bpf.c) yields
 *                         each one's 4-tuple and cookie, destroyed with
 *                         sock_diag SOCK_DESTROY (revoke_tcp_diag.c).
 *
 * An iterator, like a sock_diag socket, sees the TCP sockets of the network
 * namespace it was created in, only. The connect check records the
 * namespace of every admitted connect in eg_inet_netns (cookie -> last
 * admitted tgid), so this visits the loader's own namespace and each
 * recorded one: a short-lived thread enters it with setns (network
 * namespaces are per thread), checks with SO_NETNS_COOKIE that it is the
 * namespace the kernel recorded (a tgid can be reused or move), and runs
 * the method there. A namespace whose recorded process is gone is looked
 * for among every /proc/PID/ns/net.
 *
 * A namespace that could not be entered (setns refused by a seccomp filter
 * such as systemd's RestrictNamespaces, or without CAP_SYS_ADMIN) is an
 * error naming it and the reason, never a silent zero: its stale streams
 * are still flowing. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "abi/revoke_tcp_abi.h"
#include "kcompat.h"
#include "loader/maps/pins.h"
#include "loader/revokers/revoke.h"
#include "loader/records/runtime.h"
#include "loader/tiers/tcp_tier.h"

#define MAX_NETNS 256 /* visited per revocation */

static bool force_diag;

void eg_revoke_tcp_force_diag(bool on)
{
	force_diag = on;
}

/* The calling thread's network namespace cookie. Any socket carries it:
 * an AF_UNIX one needs no AF_INET in the unit's RestrictAddressFamilies. */
static int netns_cookie(__u64 *cookie)
{
	socklen_t len = sizeof(*cookie);
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = 0;

	if (s < 0)
		return -errno;
	if (getsockopt(s, SOL_SOCKET, SO_NETNS_COOKIE, cookie, &len))
		rc = -errno;
	close(s);
	return rc;
}

/* Creates the bpf_sock_destroy iterator in the calling thread's namespace
 * and reads it to the end. A socket its sandbox's audit mode left running
 * counts as would-cut when it is the target's (another sandbox's is that
 * sandbox's business: its own revocation reports it). */
static int run_iter(int link_fd, struct eg_tcp_counts *c)
{
	static __thread struct eg_tcp_cut buf[4096];
	ssize_t n;
	int fd, rc = 0;

	fd = bpf_iter_create(link_fd);
	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (size_t i = 0; i < (size_t)n / sizeof(buf[0]); i++) {
			if (buf[i].flags & EG_TCP_STALE_AUDIT)
				c->would_cut +=
				    !memcmp(buf[i].sandbox, c->sandbox, sizeof(c->sandbox));
			else
				(*(buf[i].rc == 0 ? &c->cut : &c->failed))++;
		}
	if (n < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* The method, in the calling thread's namespace. */
static int run_method(int link_fd, bool diag, struct eg_tcp_counts *c)
{
	return diag ? eg_tcp_diag_cut(link_fd, c) : run_iter(link_fd, c);
}

struct ns_job {
	int link_fd;
	bool diag;
	__u64 cookie; /* the namespace wanted */
	__u32 tgid;   /* where it was last seen */
	struct eg_tcp_counts counts;
	bool found;
	int rc;
	int enter_rc;	    /* first failure to enter or identify a namespace */
	char enter_why[96]; /* what failed, e.g. "setns" */
};

static void enter_failed(struct ns_job *j, const char *what, int rc)
{
	if (j->enter_rc)
		return;
	j->enter_rc = rc;
	snprintf(j->enter_why, sizeof(j->enter_why), "%s", what);
}

/* In a thread: enters ns_fd, and runs the iterator if it is job's. */
static bool try_ns(struct ns_job *j, int ns_fd)
{
	__u64 c;
	int rc;

	if (setns(ns_fd, CLONE_NEWNET)) {
		enter_failed(j, "setns(CLONE_NEWNET)", -errno);
		return false;
	}
	rc = netns_cookie(&c);
	if (rc) {
		enter_failed(j, "SO_NETNS_COOKIE", rc);
		return false;
	}
	if (c != j->cookie)
		return false;
	j->found = true;
	j->rc = run_method(j->link_fd, j->diag, &j->counts);
	return true;
}

static bool try_pid_ns(struct ns_job *j, const char *pid, ino_t *seen, size_t *nseen)
{
	char path[300];
	struct stat st;
	bool done;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/ns/net", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		/* Gone (ENOENT, ESRCH) is not an error; no access is. */
		if (errno == EACCES || errno == EPERM)
			enter_failed(j, "open /proc/PID/ns/net", -errno);
		return false;
	}
	if (seen) {
		if (fstat(fd, &st)) {
			close(fd);
			return false;
		}
		for (size_t i = 0; i < *nseen; i++)
			if (seen[i] == st.st_ino) {
				close(fd);
				return false;
			}
		if (*nseen < MAX_NETNS * 4)
			seen[(*nseen)++] = st.st_ino;
	}
	done = try_ns(j, fd);
	close(fd);
	return done;
}

static void *ns_thread(void *arg)
{
	struct ns_job *j = arg;
	static __thread ino_t seen[MAX_NETNS * 4];
	size_t nseen = 0;
	struct dirent *de;
	char pid[16];
	DIR *d;

	snprintf(pid, sizeof(pid), "%u", j->tgid);
	if (try_pid_ns(j, pid, NULL, NULL))
		return NULL;
	/* The recorded process is gone or elsewhere: any process in the
	 * namespace will do. */
	d = opendir("/proc");
	if (!d) {
		enter_failed(j, "opendir /proc", -errno);
		return NULL;
	}
	while (!j->found && (de = readdir(d)))
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
			try_pid_ns(j, de->d_name, seen, &nseen);
	closedir(d);
	return NULL;
}

/* The pinned program of the method to use: bpf_sock_destroy's unless it
 * is missing or tests force sock_diag. *diag tells which. */
static int open_method(const char *pin_dir, bool *diag, char *pin, size_t pin_size)
{
	int rc, fd = -ENOENT;

	*diag = force_diag;
	if (!*diag) {
		rc = eg_link_pin_path(pin, pin_size, pin_dir, EG_TCP_ITER_PIN);
		if (rc)
			return rc;
		fd = bpf_obj_get(pin);
		if (fd >= 0 || errno != ENOENT)
			return fd >= 0 ? fd : -errno;
		*diag = true;
	}
	rc = eg_link_pin_path(pin, pin_size, pin_dir, EG_TCP_ITER_FIND_PIN);
	if (rc)
		return rc;
	fd = bpf_obj_get(pin);
	return fd >= 0 ? fd : -errno;
}

static int revoke_tcp(struct eg_runtime *rt, const struct eg_revoke_target *t,
		      struct eg_revoke_count *out, char *err, size_t err_size)
{
	static struct ns_job jobs[MAX_NETNS];
	struct eg_tcp_counts own_counts = {0};
	int nsfd = rt->maps.fd[EG_MAP_INET_NETNS];
	char pin[EG_PIN_PATH_MAX];
	__u64 own, key = 0, next;
	size_t njobs = 0;
	bool have = false, more, diag;
	int prog_fd, link_fd = -1, rc;
	const char *m;

	prog_fd = open_method(rt->pin_dir, &diag, pin, sizeof(pin));
	if (prog_fd < 0) {
		rc = prog_fd;
		if (rc == -ENOENT && nsfd >= 0 && bpf_map_get_next_key(nsfd, NULL, &next)) {
			return 0; /* no tcp tier revoker and nothing ever admitted */
		}
		snprintf(err, err_size,
			 "%s: %s (tcp tier not loaded, or a kernel with neither bpf_sock_destroy "
			 "nor sock_diag SOCK_DESTROY)",
			 pin, strerror(-rc));
		return rc;
	}
	m = diag ? EG_TCP_METHOD_DIAG : EG_TCP_METHOD_KFUNC;
	out->method = m;
	link_fd = bpf_link_create(prog_fd, 0, BPF_TRACE_ITER, NULL);
	if (link_fd < 0) {
		rc = -errno;
		snprintf(err, err_size, "%s: creating the iterator link: %s", m, strerror(-rc));
		goto out;
	}
	rc = netns_cookie(&own);
	if (rc) {
		snprintf(err, err_size, "SO_NETNS_COOKIE: %s", strerror(-rc));
		goto out;
	}
	memcpy(own_counts.sandbox, t->sandbox, sizeof(own_counts.sandbox));
	rc = run_method(link_fd, diag, &own_counts);
	out->cut += own_counts.cut;
	out->unreachable += own_counts.failed;
	out->would_cut += own_counts.would_cut;
	if (rc) {
		snprintf(err, err_size, "%s: %s", m, strerror(-rc));
		goto out;
	}
	while (nsfd >= 0 && njobs < MAX_NETNS &&
	       !bpf_map_get_next_key(nsfd, have ? &key : NULL, &next)) {
		struct eg_inet_netns v;

		have = true;
		key = next;
		if (key == own || bpf_map_lookup_elem(nsfd, &key, &v))
			continue;
		memset(&jobs[njobs], 0, sizeof(jobs[njobs]));
		jobs[njobs].link_fd = link_fd;
		jobs[njobs].diag = diag;
		jobs[njobs].cookie = key;
		jobs[njobs].tgid = v.tgid;
		memcpy(jobs[njobs].counts.sandbox, t->sandbox, sizeof(t->sandbox));
		njobs++;
	}
	/* More namespaces than one pass visits: the rest are not cut this
	 * time, which is a failure to say, not a count to drop. */
	more = false;
	for (__u64 k = key;
	     nsfd >= 0 && njobs == MAX_NETNS && have && !bpf_map_get_next_key(nsfd, &k, &next);
	     k = next)
		if (next != own) {
			more = true;
			break;
		}
	/* One thread per namespace, one at a time: setns changes only the
	 * thread that calls it, and the thread ends with it. */
	for (size_t i = 0; i < njobs; i++) {
		pthread_t th;

		if (pthread_create(&th, NULL, ns_thread, &jobs[i])) {
			rc = -EAGAIN;
			snprintf(err, err_size, "netns %llu: no thread",
				 (unsigned long long)jobs[i].cookie);
			goto out;
		}
		pthread_join(th, NULL);
		out->cut += jobs[i].counts.cut;
		out->unreachable += jobs[i].counts.failed;
		out->would_cut += jobs[i].counts.would_cut;
		if (!jobs[i].found && jobs[i].enter_rc) {
			/* Not entered: its streams may be alive. Keep it. */
			if (!rc) {
				rc = jobs[i].enter_rc;
				snprintf(err, err_size,
					 "netns %llu: %s refused: %s (RestrictNamespaces? "
					 "CAP_SYS_ADMIN?): its stale streams were not cut",
					 (unsigned long long)jobs[i].cookie, jobs[i].enter_why,
					 strerror(-rc));
			}
		} else if (!jobs[i].found) {
			/* No process is in it any more; its sockets are gone
			 * with it or held from another namespace (docs:
			 * operators.md, TCP). Forget it. */
			bpf_map_delete_elem(nsfd, &jobs[i].cookie);
		} else if (jobs[i].rc && !rc) {
			rc = jobs[i].rc;
			snprintf(err, err_size, "%s in netns %llu: %s", m,
				 (unsigned long long)jobs[i].cookie, strerror(-rc));
		}
	}
	if (more && !rc) {
		rc = -E2BIG;
		snprintf(err, err_size,
			 "more than %d network namespaces recorded in eg_inet_netns: the streams "
			 "of the others were not cut",
			 MAX_NETNS);
	}
out:
	if (link_fd >= 0)
		close(link_fd);
	close(prog_fd);
	return rc;
}

const struct eg_revoker eg_revoker_tcp = {"tcp", EG_REVOKE_TCP, revoke_tcp};
