// SPDX-License-Identifier: Apache-2.0
/* Pure rules of the fleet's worker side; core/fleet_apply.h says why. */
#include <string.h>
#include "core/fleet_apply.h"

static int cmp_exec(uint64_t g1, uint32_t a1, uint64_t g2, uint32_t a2)
{
	if (g1 != g2)
		return g1 < g2 ? -1 : 1;
	if (a1 != a2)
		return a1 < a2 ? -1 : 1;
	return 0;
}

enum eg_fleet_order eg_fleet_order(bool has_applied, const struct eg_selection *applied,
				   const struct eg_selection *sel)
{
	int c;

	if (!has_applied)
		return EG_FLEET_NEWER;
	c = cmp_exec(sel->id.generation, sel->id.activation, applied->id.generation,
		     applied->id.activation);
	if (c > 0)
		return EG_FLEET_NEWER;
	if (c < 0)
		return EG_FLEET_OLDER;
	/* The same execution named again: only a copy of the same decision
	 * (re-signed, or written again) is not a rollback. Another worker or
	 * pod UID under an equal (generation, activation) is no newer than
	 * what is applied, so it cannot replace it. */
	if (!memcmp(sel->id.worker, applied->id.worker, sizeof(sel->id.worker)) &&
	    !memcmp(sel->id.pod_uid, applied->id.pod_uid, sizeof(sel->id.pod_uid)) &&
	    sel->id.substrate == applied->id.substrate)
		return EG_FLEET_SAME;
	return EG_FLEET_OLDER;
}

enum eg_fleet_audience eg_fleet_audience(const uint8_t self[EG_ID_BYTES],
					 const struct eg_selection *sel)
{
	if (sel->version == EG_SEL_VERSION2)
		return memcmp(sel->audience, self, EG_ID_BYTES) ? EG_FLEET_WRONG_AUDIENCE
								: EG_FLEET_ADDRESSED;
	return memcmp(sel->id.worker, self, EG_ID_BYTES) ? EG_FLEET_NO_AUDIENCE
							 : EG_FLEET_ADDRESSED;
}

bool eg_fleet_matches(const uint8_t self[EG_ID_BYTES], const struct eg_selection *sel,
		      const uint8_t worker[EG_ID_BYTES], uint64_t generation, uint32_t activation,
		      const uint8_t pod_uid[EG_ID_BYTES])
{
	return !memcmp(sel->id.worker, self, EG_ID_BYTES) && !memcmp(worker, self, EG_ID_BYTES) &&
	       sel->id.generation == generation && sel->id.activation == activation &&
	       !memcmp(sel->id.pod_uid, pod_uid, EG_ID_BYTES);
}

enum eg_fleet_action eg_fleet_decide(const uint8_t self[EG_ID_BYTES],
				     const struct eg_selection *sel,
				     const struct eg_fleet_local *local)
{
	if (!local->has_record || local->retired)
		return EG_FLEET_NONE;
	if (eg_fleet_matches(self, sel, local->worker, local->generation, local->activation,
			     local->pod_uid))
		return EG_FLEET_NONE;
	return EG_FLEET_RETIRE;
}

const char *eg_fleet_state_name(enum eg_fleet_state s)
{
	static const char *const names[] = {"active", "retired", "absent", "pending"};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}

enum eg_fleet_state eg_fleet_ack_state(const uint8_t self[EG_ID_BYTES], bool has_sel,
				       const struct eg_selection *sel,
				       const struct eg_fleet_local *local)
{
	if (local->has_record && !local->retired)
		return EG_FLEET_ACTIVE;
	if (has_sel && !memcmp(sel->id.worker, self, EG_ID_BYTES))
		return EG_FLEET_PENDING;
	return local->has_record ? EG_FLEET_RETIRED : EG_FLEET_ABSENT;
}

const char *eg_fleet_put_refusal(const uint8_t self[EG_ID_BYTES], bool has_sel,
				 const struct eg_selection *sel, const uint8_t worker[EG_ID_BYTES],
				 uint64_t generation, uint32_t activation,
				 const uint8_t pod_uid[EG_ID_BYTES])
{
	if (!has_sel)
		return "no signed selection for this sandbox yet";
	if (memcmp(sel->id.worker, self, EG_ID_BYTES))
		return "the selection names another worker";
	if (memcmp(worker, self, EG_ID_BYTES))
		return "\"worker\" is not this worker";
	if (sel->id.generation != generation)
		return "\"generation\" is not the selection's";
	if (sel->id.activation != activation)
		return "\"activation\" is not the selection's";
	if (memcmp(sel->id.pod_uid, pod_uid, EG_ID_BYTES))
		return "\"pod_uid\" is not the selection's";
	return NULL;
}
