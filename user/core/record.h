/* SPDX-License-Identifier: Apache-2.0 */
/* The locally installed runtime record of one sandbox's current execution. */
#ifndef EXECGATE_CORE_RECORD_H
#define EXECGATE_CORE_RECORD_H

#include <stdint.h>
#include "core/capability.h"
#include "core/identity.h"
#include "execgate/sizes.h"

struct eg_port_rule {
	uint16_t port;
	uint8_t proto; /* enum eg_proto */
};

struct eg_record {
	struct eg_identity id;
	/* Generations below this were retired by this receiver. */
	uint64_t retired_below;
	/* ServicePort profile of the current execution. */
	struct eg_port_rule ports[EG_RECORD_MAX_PORTS];
	uint8_t nports;
};

#endif
