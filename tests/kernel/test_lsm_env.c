// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/vm_sockets.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <criterion/criterion.h>
#include "harness.h"
#include "loader/tiers/cgroup.h"
#include "loader/tiers/lsm_tier.h"
#include "loader/maps/maps.h"
#include "loader/records/mode.h"
#include "loader/maps/pins.h"
#include "loader/process/proc_id.h"
#include "loader/tiers/tier.h"
#include "test_lsm_common.h"
#include "test_lsm_env.h"
#include "world_pool.h"

enum agent_op {
	AG_CONNECT_UNIX,
	AG_CONNECT_VSOCK,
	AG_LISTEN_UNIX,
	AG_LISTEN_VSOCK,
	AG_ACCEPT,
	AG_SEND,
	AG_RECV,
	AG_CLOSE,
	AG_CHDIR,
};

struct ag_msg {
	int op;
	int slot;
	unsigned cid, port;
	int len;
	char buf[AGENT_BUF];
};

struct ag_reply {
	int rc; /* >= 0, or -errno */
	int len;
	char buf[AGENT_BUF];
};

static void set_timeouts(int fd)
{
	struct timeval tv = {.tv_sec = AGENT_TIMEOUT};

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static int slot_put(int *fds, int fd)
{
	for (int i = 0; i < AGENT_SLOTS; i++)
		if (fds[i] < 0) {
			fds[i] = fd;
			return i;
		}
	close(fd);
	return -EMFILE;
}

static int unix_addr(const char *path, struct sockaddr_un *sun)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun->sun_path))
		return -ENAMETOOLONG;
	strcpy(sun->sun_path, path);
	return 0;
}

