/* SPDX-License-Identifier: Apache-2.0 */
/* The identity flags shared by `execgate-issue cap`, `execgate check` and
 * `execgate install`: --sandbox --worker --generation --activation
 * --pod-uid --substrate (and, for check, --retired-below). One parser, so the
 * three commands spell and default them identically. */
#ifndef EXECGATE_FRONTEND_IDENTITY_OPTS_H
#define EXECGATE_FRONTEND_IDENTITY_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include "core/record.h"
#include "execgate/execgate.h"

enum eg_identity_flag {
	EG_IDF_SANDBOX = 1u << 0,
	EG_IDF_WORKER = 1u << 1,
	EG_IDF_GENERATION = 1u << 2,
	EG_IDF_ACTIVATION = 1u << 3,
	EG_IDF_POD_UID = 1u << 4,
	EG_IDF_SUBSTRATE = 1u << 5,
	EG_IDF_RETIRED_BELOW = 1u << 6,
	EG_IDF_SERVICE_PORT = 1u << 7, /* --service-port PORT/tcp|udp, repeatable */
};
#define EG_IDF_REQUIRED (EG_IDF_SANDBOX | EG_IDF_WORKER | EG_IDF_GENERATION | EG_IDF_ACTIVATION)

struct eg_identity_opts {
	struct eg_record rec; /* defaults: pod_uid zero, substrate firecracker-host */
	unsigned seen;	      /* enum eg_identity_flag bits */
};

void eg_identity_opts_init(struct eg_identity_opts *o);
/* name is the long option without "--" (e.g. "sandbox"). Returns 1 when the
 * option was an identity option and value was valid, 0 when name is not an
 * identity option, -EINVAL when value is bad or a single-valued option is
 * repeated: err then holds a one-line reason naming the option and the
 * value. --sandbox and --worker refuse the all-zero UUID (no token can name
 * it); --service-port adds one (port, proto) to rec.ports, at most
 * EG_RECORD_MAX_PORTS. */
int eg_identity_opt(struct eg_identity_opts *o, const char *name, const char *value, char *err,
		    size_t err_size);
/* -EINVAL with err naming the first missing required flag, or the
 * inconsistency (--retired-below above --generation: a record never runs a
 * generation it has retired). */
int eg_identity_opts_finish(const struct eg_identity_opts *o, unsigned required, char *err,
			    size_t err_size);
/* The identity and ServicePort profile parsed, into an install spec (the
 * rest of the spec untouched). */
void eg_identity_opts_spec(const struct eg_identity_opts *o, struct eg_install_spec *spec);

#endif
