/* SPDX-License-Identifier: Apache-2.0 */
/* The durable intent to cut a sandbox's stale streams (eg_exec_record's
 * cut_pending, bpf/abi/abi.h).
 *
 * Why in the record and not in a file or a map of its own: the epoch the
 * cut is measured against lives in the record, and one BPF_F_LOCK write
 * moves the epoch and sets the intent together, so no crash can leave one
 * without the other; the record's pinned map already survives a loader
 * crash and is what every writer reads first. A second store would need its
 * own ordering against the record and could disagree with it.
 *
 * The protocol, for every writer that moves an epoch (install, retire):
 * write the record with the new epoch and cut_pending set, run the
 * revokers, and clear cut_pending only when every revoker succeeded. Any
 * writer that finds it set finishes the job (eg_cut_finish) before it
 * answers: a retried install or retire, forget, and the sweep that opening
 * a worker runs (eg_cut_pending_list). Callers hold the writer lock
 * (loader/records/runtime.h). */
#ifndef EXECGATE_LOADER_CUT_INTENT_H
#define EXECGATE_LOADER_CUT_INTENT_H

#include <stddef.h>
#include "abi/abi.h"
#include "loader/revokers/revoke.h"

struct eg_runtime;

/* Runs the revokers for rec (its epoch; every stream when it is RETIRED)
 * and, when all succeeded, clears rec's cut_pending in the map (only if
 * the record there still has rec's epoch: a later writer's intent stays)
 * and in *rec. rep is filled either way. 0, or the first negative errno
 * (rep->err says which revoker, or that clearing the intent failed). */
int eg_cut_finish(struct eg_runtime *rt, struct eg_exec_record *rec, struct eg_revoke_report *rep);

/* The sandboxes whose record has cut_pending set, up to max (*n may exceed
 * max: call again after finishing those). 0 or a negative errno. */
int eg_cut_pending_list(struct eg_runtime *rt, struct eg_sandbox_key *out, size_t max, size_t *n);

#endif
