// SPDX-License-Identifier: GPL-2.0-only
/* Per-step builds of the connect_unix program, for bench-kernel's breakdown
 * of the allowed and unregistered paths (tests/bench/bench_kernel.c; built
 * by scripts/make/speed.mk with -DEG_STOP_AFTER=N, never loaded by the
 * loader). Build N is bpf/cgroup_connect_unix.bpf.c itself, allowing right
 * after step N (enum eg_step). Build EG_STEP_COUNT + 1 stops nowhere: it is
 * the whole program with every connect a miss of the admission cache.
 *
 * Every build misses the cache: the lookup runs (its cost is step 4's) and
 * its answer is dropped, so the steps after it measure the full checks,
 * and the last build the full checks, the tag and the cache insert that a
 * first connect pays. The real object is the row after them.
 *
 * Each step ends with one call in the program's body. The production
 * headers are included first, so their include guards keep the program
 * from re-reading them; then a macro of each call's name wraps the real
 * function (named in parentheses, which a function-like macro does not
 * expand) and, in build N, returns from the program after step N. The
 * macros apply to the program's body only, never to the helpers'
 * definitions. speed.mk builds this file with -Wunused-macros -Werror: a
 * call renamed in the program fails the build instead of silently
 * measuring the whole program. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "execgate_connect.bpf.h"

enum eg_step {
	EG_STEP_PATH = 1,     /* addrlen + path scan (length, filter key) */
	EG_STEP_HINT = 2,     /* hint bitmap */
	EG_STEP_IDENTITY = 3, /* the path's key words, the caller's eg_proc_id */
	EG_STEP_CACHE = 4,    /* admission cache: hash, lookup, checks (then a miss) */
	EG_STEP_FILTER = 5,   /* eg_path_filter */
	EG_STEP_ENDPOINT = 6, /* exact endpoint: lookup, locked copy */
	EG_STEP_DECIDE = 7,   /* the decision: generation word, record, grant, verdict */
	EG_STEP_COUNT = 8,    /* reason counter; the full program adds the tag */
};

/* Keeps what a step computed alive past its early return. */
volatile __u64 eg_step_sink;

/* SOCK_ALLOW is the program's own, defined where these expand. */
#define EG_STOP(step, v)                                                                           \
	do {                                                                                       \
		if (EG_STOP_AFTER == (step)) {                                                     \
			eg_step_sink = (__u64)(v);                                                 \
			return SOCK_ALLOW;                                                         \
		}                                                                                  \
	} while (0)

#define eg_unix_path_scan(p, limit, fk)                                                            \
	({                                                                                         \
		__u32 eg_step_len = (eg_unix_path_scan)(p, limit, fk);                             \
		EG_STOP(EG_STEP_PATH, eg_step_len ^ (fk)->head ^ (fk)->tail);                      \
		eg_step_len;                                                                       \
	})

#define eg_path_hinted(fk)                                                                         \
	({                                                                                         \
		bool eg_step_hinted = (eg_path_hinted)(fk);                                        \
		EG_STOP(EG_STEP_HINT, eg_step_hinted);                                             \
		eg_step_hinted;                                                                    \
	})

#define eg_current_proc(id)                                                                        \
	({                                                                                         \
		bool eg_step_ok = (eg_current_proc)(id);                                           \
		if (eg_step_ok)                                                                    \
			EG_STOP(EG_STEP_IDENTITY, (id)->exe_ino ^ (id)->tgid);                     \
		eg_step_ok;                                                                        \
	})

/* Every build misses: the real program's later rows are measured. */
#define eg_admit_hit(k, path, caller, tag)                                                         \
	({                                                                                         \
		bool eg_step_hit = (eg_admit_hit)(k, path, caller, tag);                           \
		EG_STOP(EG_STEP_CACHE, eg_step_hit ^ (k)->path_hash);                              \
		eg_step_sink = eg_step_hit;                                                        \
		false;                                                                             \
	})

#define eg_path_filtered(fk)                                                                       \
	({                                                                                         \
		bool eg_step_may = (eg_path_filtered)(fk);                                         \
		EG_STOP(EG_STEP_FILTER, eg_step_may);                                              \
		eg_step_may;                                                                       \
	})

#define eg_unix_endpoint_copy(key, ep)                                                             \
	({                                                                                         \
		int eg_step_rc = (eg_unix_endpoint_copy)(key, ep);                                 \
		if (eg_step_rc == EG_COPY_OK)                                                      \
			EG_STOP(EG_STEP_ENDPOINT, (ep)->role);                                     \
		eg_step_rc;                                                                        \
	})

/* The decision (execgate_connect.bpf.h) as one step: its record and caller
 * halves are inside the one function every hook calls, which this file
 * cannot reach into without a switch in the production header. */
#define eg_connect_decide(rc, ep, d, known, caller, rec, gen, until)                               \
	({                                                                                         \
		__u32 eg_step_reason =                                                             \
		    (eg_connect_decide)(rc, ep, d, known, caller, rec, gen, until);                \
		if ((eg_reason_allows)(eg_step_reason))                                            \
			EG_STOP(EG_STEP_DECIDE, (rec)->epoch ^ *(gen) ^ *(until));                 \
		eg_step_reason;                                                                    \
	})

/* The real program counts after the tag; step 9 counts, then stops. */
#define eg_reason_allows(reason)                                                                   \
	({                                                                                         \
		bool eg_step_allows = (eg_reason_allows)(reason);                                  \
		if (eg_step_allows && EG_STOP_AFTER == EG_STEP_COUNT)                              \
			eg_count(reason);                                                          \
		if (eg_step_allows)                                                                \
			EG_STOP(EG_STEP_COUNT, reason);                                            \
		eg_step_allows;                                                                    \
	})

#include "cgroup_connect_unix.bpf.c"
