/* SPDX-License-Identifier: Apache-2.0 */
/* A sandbox's Unix world on the kernel harness (harness.h), and the
 * situations a connect to it can meet, for the tables that run one case
 * per situation: the audit twins (test_audit.c) and the one-decision table
 * (test_situations.c). The world: a VMM listener on vsock, a bridge child
 * listening on bsock, a caller child, both children in the scratch cgroup,
 * and the sandbox installed at generation 7 with both sockets. */
#ifndef EXECGATE_TEST_KERNEL_UNIX_WORLD_H
#define EXECGATE_TEST_KERNEL_UNIX_WORLD_H

#include "abi/abi.h"
#include "harness.h"

#define UW_WORKER   "a0000000-0000-4000-8000-00000000000a"
#define UW_ALIVE_NS (100ULL * 1000000000ULL) /* a grant's life that no test outlives */
/* How long ago an expired grant expired. The hooks' grant clock is the
 * coarse clock, up to one tick behind (docs/design.md §9: a grant ends at its
 * expiry or within the tick after it): a grant that expired 1 ns ago is
 * still allowed for the rest of the tick, and a connect made at once, with
 * nothing slow between the write and it, sees it allowed. One second is
 * many ticks at any HZ. */
#define UW_EXPIRED_AGO_NS 1000000000ULL

struct unix_world {
	const char *sandbox; /* uuid text */
	const char *bsock, *vsock;
	struct kh_child bridge, caller;
	pid_t fc;
};

/* Builds the world in the current kh world: sockets kh_path("bridge.sock")
 * and kh_path("vmm.sock"). */
void uw_start(struct unix_world *w, const char *sandbox);
/* `execgate install` of the world's sandbox at generation gen. */
void uw_install(const struct unix_world *w, const char *gen);
struct eg_exec_record uw_record(const struct unix_world *w);
/* A grant of pid's for rec's sandbox (or another: sandbox non-NULL). */
void uw_write_grant(pid_t pid, const struct eg_exec_record *rec, const __u8 *sandbox, __u64 epoch,
		    __u64 expiry);
/* `execgate mode M [--sandbox S]`. */
void uw_mode(const char *m, const char *sandbox);

/* A situation puts the world into its state and returns the registered
 * path the caller then connects to. */
typedef const char *(*uw_prepare_fn)(struct unix_world *w);

const char *uw_not_bridge(struct unix_world *w);  /* the caller at the VMM socket */
const char *uw_no_grant(struct unix_world *w);	  /* the caller at the bridge socket */
const char *uw_granted(struct unix_world *w);	  /* ... with a live grant */
const char *uw_grant_other(struct unix_world *w); /* ... with a grant of another sandbox */
const char *uw_grant_epoch(struct unix_world *w); /* ... of the epoch before */
const char *uw_grant_expired(struct unix_world *w);
const char *uw_retired(struct unix_world *w);
const char *uw_no_record(struct unix_world *w);
const char *uw_inconsistent(struct unix_world *w); /* an endpoint role no record knows */
/* A live grant, and no room for the caller socket's tag; uw_no_tag_done()
 * gives the room back after the connect. */
const char *uw_no_tag(struct unix_world *w);
void uw_no_tag_done(struct unix_world *w);

#endif
