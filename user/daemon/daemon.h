/* SPDX-License-Identifier: Apache-2.0 */
/* execgated: the state every part of the service shares. One struct egd
 * per process; the worker handle inside it is the only thing that touches
 * keys, tokens, BPF maps or /proc (docs/api.md, "Threading"). */
#ifndef EXECGATE_DAEMON_DAEMON_H
#define EXECGATE_DAEMON_DAEMON_H

#include <execgate/execgate.h>
#include "daemon/config.h"
#include "daemon/metrics.h"

struct MHD_Daemon;
struct egd_events;
struct eg_audit;
struct eg_fleet_worker;

struct egd {
	struct egd_config cfg;
	struct eg_worker *worker;
	struct egd_events *events;
	/* The rollout report's aggregate (execgate/admin.h), fed by the
	 * events consumer, read by GET /v1/audit. */
	struct eg_audit *audit;
	struct egd_metrics metrics;
	/* The fleet's worker side (fleetd/worker.h); NULL unless
	 * etcd_endpoints is set. */
	struct eg_fleet_worker *fleet;
	int listen_fd;
};

#endif
