/* SPDX-License-Identifier: Apache-2.0 */
/* The worker side of the fleet (docs/fleet.md, "Worker side"), as pure
 * rules: what a verified selection read under this worker's own prefix
 * does to the local record, what the worker's ack then says, and whether a
 * local PUT /v1/sandboxes/{uuid} matches the selection in force. No I/O:
 * execgated's watcher (user/fleetd/apply_selection.c, apply_keyset.c) and its PUT handler call
 * these, and tests/unit/test_fleet_apply.c checks every case. */
#ifndef EXECGATE_CORE_FLEET_APPLY_H
#define EXECGATE_CORE_FLEET_APPLY_H

#include <stdbool.h>
#include <stdint.h>
#include "core/selection.h"

/* The local record of one sandbox, as far as these rules need it. */
struct eg_fleet_local {
	bool has_record;
	bool retired;
	uint8_t worker[EG_ID_BYTES];
	uint8_t pod_uid[EG_ID_BYTES];
	uint64_t generation;
	uint32_t activation;
	uint64_t epoch;
};

/* What a new selection is, against the one applied before for the same
 * sandbox (has_applied false: none yet). */
enum eg_fleet_order {
	EG_FLEET_NEWER = 0, /* first one, or a higher (generation, activation) */
	EG_FLEET_SAME,	    /* the same document again (every field but issued_at) */
	EG_FLEET_OLDER,	    /* lower (generation, activation), or equal but different */
};
enum eg_fleet_order eg_fleet_order(bool has_applied, const struct eg_selection *applied,
				   const struct eg_selection *sel);

/* Whether this worker may act on a verified selection read under its own
 * prefix (docs/fleet.md, "Audience"): a v2 only when addressed to self, a
 * v1 (no audience) only when it names self, so that a genuine selection
 * copied from another worker's prefix never orders a cut. */
enum eg_fleet_audience {
	EG_FLEET_ADDRESSED = 0,
	EG_FLEET_WRONG_AUDIENCE, /* a v2 addressed to another worker */
	EG_FLEET_NO_AUDIENCE,	 /* a v1 naming another worker */
};
enum eg_fleet_audience eg_fleet_audience(const uint8_t self[EG_ID_BYTES],
					 const struct eg_selection *sel);

/* What applying a selection (not OLDER) does to the local record. */
enum eg_fleet_action {
	EG_FLEET_NONE = 0, /* nothing admits that the selection does not name */
	EG_FLEET_RETIRE,   /* an active record the selection does not name: retire it now */
};
/* The local record is kept only when the selection names this worker and
 * exactly its generation, activation and pod UID; any other active record
 * is retired (streams cut) at once: with etcd on, only what the control
 * plane selected may admit. */
enum eg_fleet_action eg_fleet_decide(const uint8_t self[EG_ID_BYTES],
				     const struct eg_selection *sel,
				     const struct eg_fleet_local *local);

/* Does the active local record (or an install spec) match sel for self? */
bool eg_fleet_matches(const uint8_t self[EG_ID_BYTES], const struct eg_selection *sel,
		      const uint8_t worker[EG_ID_BYTES], uint64_t generation, uint32_t activation,
		      const uint8_t pod_uid[EG_ID_BYTES]);

/* The state an ack reports (the ack's "state"). */
enum eg_fleet_state {
	EG_FLEET_ACTIVE = 0,
	EG_FLEET_RETIRED,
	EG_FLEET_ABSENT,
	EG_FLEET_PENDING,
};
const char *eg_fleet_state_name(enum eg_fleet_state s);
/* has_sel: a selection is in force for the sandbox (sel). An active
 * record is "active"; otherwise "pending" when sel names self, else
 * "retired" or "absent" by the record. */
enum eg_fleet_state eg_fleet_ack_state(const uint8_t self[EG_ID_BYTES], bool has_sel,
				       const struct eg_selection *sel,
				       const struct eg_fleet_local *local);

/* Why a PUT /v1/sandboxes/{uuid} is refused with 409 not-selected, or
 * NULL when it matches the selection in force. */
const char *eg_fleet_put_refusal(const uint8_t self[EG_ID_BYTES], bool has_sel,
				 const struct eg_selection *sel, const uint8_t worker[EG_ID_BYTES],
				 uint64_t generation, uint32_t activation,
				 const uint8_t pod_uid[EG_ID_BYTES]);

#endif
