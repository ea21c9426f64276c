/* SPDX-License-Identifier: Apache-2.0 */
/* A hollow worker's enforcement (fleetd/backend.h): the fleet's worker
 * side runs unchanged (watch, verification, rules, stored selections,
 * signed acks) over records, keys and modes kept in memory instead of BPF
 * maps, so that one process can host hundreds of workers (the scale soak,
 * tests/soak-fleet-scale/). Kubernetes' hollow nodes (kubemark) are the
 * same idea.
 *
 * Where it differs from the real backend (backend_worker.c), and nothing
 * else:
 *  - records live in memory: no BPF map, no endpoint, no grant, no stream
 *    to cut (a retire reports zero streams); they do not survive the
 *    process. So an install is never refused for its endpoints (a socket
 *    another sandbox holds, -EEXIST there; one that does not exist);
 *  - the key set lives in memory, seeded from a directory of .pub files
 *    at creation; eg_worker_keys_replace's on-disk transaction and
 *    keyset.version are not written (fleetd's own <state_dir>/fleet/keyset
 *    still is);
 *  - the install rule is the library's (core/fleet_gate.h, eg_fleet_gate_check, on the selection
 *    fleetd stored, verified again against the keys; then the epoch rule,
 *    core/epoch_rule.h), with the fleet always on and "the same
 *    execution" judged on worker, pod, substrate, bridge and VMM pids
 *    only (no endpoints to compare);
 *  - the global mode is "enforce" unless set here; a sandbox's own mode is
 *    kept as an install sets it. */
#ifndef EXECGATE_FLEETD_HOLLOW_H
#define EXECGATE_FLEETD_HOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "fleetd/backend.h"

struct eg_fleet_hollow;

extern const struct eg_fleet_backend eg_fleet_backend_hollow;

/* A hollow worker's backend: worker_id (EG_ID_BYTES) is its own id, the
 * install rule's "this worker"; state_dir the fleet worker's (its stored
 * selections are read there, as the library reads them); keys_dir a
 * directory of .pub files trusted at start, or NULL for none. 0 or
 * -errno with err. */
int eg_fleet_hollow_new(const uint8_t *worker_id, const char *state_dir, const char *keys_dir,
			struct eg_fleet_hollow **out, char *err, size_t err_size);
void eg_fleet_hollow_free(struct eg_fleet_hollow *h);
/* "enforce" or "audit": what a sandbox without a mode of its own runs in. */
int eg_fleet_hollow_set_global_mode(struct eg_fleet_hollow *h, const char *mode);

/* What the recording saw: installs written, installs refused, retires. */
struct eg_fleet_hollow_counts {
	uint64_t installs, refused, retires, key_sets, records;
};
void eg_fleet_hollow_counts(struct eg_fleet_hollow *h, struct eg_fleet_hollow_counts *c);
/* Whether the kernel would admit this execution here now: its record is
 * active and names this generation and activation (the scale soak's
 * safety check after a fence). */
bool eg_fleet_hollow_admits(struct eg_fleet_hollow *h, const uint8_t sandbox[EG_ID_BYTES],
			    uint64_t generation, uint32_t activation);

#endif
