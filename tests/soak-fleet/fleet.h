/* SPDX-License-Identifier: Apache-2.0 */
/* The fleet soak (`make soak-fleet`, `make soak-fleet-quick`): a 3-member
 * etcd cluster on loopback (tests/fleet/etcd_env.c), FS_WORKERS execgated
 * daemons, each with its own scratch cgroup, pin dir, state dir, socket,
 * and one TCP proxy per etcd member (so that one worker can be cut off
 * etcd while the others keep it), bridges (execgate-bridge) and stand-in
 * VMMs (execgate-demo firecracker). The soak process plays the control
 * plane (selections, fences, capabilities, all through execgate-issue and
 * the documented etcd layout) and the front end (route cache, signed
 * refreshes), and counts safety, errors, drops and propagation per fault
 * phase. Everything it makes is removed at exit, also on failure. */
#ifndef EXECGATE_TESTS_SOAK_FLEET_H
#define EXECGATE_TESTS_SOAK_FLEET_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "fleet/etcd.h"
#include "fleet/etcd_env.h"
#include "soak/common.h"

#define FS_WORKERS     6
#define FS_SANDBOXES   8
#define FS_PHASES      16
#define FS_MAX_SAMPLES 100000

struct fs_proxy {
	int lfd;		 /* listening socket, -1 while cut */
	unsigned short port;	 /* fixed for the run */
	unsigned short upstream; /* the etcd member's client port */
	pthread_t thr;
};

struct fs_worker {
	int idx;
	char id[40];
	char dir[200], state[240], pin[128], cgroup[512], socket[256], config[256], log[256];
	pid_t daemon;
	pid_t agent; /* op agent in the worker's cgroup */
	int agent_fd;
	pthread_mutex_t agent_lock;
	struct fs_proxy px[3];
	char etcd_pw[320]; /* etcd user worker-IDX's password file */
	bool cut;
	bool loaded;
	uint8_t id_bin[16];
};

/* One execution of a sandbox: a stand-in VMM, a bridge, on one worker. */
struct fs_exec {
	int worker;
	uint64_t gen;
	pid_t vmm, bridge, stream;
	int stream_fd; /* the stream holder's report pipe */
	char vmm_sock[256], bridge_sock[256];
	uint64_t put_ns; /* put of the selection that superseded it; 0 while selected */
	bool stream_open;
};

struct fs_sandbox {
	int idx;
	char id[40];
	uint8_t id_bin[16];
	pthread_mutex_t lock;
	pthread_cond_t changed;
	/* what the front end is given: the fenced, selected execution */
	int worker;
	uint64_t gen;
	char token[1024];
	char old_token[1024]; /* the previous execution's capability */
	int old_worker;
	uint64_t old_gen;
	bool ran_on[FS_WORKERS];
	/* ran an older execution and was not seen fenced since */
	bool unfenced[FS_WORKERS];
	struct fs_exec ex[64];
	size_t n_ex;
	/* CLOCK_MONOTONIC ns: a fence waited on a worker cut off etcd from
	 * held_from to held_to (UINT64_MAX while it still waits); 0: never */
	uint64_t held_from, held_to;
};

struct fs_phase {
	char name[48];
	uint64_t ops, ok, errors, held, retries, safety, probes, probe_refused, window;
	uint64_t drops, cuts_expected, moves, fence_timeouts, refused_docs;
	uint64_t aborted, uncut, open_failed;
	double seconds;
	/* propagation samples, ms */
	double *ack_ms, *kern_ms;
	size_t n_ack, n_kern;
	char note[512];
	char first_error[3][200]; /* the phase's first errors, for the report */
	/* CPU seconds used in the phase (processes alive at both ends) and
	 * the etcd members' largest db file at its end, MiB */
	double cpu_etcd, cpu_daemons, cpu_soak, etcd_db_mib;
};

struct fs {
	char bin[512];
	char dir[128];
	char prefix[64];
	char cp_seed[300], root_dir[256], root_seed[300];
	struct eg_test_etcd etcd;
	struct eg_etcd *cli; /* the control plane's handle, under cli_lock */
	/* etcd runs with client TLS and auth (docs/fleet.md, "etcd roles"):
	 * the control plane is root, each worker a user with the worker role */
	struct eg_etcd_auth cp_auth;
	pthread_mutex_t cli_lock;
	struct fs_worker w[FS_WORKERS];
	struct fs_sandbox s[FS_SANDBOXES];
	struct fs_phase ph[FS_PHASES];
	int n_ph;
	volatile int cur_ph;
	volatile int stop;
	pthread_mutex_t lock; /* phases, counters */
	bool quick;
};
extern struct fs fs;

void fs_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* tests/soak/common.c */
#define fs_now_ns soak_now_ns
#define fs_rand	  soak_rand
void fs_track(pid_t pid);
void fs_reap(pid_t pid);

/* world.c */
void fs_setup(const char *bin, bool quick);
void fs_cleanup(void);
void fs_daemon_start(struct fs_worker *w);
void fs_daemon_kill(struct fs_worker *w);
void fs_cut(struct fs_worker *w, bool cut);
int fs_run(char *out, size_t size, const char *const *argv); /* exit status */
/* HTTP on a worker's daemon socket: status, body in out. */
int fs_http(struct fs_worker *w, const char *method, const char *path, const char *body, char *out,
	    size_t size);
pid_t fs_spawn_in(const char *cgroup, const char *const *argv, const char *log);

/* agent.c: a process in a worker's cgroup that admits itself through the
 * daemon and talks to a bridge. */
void fs_agent_start(struct fs_worker *w);
enum fs_op_rc { FS_OP_OK, FS_OP_REFRESH, FS_OP_DENY, FS_OP_ERR };
struct fs_op_res {
	int rc; /* enum fs_op_rc */
	char reason[64];
	char signed_verdict[512];
	char reply[256];
};
void fs_agent_op(struct fs_worker *w, const char *bridge, const char *token, const char *line,
		 struct fs_op_res *res);
/* A stream holder: admits, connects, ticks every 100 ms; writes the
 * CLOCK_MONOTONIC ns of the first failed tick to its pipe, then exits. */
pid_t fs_stream_start(struct fs_worker *w, const char *bridge, const char *token, int *pipe_fd);

/* cp.c: the control plane. */
void fs_cp_init(void);
int fs_move(struct fs_sandbox *s, int to);
void fs_publish_forged(void);
void fs_ack_watch_start(void);
void fs_record(struct fs_phase *p, double *arr, size_t *n, double v);
int fs_cap(struct fs_sandbox *s, int worker, uint64_t gen, char *out, size_t size);

#endif
