/* SPDX-License-Identifier: Apache-2.0 */
/* The soak (`make soak`, `make soak-quick`): long runs on the host kernel
 * (cgroup tier) that check every decision against a reference log the test
 * keeps. One scratch world per run: a cgroup, a pin dir and a directory of
 * its own, removed at exit even after a failure or a signal.
 *
 * The soak talks to execgate only through the public API
 * (include/execgate/execgate.h), the CLI binaries, and the pinned maps as
 * bpf/abi/abi.h defines them. It plays the control plane itself:
 * tokens are signed in process with a key it generates (docs/capability.md
 * is the wire format). */
#ifndef EXECGATE_TESTS_SOAK_H
#define EXECGATE_TESTS_SOAK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <execgate/execgate.h>
#include "abi/abi.h"
#include "loader/maps/view.h"
#include "core/capability.h"
#include "soak/common.h"

#define SOAK_WORKER "a0000000-0000-4000-8000-0000000000aa"

struct soak_env {
	char dir[128];	     /* /tmp/egsoak-<pid> */
	char state_dir[160]; /* <dir>/state */
	char pin_dir[128];   /* /sys/fs/bpf/egsoak-<pid> */
	char cgroup[512];
	char bin[512]; /* the execgate CLI */
	bool cgroup_made, loaded;
	struct eg_worker *w;
	uint8_t sk[64], kid[EG_KEY_ID_LEN];
	__u8 worker[EG_ID_BYTES];
};
extern struct soak_env se;

/* One scenario's figures, as the table prints them. */
struct soak_result {
	const char *name;
	unsigned long runs;	 /* kills, flips, or entries written */
	unsigned long decisions; /* connects checked against the reference log */
	unsigned long wrong_allow, wrong_deny, torn, unguarded, other;
	double seconds;
	char note[2048];
	bool failed; /* a setup step or an invariant other than the counts */
};

int soak_setup(const char *bin_dir);
void soak_cleanup(void);
void soak_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Children: every one is tracked, killed and reaped at cleanup, and dies
 * with the soak (PR_SET_PDEATHSIG). */
void soak_track(pid_t pid);
void soak_reap(pid_t pid); /* SIGKILL + wait + untrack */
pid_t soak_fork(void);	   /* 0 in the child */
pid_t soak_dummy(void);	   /* sleeps until killed; outside the cgroup */
/* Listens on both paths (outside the cgroup), accepts and closes. */
pid_t soak_listener(const char *a, const char *b);
/* Like soak_listener, but holds every accepted end open until its peer
 * closes or is cut (streams.c). */
pid_t soak_hold_listener(const char *a, const char *b);
/* A process in the scratch cgroup that opens Unix streams to path and
 * holds them (streams.c), for the kill scenario's bridge. */
struct soak_agent {
	pid_t pid;
	int ctl;
};
void soak_agent_start(struct soak_agent *a, const char *path);
/* 'c': connect one stream: its index, or -errno; 's': send a byte on
 * stream idx: 0 (alive) or -errno (EPIPE once cut); 'x': close idx. */
int soak_agent_cmd(struct soak_agent *a, char op, int idx);
/* In a child: join the scratch cgroup and optionally one CPU. */
void soak_enter(int cpu);
/* The identity BPF compares for pid (eg_worker_identify). */
struct eg_proc_id soak_identify(pid_t pid);
/* One blocking connect to a Unix stream path: 0 or -errno. */
int soak_connect(const char *path);

/* Runs the CLI with ARGS... plus --pin-dir/--state-dir; returns the pid.
 * stdout+stderr go to out_fd (or /dev/null when -1). */
pid_t soak_cli_spawn(int out_fd, const char *const *args);
/* Runs it to the end; captures output. Returns the exit status. */
int soak_cli(char *out, size_t size, const char *const *args);

/* A capability for the soak's key, text form. */
void soak_token(char out[EG_CAP_TEXT_MAX], const __u8 sandbox[EG_ID_BYTES], uint64_t generation,
		uint32_t activation, uint64_t ttl);

/* A distinct sandbox id per (scenario, n). */
void soak_sandbox(__u8 out[EG_ID_BYTES], unsigned scenario, unsigned n);

/* A pinned map's fd by its pin name (docs/operators.md). */
int soak_map(const char *name);

/* Per-reason kernel counters (eg_worker_counters), and a note naming the
 * reasons that moved between two readings. */
void soak_counters(uint64_t out[EG_K_REASON_COUNT]);
void soak_counters_note(char *note, size_t size, const uint64_t before[EG_K_REASON_COUNT]);

int soak_kill(struct soak_result *r, unsigned kills, double max_seconds);
int soak_storm(struct soak_result *r, double seconds, unsigned rate);
int soak_capacity(struct soak_result *r);

#endif
