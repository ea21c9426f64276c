/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel-test harness: one scratch world per test.
 *
 * kh_setup() creates a scratch cgroup under the cgroup v2 mount (found in
 * /proc/self/mountinfo), a pin dir /sys/fs/bpf/egk-<pid>-<n>-<6 random>, a
 * scratch directory /tmp/ of the same name (state dir, socket files, issuer
 * keys), and
 * runs `execgate load --cgroup <scratch>` into them. kh_teardown() (a
 * Criterion .fini, so it runs after failed tests too) kills every process
 * the test started, unloads, removes pins, the cgroup and the directory.
 *
 * Programs are attached only to the scratch cgroup; processes that should
 * be subject to enforcement are children moved into it (kh_child_start).
 *
 * Not root, or a kernel without connect_unix: kh_not_offered() decides
 * (not_offered.h): a failure, or a loud SKIPPED line when the declared tier
 * or EXECGATE_ALLOW_SKIP=1 says so. */
#ifndef EXECGATE_TEST_KERNEL_HARNESS_H
#define EXECGATE_TEST_KERNEL_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "abi/abi.h"
#include "loader/maps/maps.h"
#include "loader/records/runtime.h"

#define KH_MAX_PIDS 64

struct kh_env {
	char cgroup[512];
	char pin_dir[128];
	char dir[128];	     /* scratch: sockets, issuer keys */
	char state_dir[160]; /* <dir>/state */
	char keys_dir[160];  /* <dir>/issuer: execgate-issue keygen output */
	char kid[32];	     /* key id of the issuer key, after kh_keys() */
	bool cgroup_made, loaded, maps_open;
	struct eg_maps maps;
	pid_t pids[KH_MAX_PIDS];
	size_t npids;
};

/* The current test's environment (one test runs at a time per process). */
extern struct kh_env kh;

void kh_setup(void);
/* The scratch directory (mkdtemp /tmp/<prefix>-<pid>-<n>-XXXXXX, with its
 * issuer dir), and a pin dir and cgroup of the same name: kh_setup's, and
 * the daemon tests'. */
void kh_scratch_make(const char *prefix, unsigned n);
/* Removes a scratch cgroup whose every process is the test's: rmdir, and
 * while it is busy, cgroup.kill (a child reparented away from the test, a
 * slow exit) and rmdir of it and of any cgroup a test left below it, for
 * up to 5 s. 0, or -1 with errno: a cgroup left behind is named by the
 * caller. */
int kh_cgroup_remove(const char *path);
/* kh_setup, but execgate load requires tier (NULL: none; each test checks
 * the tier it needs, as the tcp suite does on 6.1, which has no
 * connect_unix). kh_setup requires "cgroup". */
void kh_setup_requiring(const char *tier);
/* kh_setup and kh_setup_requiring, but the world may be one an earlier
 * test of the run loaded, reset to its state right after that load
 * (world_pool.h): for suites whose tests need a loaded world and not the
 * load itself. kh_teardown hands such a world on. */
void kh_setup_shared(void);
void kh_setup_shared_requiring(const char *tier);
void kh_teardown(void);

/* Whether the world's load attached tier ("cgroup", "lsm" or "tcp"): its
 * first link is pinned (<pin-dir>/links/, user/loader/ the tiers). The same
 * fact `execgate status` prints as "tier T: loaded", without a process
 * start a test: under TCG each costs seconds, and the tier gates ran in
 * most cases of the tcp and situation suites. */
bool kh_tier_loaded(const char *tier);

/* <dir>/<name> */
const char *kh_path(const char *name);

/* Runs `execgate ARGS... --pin-dir P --state-dir S` (the dirs are added
 * unless the first argument is "-n"); captures stdout+stderr into out.
 * Returns the exit status, or -1 when the binary could not run. */
int kh_cli(char *out, size_t size, ...) __attribute__((sentinel));
/* A line "0<TAB>what detail suite::test" in EXECGATE_EXEC_LOG's file, when set. */
void kh_exec_note(const char *what, const char *detail);
/* Runs `execgate-issue ARGS...`. */
int kh_issue(char *out, size_t size, ...) __attribute__((sentinel));
/* The pid of the last program kh_cli, kh_issue or kh_run started. */
extern pid_t kh_last_pid;
/* Any program (absolute path or PATH lookup); no dirs added. */
int kh_run(char *out, size_t size, const char *prog, ...) __attribute__((sentinel));

/* `execgate ARGS...` (args NULL-terminated; no dirs added), stdout and
 * stderr apart. uid 0: as this process; else as uid, gid 65534, with the
 * one supplementary group supp (a member of the daemon's admit group). */
struct kh_split {
	int rc; /* exit status, 128+signal when killed */
	char out[16384], err[4096];
};
void kh_cli_split(struct kh_split *r, uid_t uid, gid_t supp, const char *const *args);

/* keygen into keys_dir and `execgate keys add`; fills kh.kid. */
void kh_keys(void);
/* A token from execgate-issue cap for the given identity (ttl seconds,
 * now_unix 0 = real clock). */