static int agent_do(int *fds, struct ag_msg *m, struct ag_reply *r)
{
	struct sockaddr_vm svm = {.svm_family = AF_VSOCK};
	struct sockaddr_un sun;
	int fd, rc;
	ssize_t n;

	if (m->op != AG_CONNECT_UNIX && m->op != AG_CONNECT_VSOCK && m->op != AG_LISTEN_UNIX &&
	    m->op != AG_LISTEN_VSOCK && m->op != AG_CHDIR &&
	    (m->slot < 0 || m->slot >= AGENT_SLOTS || fds[m->slot] < 0))
		return -EBADF;
	switch (m->op) {
	case AG_CONNECT_UNIX:
	case AG_LISTEN_UNIX:
		rc = unix_addr(m->buf, &sun);
		if (rc)
			return rc;
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		set_timeouts(fd);
		if (m->op == AG_CONNECT_UNIX)
			rc = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
		else {
			unlink(m->buf);
			rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
			if (!rc)
				rc = listen(fd, 16);
		}
		if (rc) {
			rc = -errno;
			close(fd);
			return rc;
		}
		return slot_put(fds, fd);
	case AG_CONNECT_VSOCK:
	case AG_LISTEN_VSOCK:
		fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		set_timeouts(fd);
		svm.svm_port = m->port;
		if (m->op == AG_CONNECT_VSOCK) {
			svm.svm_cid = m->cid;
			rc = connect(fd, (struct sockaddr *)&svm, sizeof(svm));
		} else {
			svm.svm_cid = VMADDR_CID_ANY;
			rc = bind(fd, (struct sockaddr *)&svm, sizeof(svm));
			if (!rc)
				rc = listen(fd, 16);
		}
		if (rc) {
			rc = -errno;
			close(fd);
			return rc;
		}
		return slot_put(fds, fd);
	case AG_ACCEPT:
		fd = accept4(fds[m->slot], NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			return -errno;
		set_timeouts(fd);
		return slot_put(fds, fd);
	case AG_SEND:
		/* No MSG_NOSIGNAL: a SIGPIPE would kill the agent and fail the
		 * test, which is how the tests check that a revoked stream
		 * fails with EPIPE and no signal. */
		n = send(fds[m->slot], m->buf, m->len, 0);
		return n < 0 ? -errno : (int)n;
	case AG_RECV:
		n = recv(fds[m->slot], r->buf, sizeof(r->buf), 0);
		if (n < 0)
			return -errno;
		r->len = (int)n;
		return (int)n;
	case AG_CLOSE:
		close(fds[m->slot]);
		fds[m->slot] = -1;
		return 0;
	case AG_CHDIR:
		return chdir(m->buf) ? -errno : 0;
	}
	return -EINVAL;
}

static void agent_main(int ctl)
{
	int fds[AGENT_SLOTS];
	struct ag_msg m;
	struct ag_reply r;

	for (int i = 0; i < AGENT_SLOTS; i++)
		fds[i] = -1;
	for (;;) {
		ssize_t n = read(ctl, &m, sizeof(m));

		if (n != sizeof(m))
			_exit(0);
		memset(&r, 0, sizeof(r));
		r.rc = agent_do(fds, &m, &r);
		if (write(ctl, &r, sizeof(r)) != sizeof(r))
			_exit(1);
	}
}

struct agent *agent_start(struct lsm_env *e, bool in_cgroup)
{
	struct agent *a = agent_start_as(e, in_cgroup, 0);

	cr_assert_not_null(a, "fork: %s", strerror(errno));
	return a;
}

struct agent *agent_start_as(struct lsm_env *e, bool in_cgroup, pid_t want)
{
	struct agent *a = calloc(1, sizeof(*a));
	char procs[300], num[32], err[256];
	int sv[2], fd, rc;

	cr_assert_not_null(a);
	cr_assert_lt(e->nagents, sizeof(e->agents) / sizeof(e->agents[0]), "too many agents");
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	a->pid = kh_fork_as(want);
	if (a->pid < 0) {
		rc = errno;
		close(sv[0]);
		close(sv[1]);
		free(a);
		errno = rc;
		return NULL;
	}
	if (a->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(sv[0]);
		agent_main(sv[1]);
	}
	close(sv[1]);
	a->ctl = sv[0];
	e->agents[e->nagents++] = a;
	if (in_cgroup) {
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", e->cgroup);
		snprintf(num, sizeof(num), "%d\n", (int)a->pid);
		fd = open(procs, O_WRONLY | O_CLOEXEC);
		cr_assert_geq(fd, 0, "%s: %s", procs, strerror(errno));
		cr_assert_eq(write(fd, num, strlen(num)), (ssize_t)strlen(num),
			     "moving agent %d into %s: %s", (int)a->pid, e->cgroup,
			     strerror(errno));
		close(fd);
	}
	rc = eg_proc_identify(a->pid, &a->id, err, sizeof(err));
	cr_assert_eq(rc, 0, "agent identity: %s", err);
	return a;
}

void agent_stop(struct agent *a)
{
	if (!a || a->pid <= 0)
		return;
	kill(a->pid, SIGKILL);
	waitpid(a->pid, NULL, 0);
	close(a->ctl);
	a->pid = 0;
}

static int agent_call(struct agent *a, struct ag_msg *m, struct ag_reply *r)
{
	cr_assert_eq(write(a->ctl, m, sizeof(*m)), (ssize_t)sizeof(*m), "agent %d: command: %s",
		     (int)a->pid, strerror(errno));
	cr_assert_eq(read(a->ctl, r, sizeof(*r)), (ssize_t)sizeof(*r),
		     "agent %d died (signal?) during op %d", (int)a->pid, m->op);
	return r->rc;
}

static int agent_path_op(struct agent *a, int op, const char *path)
{
	struct ag_msg m = {.op = op};
	struct ag_reply r;

	snprintf(m.buf, sizeof(m.buf), "%s", path);
	return agent_call(a, &m, &r);
}

int agent_connect_unix(struct agent *a, const char *path)
{
	return agent_path_op(a, AG_CONNECT_UNIX, path);
}

int agent_listen_unix(struct agent *a, const char *path)
{
	return agent_path_op(a, AG_LISTEN_UNIX, path);
}

int agent_chdir(struct agent *a, const char *dir)
{
	return agent_path_op(a, AG_CHDIR, dir);
}

int agent_connect_vsock(struct agent *a, unsigned cid, unsigned port)
{
	struct ag_msg m = {.op = AG_CONNECT_VSOCK, .cid = cid, .port = port};
	struct ag_reply r;

	return agent_call(a, &m, &r);
}

int agent_listen_vsock(struct agent *a, unsigned port)
{
	struct ag_msg m = {.op = AG_LISTEN_VSOCK, .port = port};
	struct ag_reply r;

	return agent_call(a, &m, &r);
}

static int agent_slot_op(struct agent *a, int op, int slot)
{
	struct ag_msg m = {.op = op, .slot = slot};
	struct ag_reply r;

	return agent_call(a, &m, &r);
}

int agent_accept(struct agent *a, int listen_slot)
{
	return agent_slot_op(a, AG_ACCEPT, listen_slot);
}

int agent_close(struct agent *a, int slot)
{
	return agent_slot_op(a, AG_CLOSE, slot);
}

int agent_send(struct agent *a, int slot, const char *data)
{
	struct ag_msg m = {.op = AG_SEND, .slot = slot};
	struct ag_reply r;

	m.len = (int)strlen(data);
	memcpy(m.buf, data, m.len);
	return agent_call(a, &m, &r);
}

int agent_recv(struct agent *a, int slot, char *out, size_t size)
{
	struct ag_msg m = {.op = AG_RECV, .slot = slot};
	struct ag_reply r;
	int rc;

	rc = agent_call(a, &m, &r);
	if (rc >= 0 && out && size) {
		size_t n = (size_t)r.len < size - 1 ? (size_t)r.len : size - 1;

		memcpy(out, r.buf, n);
		out[n] = '\0';
	}
	return rc;
}

/* ---- environment ------------------------------------------------------------ */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void rm_tree(const char *path)
{
	if (path[0])
		nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void lsm_env_path(const struct lsm_env *e, const char *name, char *out, size_t size)
{
	snprintf(out, size, "%s/%s", e->dir, name);
}

unsigned lsm_env_vsock_port(unsigned n)
{
	return 20000 + ((unsigned)getpid() % 20000) * 4 + n;
}

/* An LSM test's world as the world pool sees it (world_pool.h): the
 * socket dir holds the record. */
static struct kh_world lsm_world(struct lsm_env *e)
{
	return (struct kh_world){
	    .dir = e->dir,
	    .cgroup = e->cgroup,
	    .pin_dir = e->pin_dir,
	    .state_dir = e->state_dir,
	    .dir_size = sizeof(e->dir),
	    .cgroup_size = sizeof(e->cgroup),
	    .pin_size = sizeof(e->pin_dir),
	    .state_size = sizeof(e->state_dir),
	};
}

static void lsm_env_destroy(struct lsm_env *e)
{
	struct eg_tier_ctx ctx = {.pin_dir = e->pin_dir, .cgroup_path = e->cgroup};
	char err[512];

	if (e->rt_open)
		eg_runtime_close(&e->rt);
	e->rt_open = false;
	if (e->lsm_tier)
		eg_tier_lsm.unload(&ctx, err, sizeof(err));
	if (e->cgroup_tier)
		eg_tier_cgroup.unload(&ctx, err, sizeof(err));
	e->lsm_tier = e->cgroup_tier = false;
	if (e->pin_dir[0])
		eg_pins_remove_maps(e->pin_dir);
	rm_tree(e->state_dir);
	rm_tree(e->dir);
	if (e->cgroup[0] && kh_cgroup_remove(e->cgroup))
		cr_log_info("scratch cgroup %s left behind: %s", e->cgroup, strerror(errno));
	memset(e, 0, sizeof(*e));
}

void lsm_env_init(struct lsm_env *e)
{
	struct eg_tier_ctx ctx;
	struct kh_world w;
	char err[512], root[200], why[256], link[300];
	bool taken;
	int rc;

	eg_test_require_lsm();
	memset(e, 0, sizeof(*e));
	/* A world an earlier LSM test of the run loaded, reset (world_pool.h). */
	w = lsm_world(e);
	taken = kh_world_take("lsm", &w);
	if (e->dir[0]) {
		e->lsm_tier = true;
		snprintf(link, sizeof(link), "%s/links/cgroup_connect_unix", e->pin_dir);
		e->cgroup_tier = access(link, F_OK) == 0;
		if (taken &&
		    !eg_runtime_open(&e->rt, e->pin_dir, e->state_dir, true, err, sizeof(err))) {
			e->rt_open = true;
			return;
		}
		lsm_env_destroy(e);
	}
	snprintf(e->pin_dir, sizeof(e->pin_dir), "/sys/fs/bpf/egt-lsm-%d", (int)getpid());
	snprintf(e->state_dir, sizeof(e->state_dir), "/tmp/egt-lsm-state-%d", (int)getpid());
	snprintf(e->dir, sizeof(e->dir), "/tmp/egt-lsm-%d", (int)getpid());
	rm_tree(e->dir);
	cr_assert_eq(mkdir(e->dir, 0755), 0, "%s: %s", e->dir, strerror(errno));

	rc = eg_cgroup2_root(root, sizeof(root));
	cr_assert_eq(rc, 0, "no cgroup v2 mount");
	snprintf(e->cgroup, sizeof(e->cgroup), "%s/egt-lsm-%d", root, (int)getpid());
	cr_assert(mkdir(e->cgroup, 0755) == 0 || errno == EEXIST, "%s: %s", e->cgroup,
		  strerror(errno));

	rc = eg_pins_prepare(e->pin_dir, err, sizeof(err));
	cr_assert_eq(rc, 0, "pins: %s", err);
	ctx = (struct eg_tier_ctx){.pin_dir = e->pin_dir, .cgroup_path = e->cgroup};
	if (eg_tier_cgroup.probe(&ctx, why, sizeof(why)) == 0) {
		rc = eg_tier_cgroup.load(&ctx, err, sizeof(err));
		cr_assert_eq(rc, 0, "cgroup tier: %s", err);
		e->cgroup_tier = true;
	}
	rc = eg_tier_lsm.load(&ctx, err, sizeof(err));
	cr_assert_eq(rc, 0, "lsm tier: %s", err);
	e->lsm_tier = true;
	rc = eg_runtime_open(&e->rt, e->pin_dir, e->state_dir, true, err, sizeof(err));
	cr_assert_eq(rc, 0, "runtime: %s", err);
	e->rt_open = true;
	w = lsm_world(e);
	kh_world_record("lsm", &w);
}

void lsm_env_fini(struct lsm_env *e)
{
	struct kh_world w;

	for (size_t i = 0; i < e->nagents; i++) {
		agent_stop(e->agents[i]);
		free(e->agents[i]);
	}
	e->nagents = 0;
	if (e->rt_open)
		eg_runtime_close(&e->rt);
	e->rt_open = false;
	/* Handed on to the next LSM test when it can be (world_pool.h). */
	w = lsm_world(e);
	if (e->lsm_tier && kh_world_give(&w)) {
		memset(e, 0, sizeof(*e));
		return;
	}
	lsm_env_destroy(e);
}

int lsm_env_install(struct lsm_env *e, const struct lsm_install *in, struct eg_install_result *res,
		    char *err, size_t err_size)
{
	static const __u8 worker[EG_ID_BYTES] = {0xa0, 0x0a, 1};
	struct eg_install_spec req;

	memset(&req, 0, sizeof(req));
	memcpy(req.sandbox, in->sandbox, EG_ID_BYTES);
	memcpy(req.worker, worker, EG_ID_BYTES);
	req.substrate = EG_SUBSTRATE_FC_HOST;
	req.generation = in->generation;
	req.activation = in->activation;
	req.bridge_pid = in->bridge;
	req.vmm_pid = in->vmm;
	if (in->vmm_socket)
		req.vmm_sockets[req.n_vmm_sockets++] = in->vmm_socket;
	if (in->bridge_socket)
		req.bridge_sockets[req.n_bridge_sockets++] = in->bridge_socket;
	if (in->vsock_port) {
		req.vsock[0].cid = VMADDR_CID_LOCAL;
		req.vsock[0].port = in->vsock_port;
		req.n_vsock = 1;
	}
	return eg_install(&e->rt, &req, res, err, err_size);
}

void lsm_env_install_ok(struct lsm_env *e, const struct lsm_install *in,
			enum eg_install_outcome want, struct eg_install_result *res)
{
	char err[512];
	int rc;

	rc = lsm_env_install(e, in, res, err, sizeof(err));
	cr_assert_eq(rc, 0, "install generation %llu attempt %u: %s",
		     (unsigned long long)in->generation, in->activation, err);
	cr_assert_eq(res->outcome, want, "install kind %s", eg_install_outcome_name(res->outcome));
}

void lsm_env_install_vsock(struct lsm_env *e, const __u8 sandbox[EG_ID_BYTES], __u64 gen, __u32 act,
			   const struct agent *bridge, const struct agent *vmm, unsigned port,
			   enum eg_install_outcome want)
{
	struct lsm_install in = {.generation = gen,
				 .activation = act,
				 .bridge = bridge->pid,
				 .vmm = vmm ? vmm->pid : 0,
				 .vsock_port = port};
	struct eg_install_result res;

	memcpy(in.sandbox, sandbox, EG_ID_BYTES);
	lsm_env_install_ok(e, &in, want, &res);
}

/* Unlinking a link pin detaches the program only after an RCU grace period
 * and a work item: poll with a throwaway listener until listen() no longer
 * gets an owner tag. */
void lsm_env_wait_listen_hook_gone(struct lsm_env *e)
{
	struct eg_listener_tag tag;

	for (int i = 0; i < 300; i++) {
		struct sockaddr_un sun = {.sun_family = AF_UNIX};
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

		cr_assert_geq(fd, 0);
		/* abstract name: nothing on disk */
		snprintf(sun.sun_path + 1, sizeof(sun.sun_path) - 1, "egt-probe-%d-%d",
			 (int)getpid(), i);
		cr_assert_eq(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
		cr_assert_eq(listen(fd, 1), 0);
		rc = bpf_map_lookup_elem(e->rt.maps.fd[EG_MAP_LISTENER_TAGS], &fd, &tag);
		close(fd);
		if (rc && errno == ENOENT)
			return;
		usleep(10000);
	}
	cr_assert_fail("lsm/socket_listen still runs 3 s after unload");
}

__u64 lsm_env_counter(struct lsm_env *e, __u32 reason)
{
	__u64 c[EG_K_REASON_COUNT];

	cr_assert_eq(eg_counters_read(&e->rt.maps, c), 0, "reading eg_counters");
	return c[reason];
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct lsm_env *e = ctx;

	if (size >= sizeof(struct eg_event) &&
	    e->nevents < sizeof(e->events) / sizeof(e->events[0]))
		memcpy(&e->events[e->nevents++], data, sizeof(struct eg_event));
	return 0;
}

/* mark: -1 any event, else 1 only audit-marked ones, 0 only unmarked ones */
static int count_events(struct lsm_env *e, __u32 pid, __u32 reason, __u32 hook, int mark)
{
	struct ring_buffer *rb;
	int n = 0;

	rb = ring_buffer__new(e->rt.maps.fd[EG_MAP_EVENTS], on_event, e, NULL);
	cr_assert_not_null(rb, "ring buffer: %s", strerror(errno));
	ring_buffer__consume(rb);
	ring_buffer__free(rb);
	for (size_t i = 0; i < e->nevents; i++)
		if (e->events[i].pid == pid && e->events[i].reason == reason &&
		    e->events[i].hook == hook &&
		    (mark < 0 || !!(e->events[i].flags & EG_EVENT_AUDIT) == mark))
			n++;
	return n;
}

int lsm_env_count_events(struct lsm_env *e, __u32 pid, __u32 reason, __u32 hook)
{
	return count_events(e, pid, reason, hook, -1);
}

int lsm_env_count_events_marked(struct lsm_env *e, __u32 pid, __u32 reason, __u32 hook, bool audit)
{
	return count_events(e, pid, reason, hook, audit ? 1 : 0);
}

__u64 lsm_env_would_deny(struct lsm_env *e, __u32 hook, __u32 reason)
{
	static __u64 c[EG_HOOK_SLOTS][EG_COUNTER_SLOTS];

	cr_assert_lt(hook, EG_HOOK_SLOTS);
	cr_assert_lt(reason, EG_COUNTER_SLOTS);
	cr_assert_eq(eg_would_deny_read(&e->rt.maps, c), 0, "reading eg_would_deny");
	return c[hook][reason];
}

void lsm_env_mode(struct lsm_env *e, const __u8 *sandbox, __u32 mode)
{
	char err[512];
	__u32 before;
	int rc;

	if (sandbox)
		rc = eg_mode_switch_sandbox(&e->rt, sandbox, mode, "test", &before, err,
					    sizeof(err));
	else
		rc = eg_mode_switch_global(&e->rt, mode, "test", &before, err, sizeof(err));
	cr_assert_eq(rc, 0, "mode %s: %s", eg_mode_name(mode), err);
}
