// SPDX-License-Identifier: Apache-2.0
/* eg_status_write: `execgate status` and GET /v1/status. No side effects:
 * what the kernel offers comes from the probe record `load` kept in the
 * state dir, never from a new probe. */
#include <errno.h>
#include <stdlib.h>
#include <execgate/execgate.h>
#include "lib/report.h"
#include "loader/tiers/tier.h"

int eg_status_write(const char *pin_dir, const char *state_dir, FILE *out, bool json)
{
	struct eg_probe_record *probed = malloc(sizeof(*probed));
	int rc;

	if (!probed)
		return -ENOMEM;
	eg_probe_record_read(state_dir ? state_dir : EG_WORKER_DEFAULT_STATE_DIR, probed);
	rc = eg_report_write_keys(out, pin_dir ? pin_dir : EG_WORKER_DEFAULT_PIN_DIR,
				  state_dir ? state_dir : EG_WORKER_DEFAULT_STATE_DIR, probed, json,
				  true, NULL);
	free(probed);
	return rc;
}
