/* SPDX-License-Identifier: Apache-2.0 */
/* The world of one LSM-tier test: a scratch pin dir with every tier the
 * kernel offers loaded into it (the cgroup tier on a scratch cgroup), a
 * scratch state dir and socket dir, and "agents": forked processes, each a
 * distinct process identity, that make real socket calls on command. All of
 * it is removed by lsm_env_fini(), which Criterion runs after failed tests
 * too.
 *
 * LSM programs are machine-wide, so these tests only run where BPF LSM is
 * offered (test_lsm_common.h), and only register endpoints they created:
 * socket paths under their own directory and VSOCK ports on CID 1
 * (vsock_loopback, inside the VM matrix only). */
#ifndef EXECGATE_TEST_LSM_ENV_H
#define EXECGATE_TEST_LSM_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "abi/abi.h"
#include "loader/records/runtime.h"

#define AGENT_SLOTS   32
#define AGENT_BUF     128
#define AGENT_TIMEOUT 3 /* seconds: SO_RCVTIMEO/SNDTIMEO of agent sockets */

struct agent {
	pid_t pid;
	int ctl; /* socketpair end: commands and replies */
	struct eg_proc_id id;
};

struct lsm_env {
	char pin_dir[128];
	char state_dir[128];
	char dir[128];	  /* socket files */
	char cgroup[256]; /* scratch cgroup, agents may join it */
	bool cgroup_tier; /* the kernel has connect_unix and the tier is loaded */
	bool lsm_tier;
	bool rt_open;
	struct eg_runtime rt;
	struct agent *agents[16];
	size_t nagents;
	struct eg_event events[256]; /* drained from eg_events so far */
	size_t nevents;
};

/* Requires BPF LSM (not offered -> skip, or fail where expected), then
 * builds the environment; any failure fails the test. */
void lsm_env_init(struct lsm_env *e);
void lsm_env_fini(struct lsm_env *e);

/* <dir>/<name> */
void lsm_env_path(const struct lsm_env *e, const char *name, char *out, size_t size);

/* A VSOCK port for this test: unique per test process. */
unsigned lsm_env_vsock_port(unsigned n);

struct lsm_install {
	__u8 sandbox[EG_ID_BYTES];
	__u64 generation;
	__u32 activation;
	pid_t bridge, vmm;
	const char *vmm_socket, *bridge_socket; /* may be NULL */
	unsigned vsock_port;			/* CID 1; 0: none */
};

/* eg_install(); returns 0 or the negative errno (err printed by caller). */
int lsm_env_install(struct lsm_env *e, const struct lsm_install *in, struct eg_install_result *res,
		    char *err, size_t err_size);

/* lsm_env_install(), asserting success and that the install was of kind want. */
void lsm_env_install_ok(struct lsm_env *e, const struct lsm_install *in,
			enum eg_install_outcome want, struct eg_install_result *res);

/* Installs (gen, act) of sandbox with bridge, vmm (NULL: none) and the VSOCK
 * endpoint CID 1:port; asserts success and that the install was of kind want. */
void lsm_env_install_vsock(struct lsm_env *e, const __u8 sandbox[EG_ID_BYTES], __u64 gen, __u32 act,
			   const struct agent *bridge, const struct agent *vmm, unsigned port,
			   enum eg_install_outcome want);

/* After eg_tier_lsm.unload(): returns once lsm/socket_listen is detached. */
void lsm_env_wait_listen_hook_gone(struct lsm_env *e);

/* Sum of a per-reason counter. */
__u64 lsm_env_counter(struct lsm_env *e, __u32 reason);

/* Drains eg_events into e->events; returns how many of all events seen so
 * far match (pid, reason, hook). */
int lsm_env_count_events(struct lsm_env *e, __u32 pid, __u32 reason, __u32 hook);

/* lsm_env_count_events(), of only the events with (audit) or without the
 * EG_EVENT_AUDIT mark. */
int lsm_env_count_events_marked(struct lsm_env *e, __u32 pid, __u32 reason, __u32 hook, bool audit);

/* Sum over CPUs of the eg_would_deny entry (hook, reason): audit mode. */
__u64 lsm_env_would_deny(struct lsm_env *e, __u32 hook, __u32 reason);

/* Switches the global mode (sandbox NULL) or a sandbox's own mode (enum
 * eg_mode), as `execgate mode` does; asserts success. */
void lsm_env_mode(struct lsm_env *e, const __u8 *sandbox, __u32 mode);

/* ---- agents ------------------------------------------------------------------ */

/* Forks an agent (dies with the test); in_cgroup: moves it into the scratch
 * cgroup first. Registered with e, stopped by lsm_env_fini(). */
struct agent *agent_start(struct lsm_env *e, bool in_cgroup);
/* The same, with the agent's pid chosen (kh_fork_as); NULL with errno
 * when want is taken. */
struct agent *agent_start_as(struct lsm_env *e, bool in_cgroup, pid_t want);
void agent_stop(struct agent *a);

/* Each returns a slot (>= 0), a byte count, 0, or -errno of the failed call. */
int agent_connect_unix(struct agent *a, const char *path);
int agent_connect_vsock(struct agent *a, unsigned cid, unsigned port);
int agent_listen_unix(struct agent *a, const char *path); /* unlinks path first */
int agent_listen_vsock(struct agent *a, unsigned port);	  /* VMADDR_CID_ANY */
int agent_accept(struct agent *a, int listen_slot);
int agent_send(struct agent *a, int slot, const char *data);
int agent_recv(struct agent *a, int slot, char *out, size_t size);
int agent_close(struct agent *a, int slot);
int agent_chdir(struct agent *a, const char *dir);

#endif
