/* SPDX-License-Identifier: Apache-2.0 */
/* Stream revocation: after install moves a sandbox's epoch, or retire runs,
 * every established stream admitted at an older epoch of that sandbox is
 * stopped, on every tier (docs/design.md §8). The BPF LSM stream leases stop I/O
 * where they exist; this cuts the streams themselves, so the cgroup tier
 * (no LSM) stops them too.
 *
 * One entry point, called by install.c and eg_retire after the new record
 * is published, runs each revoker of a small table (revoke.c), one per kind
 * of stream: Unix (revoke_unix.c), TCP (revoke_tcp.c). A revoker finds the
 * stale streams from the kernel's own evidence (socket tags in eg_sk_tags
 * and the like), cuts them, and counts what it cut and what it saw but
 * could not reach. */
#ifndef EXECGATE_LOADER_REVOKE_H
#define EXECGATE_LOADER_REVOKE_H

#include <stdbool.h>
#include <stddef.h>
#include "abi/abi.h"

struct eg_runtime;

enum eg_revoke_kind {
	EG_REVOKE_UNIX = 0,
	EG_REVOKE_TCP = 1,
	EG_REVOKE__COUNT,
};

/* What is stale: a stream of sandbox whose tag's epoch is not
 * current_epoch, or every stream of it when retired. audit: the sandbox's
 * effective mode at the revocation is audit (its record's own mode, else
 * the global one, docs/design.md §19): find and count the stale streams,
 * cut none. */
struct eg_revoke_target {
	__u8 sandbox[EG_ID_BYTES];
	__u64 current_epoch;
	bool retired;
	bool audit;
};

struct eg_revoke_count {
	unsigned cut;	       /* stale streams stopped (both directions) */
	unsigned unreachable;  /* stale streams seen but not stopped (holder gone, no access) */
	unsigned would_cut;    /* audit: stale streams found and left running */
	int error;	       /* 0, or the revoker's negative errno: counts may be short */
	const char *method;    /* how they were found, e.g. "iter/task_file"; NULL: not run */
	__u64 find_ns, cut_ns; /* wall time finding the holders, and cutting (bench) */
};

/* What the revokers did, as the loader keeps it. This is not the public
 * struct eg_stream_cuts (include/execgate/execgate.h), on purpose: it is
 * indexed by revoker kind, so a new revoker is one more row of the table
 * and no ABI change, and it carries the timings the benchmark reads
 * (tests/bench/bench_revoke.c), which no integrator should depend on.
 * It turns into the public type one way, in one place:
 * eg_stream_cuts_of() (loader/maps/view.c); nothing converts back. */
struct eg_revoke_report {
	struct eg_revoke_count kind[EG_REVOKE__COUNT];
	char err[256]; /* the first revoker error, one line; "" when none */
};

/* One row of the table: finds and cuts the stale streams of one kind.
 * Returns 0 or a negative errno (err set); counts what it did either way. */
struct eg_revoker {
	const char *name; /* "unix", "tcp" */
	enum eg_revoke_kind kind;
	int (*run)(struct eg_runtime *rt, const struct eg_revoke_target *t,
		   struct eg_revoke_count *out, char *err, size_t err_size);
};

extern const struct eg_revoker eg_revoker_unix; /* revoke_unix.c */
extern const struct eg_revoker eg_revoker_tcp;	/* revoke_tcp.c */

/* Runs every revoker for (sandbox, current_epoch, retired) and fills rep.
 * The mode is the sandbox's effective one, read here: its record's own
 * mode (the record the caller just wrote), else the global mode; in audit
 * the revokers count what they would cut in would_cut and cut nothing. A
 * mode that cannot be read enforces (fails closed: the streams are cut).
 * Returns 0 when every revoker ran and left no stale stream it saw, else
 * the first negative errno (rep->err says which kind, what and why: a step
 * refused, or N streams left, -EPERM); the record change that called it
 * stands either way, and its caller must report the failure. */
int eg_revoke_stale(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES], __u64 current_epoch,
		    bool retired, struct eg_revoke_report *rep);

/* Unix revoker: the method it uses ("iter/task_file", or "procfs" where
 * the kernel refused the iterator); tests force the procfs fallback. */
const char *eg_revoke_unix_method(void);
/* Loads the Unix revoker's iterator and pins it in pin_dir (replacing an
 * older one), so that no install or retire pays the load: `load` calls it.
 * 0 or a negative errno; the first cut loads it where this failed. */
int eg_revoke_unix_prepare(const char *pin_dir);
void eg_revoke_unix_force_procfs(bool on);

/* Sum over kinds. */
unsigned eg_revoke_total_cut(const struct eg_revoke_report *rep);
unsigned eg_revoke_total_unreachable(const struct eg_revoke_report *rep);
unsigned eg_revoke_total_would_cut(const struct eg_revoke_report *rep);

/* Whether the revocation of sandbox runs in audit: its record's own mode,
 * else the global mode; enforce when neither can be read. */
bool eg_revoke_audits(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES]);

#endif
