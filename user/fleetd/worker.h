/* SPDX-License-Identifier: Apache-2.0 */
/* The worker side of the fleet (docs/fleet.md, "Worker side"), for
 * execgated: the selection in force per sandbox (persisted in
 * <state_dir>/fleet/selections), the key set applied from etcd, the acks,
 * and what status and /metrics show. apply_selection.c and apply_keyset.c
 * apply what is read by the rules of core/fleet_apply.c, selections.c keeps
 * the selections in force, worker.c the handle; watch.c runs the two
 * threads that talk to etcd (the watcher and the acker). */
#ifndef EXECGATE_FLEETD_WORKER_H
#define EXECGATE_FLEETD_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include <execgate/execgate.h>

struct eg_fleet_worker;
struct eg_etcd_auth;

struct eg_fleet_backend;

struct eg_fleet_worker_config {
	struct eg_worker *worker;
	/* Where the records, keys and modes live (fleetd/backend.h). NULL:
	 * the real one on worker, as execgated runs it; a hollow worker
	 * (fleetd/hollow.h) gives its recording backend and no worker. */
	const struct eg_fleet_backend *backend;
	void *backend_ctx;
	const char *state_dir;
	const uint8_t *worker_id; /* EG_ID_BYTES */
	const char *endpoints;	  /* etcd_endpoints */
	/* etcd_cacert, etcd_cert, etcd_key, etcd_user, etcd_password_file
	 * (user/fleet/etcd.h); NULL: none. Kept, not copied: it must live as
	 * long as the worker. */
	const struct eg_etcd_auth *etcd_auth;
	const char *prefix;    /* etcd_prefix */
	const char *root_keys; /* a directory of pinned root .pub files */
	unsigned reconcile_interval;
	/* keyset_min_version: no key set below it applies, whatever the
	 * state dir remembers (a re-created one remembers nothing); 0: none */
	uint64_t keyset_min_version;
	/* One log line, syslog priority prio. It may hold etcd keys, which
	 * are attacker-controlled: the callback must escape it whole
	 * (execgated's egd_log does). */
	void (*log)(int prio, const char *line, void *ctx);
	/* What a retire by the watcher cut (may be NULL). */
	void (*streams)(const struct eg_stream_cuts *s, void *ctx);
	void *ctx;
};

/* Loads the pinned roots, the applied key-set version and the stored
 * selections (an unreadable one fails: a restart must not accept an older
 * replay for lack of it). 0, or -errno with err. */
int eg_fleet_worker_open(const struct eg_fleet_worker_config *cfg, struct eg_fleet_worker **out,
			 char *err, size_t err_size);
/* Stops the threads first if they run. */
void eg_fleet_worker_close(struct eg_fleet_worker *fw);

/* The watcher and the acker (watch.c). */
int eg_fleet_worker_start(struct eg_fleet_worker *fw, char *err, size_t err_size);
void eg_fleet_worker_stop(struct eg_fleet_worker *fw);

/* PUT /v1/sandboxes/{uuid} with the fleet on: eg_worker_install_mode()
 * (its install rule included: -EXDEV wrong worker, -ENOMSG not selected)
 * as one step against the watcher's changes of the selections in force,
 * then the sandbox's ack is written again. Status, /metrics and the acker
 * are not held while it runs (worker_impl.h, the two locks). */
int eg_fleet_worker_install(struct eg_fleet_worker *fw, const struct eg_install_spec *spec,
			    const char *mode, struct eg_install_report *rep, char *err,
			    size_t err_size);
/* A sandbox's record changed (a PUT completed, a retire, a forget): its
 * ack is written again. */
void eg_fleet_worker_touch(struct eg_fleet_worker *fw, const uint8_t sandbox[EG_ID_BYTES]);

/* Applying what was read (the watcher calls these; tests too). key is the
 * etcd key, attacker-controlled text, rev its mod_revision. */
void eg_fleet_worker_apply_selection(struct eg_fleet_worker *fw, const char *key, const char *value,
				     size_t len, int64_t rev);
void eg_fleet_worker_apply_keyset(struct eg_fleet_worker *fw, const char *key, const char *value,
				  size_t len, int64_t rev);
void eg_fleet_worker_deleted(struct eg_fleet_worker *fw, const char *key, int64_t rev);
void eg_fleet_worker_touch_all(struct eg_fleet_worker *fw);

/* GET /v1/status's "fleet" member; /metrics' execgate_fleet_* families. */
json_t *eg_fleet_worker_status(struct eg_fleet_worker *fw);
void eg_fleet_worker_metrics(struct eg_fleet_worker *fw, FILE *out);

#endif
