/* SPDX-License-Identifier: Apache-2.0 */
/* A process's identity as the execgate hooks read it, start time in ns,
 * through a BPF task iterator (bpf/iter_task_start.bpf.c). /proc/PID/stat
 * gives the start time only in USER_HZ ticks (10 ms): two processes that
 * get the same pid within one tick would look the same there, and not to
 * the kernel, which compares ns.
 *
 * The iterator program is loaded once per process and kept; the answer of
 * that first load is cached. `load` pins it (links/task_start, an iterator
 * link never read), and a process that opened that pin dir's maps adopts
 * the pinned program instead of loading its own: no BTF read, no verifier,
 * which under TCG was most of an install's time. The pin is trusted as the
 * maps are (root's 0700 pin dir); it must still name a program of this
 * build and pass the tid self-check. A kernel that refuses the program (no
 * BTF, no iter/task, no tid filter: before 6.1) cannot give ns, and we do
 * not fall back to ticks: every identify then fails with -EOPNOTSUPP and
 * says why, and `execgate status` shows the tier (and
 * pid-reuse-ns-identity) not held.
 *
 * Reading names a pid number, not a process: callers hold a pidfd opened
 * before the read and check it still lives afterwards (loader/process/proc_id.c). */
#ifndef EXECGATE_LOADER_TASK_START_H
#define EXECGATE_LOADER_TASK_START_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "abi/task_start_abi.h"
#include "loader/tiers/tier.h"

/* 0 when the iterator loads and filters by tid here, -EOPNOTSUPP (why in
 * err) when not. Probed once per process. */
int eg_task_start_probe(char *err, size_t err_size);

/* The pin dir whose links/task_start the first probe adopts, if it holds
 * this build's program (EG_TASK_START_ABI); the first call wins, as any
 * pinned copy is the same program (it reads no map). eg_maps_open calls it. */
void eg_task_start_use_pins(const char *pin_dir);

/* `load`: makes links/task_start hold this build's program (replacing
 * another build's). 0, or a negative errno with err; best effort: without
 * the pin every process loads its own, as before. */
int eg_task_start_keep(const char *pin_dir, char *err, size_t err_size);

/* The task whose tid is pid (initial PID namespace): 0, -ESRCH when there
 * is none, -EOPNOTSUPP when the iterator is not available, another negative
 * errno on failure; err says which. */
int eg_task_start_read(pid_t pid, struct eg_task_start *out, char *err, size_t err_size);

/* Adds a tier's pid-reuse guarantee (name, summary): held when the tier
 * holds (tier_held, tier_on its reason) and identities come in ns, with the
 * reason either way. Probes the iterator (once per process). */
void eg_task_start_guarantee_add(struct eg_guarantee *out, size_t *n, size_t max, const char *name,
				 const char *summary, bool tier_held, const char *tier_on);

#endif
