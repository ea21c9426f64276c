// SPDX-License-Identifier: Apache-2.0
/* The install rule, pure; core/fleet_gate.h says why. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "core/fleet_apply.h"
#include "core/fleet_gate.h"

int eg_fleet_stored_parse(const char *line, uint8_t *raw, size_t *raw_len, long long *r)
{
	char text[EG_SEL_TEXT_MAX];
	long long rev;

	if (sscanf(line, "%lld %255s", &rev, text) != 2 || rev <= 0)
		return -EINVAL;
	if (eg_sel_text_to_bin(text, strlen(text), raw, raw_len) != EG_SEL_OK)
		return -EINVAL;
	*r = rev;
	return 0;
}

enum eg_fleet_gate eg_fleet_gate(const uint8_t *self, bool fleet_on, bool has_sel,
				 const struct eg_selection *sel, const uint8_t worker[EG_ID_BYTES],
				 uint64_t generation, uint32_t activation,
				 const uint8_t pod_uid[EG_ID_BYTES], const char **why)
{
	/* A record naming another worker would admit that worker's
	 * capabilities here: refused whether the fleet is on or off. */
	if (self && memcmp(worker, self, EG_ID_BYTES)) {
		*why = "\"worker\" is not this worker's id";
		return EG_GATE_WRONG_WORKER;
	}
	if (!fleet_on)
		return EG_GATE_OK;
	/* The fleet on and no id known: nothing can match a selection. */
	if (!self) {
		*why = "the fleet is on and this worker's id is not known (no node.worker)";
		return EG_GATE_NOT_SELECTED;
	}
	*why = eg_fleet_put_refusal(self, has_sel, sel, worker, generation, activation, pod_uid);
	return *why ? EG_GATE_NOT_SELECTED : EG_GATE_OK;
}
