/* SPDX-License-Identifier: Apache-2.0 */
/* Real execgated instances beside the hollow workers of the fleet at scale
 * (tests/soak-fleet-scale/main.c): each with its own scratch cgroup, pin
 * dir, state dir and API socket, loading the cgroup tier, and its fleet
 * watcher on the same etcd (client TLS, auth). The soak drives them over
 * their sockets as a node manager does: PUT /v1/sandboxes/{uuid} to
 * install, POST /v1/check to ask whether an execution would be admitted,
 * GET /v1/status for the watcher's connection. Root only. */
#ifndef EXECGATE_TESTS_SOAK_FLEET_SCALE_REAL_H
#define EXECGATE_TESTS_SOAK_FLEET_SCALE_REAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SC_REAL_MAX 16

/* What every real worker's config names (docs/api.md, "Configuration"). */
struct sc_real_etcd {
	const char *endpoints, *cacert, *cert, *key, *user, *password_file, *prefix, *root_keys;
};

/* Starts execgated for worker_id under dir (its files) with bin_dir's
 * programs, and waits until its API answers GET /v1/status with 200.
 * The slot (0..SC_REAL_MAX-1), or -1 with err. */
int sc_real_start(const char *bin_dir, const char *dir, const struct sc_real_etcd *etcd,
		  const char *worker_id, char *err, size_t size);
/* Stops every daemon started (SIGTERM, then SIGKILL after 5 s), unloads
 * its pins and removes its cgroup. Once; also from an atexit handler. */
void sc_real_stop_all(void);

/* PUT /v1/sandboxes/{sandbox}: an execution of worker at generation gen,
 * activation 1, firecracker-host, whose bridge is this process. The HTTP
 * status, or a negative errno; out: the answer's body. */
int sc_real_install(int r, const char *sandbox, const char *worker, uint64_t gen, char *out,
		    size_t size);
/* POST /v1/check of token with scope exec: 1 allow, 0 any other verdict
 * (reason: the answer's reason), -1 no verdict (reason: why). */
int sc_real_check(int r, const char *token, char *reason, size_t size);
/* The daemon's fleet watcher: 1 connected (endpoint: the member it
 * watches on), 0 not, -1 status unreadable. */
int sc_real_connected(int r, char *endpoint, size_t size);
/* The daemon's process, and its resident MiB now (0: unreadable). */
pid_t sc_real_pid(int r);
double sc_real_rss_mib(int r);

#endif