void kh_cap(char *token, size_t size, const char *sandbox, const char *worker, unsigned gen,
	    unsigned act, unsigned ttl, long long now_unix);

/* Sum over CPUs of one eg_counters slot. */
__u64 kh_counter(__u32 reason);
/* Reads every pending event; returns how many match (pid, reason). */
int kh_events(__u32 pid, __u32 reason);
/* The same on another worker's event ring (eg_worker_events_fd). */
int kh_events_in(int ring_fd, __u32 pid, __u32 reason);
/* The admission cache's entries (the pinned eg_admit_cache behind fd) for
 * tgid; *key and *one (either may be NULL): the last one seen. */
int kh_admit_entries(int fd, pid_t tgid, struct eg_admit_key *key, struct eg_admit_entry *one);
/* Sum over CPUs of one eg_would_deny entry (audit mode). */
__u64 kh_would_deny(__u32 hook, __u32 reason);
/* Reads every pending event of pid (0: any) with reason; counts those with
 * and without the audit mark. */
void kh_events_split(__u32 pid, __u32 reason, int *plain, int *audit);
/* kh_events_split() of one hook's events only (enum eg_hook). */
void kh_events_split_hook(__u32 pid, __u32 reason, __u32 hook, int *plain, int *audit);

/* --- processes ------------------------------------------------------------ */

/* A forked child that obeys commands over a socketpair. in_cgroup: it
 * joins the scratch cgroup before answering its first command. */
struct kh_child {
	pid_t pid;
	int ctl;
};

void kh_child_start(struct kh_child *c, bool in_cgroup);
/* The same, with the child's pid chosen (kh_fork_as): -errno when want is
 * taken or cannot be asked for, 0 with c->pid == want. */
int kh_child_start_as(struct kh_child *c, bool in_cgroup, pid_t want);
/* fork(2) with the child's pid chosen when want > 0: clone3's set_tid
 * (Linux 5.5, CAP_SYS_ADMIN). Steering ns_last_pid and forking lost the
 * pid to any process that forked in between: 8 tries in a row on a host
 * that builds beside the tests. Returns as fork() does; -1 with errno
 * EEXIST when want is in use. */
pid_t kh_fork_as(pid_t want);
/* connect(2) to a Unix stream path, then close. Returns 0 or -errno. With
 * tag non-NULL, *tagged says whether the socket carried an eg_sk_tags entry
 * after the connect, and *tag holds it. */
int kh_child_connect(struct kh_child *c, const char *path, struct eg_sk_tag *tag, bool *tagged);
/* Binds and listens on path (backlog 1024); pending connections are
 * accepted and closed between commands. */
int kh_child_listen(struct kh_child *c, const char *path);
/* exec()s python3 in place (same pid, same start time, another binary),
 * which connects to path and exits with the errno (0 on success). Returns
 * 0 or -errno as seen by the new program. The child is gone afterwards. */
int kh_child_exec_connect(struct kh_child *c, const char *path);
void kh_child_stop(struct kh_child *c);
/* Sets net.core.optmem_max, the socket-local-storage budget of every socket
 * the child creates from then on, to value: in a network namespace of the
 * child's own (entered on the first call), so the host's sysctl is never
 * touched. Returns 0 or -errno; -ENOENT when the kernel keeps optmem_max
 * for the initial namespace only (before 6.9). */
int kh_child_optmem(struct kh_child *c, int value);
/* The initial network namespace's net.core.optmem_max: sets it, returns
 * the old value. Machine-wide, so it fails the test outside a VM
 * (EXECGATE_VM, set by the VM matrix). */
int kh_vm_optmem_set(int value);

/* Like kh_child_connect with a non-canonical address: mode 1 passes
 * addrlen = sizeof(struct sockaddr_un) with garbage after the path's NUL,
 * mode 2 passes exactly the path bytes with no NUL at all. The kernel
 * resolves both to the same path, so enforcement must too. */
int kh_child_connect_mode(struct kh_child *c, const char *path, int mode);

/* A child in the cgroup that connects to path in a loop for `seconds`
 * once kh_loop_go() is called, and reports what happened. check, when
 * set, runs in the child on every admitted socket's tag and counts the
 * tags it rejects. */
typedef bool (*kh_tag_check)(const struct eg_sk_tag *tag, void *arg);
struct kh_loop {
	pid_t pid;
	int go_fd, res_fd;
};
struct kh_loop_result {
	unsigned long ok, eperm, other, tagged, bad_tag;
	int other_errno;
};
void kh_loop_start(struct kh_loop *l, const char *path, double seconds, kh_tag_check check,
		   void *arg);
void kh_loop_go(struct kh_loop *l);
struct kh_loop_result kh_loop_wait(struct kh_loop *l);

/* A process outside the cgroup that listens on path and accepts and closes
 * connections until killed: a stand-in for Firecracker's VSOCK socket. */
pid_t kh_listener_start(const char *path);

/* Registers a pid for kill + reap at teardown. */
void kh_track(pid_t pid);

/* The eg_proc_id of a pid, via the loader's /proc reader; asserts. */
struct eg_proc_id kh_proc_id(pid_t pid);

#endif
