/* SPDX-License-Identifier: Apache-2.0 */
/* The worker side of the fleet (docs/fleet.md, "Worker side"): the
 * selection in force per sandbox (persisted in <state_dir>/fleet), the key
 * set applied from etcd, the acks to write, and what status and /metrics
 * show. fleet.c holds the state and the rules' application; fleet_watch.c
 * the threads that talk to etcd. Off unless etcd_endpoints is set.
 *
 * One mutex (lock) orders everything that decides what a sandbox's record
 * may be: a PUT /v1/sandboxes/{uuid} holds it across its check and its
 * install, the watcher across applying one document. Admission never
 * takes it: verdicts come from the worker's maps whatever etcd does. */
#ifndef EXECGATE_DAEMON_FLEET_H
#define EXECGATE_DAEMON_FLEET_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "core/keyset.h"
#include "core/keyset_doc.h"
#include "core/selection.h"

struct egd;
struct eg_install_spec;

/* Why a document was refused, by kind: the decoder's reasons, then ours. */
#define EGD_FLEET_SEL_BAD_KEY EG_SEL__COUNT	  /* key is not .../selections/<uuid> */
#define EGD_FLEET_SEL_SANDBOX (EG_SEL__COUNT + 1) /* selection's sandbox is not the key's */
#define EGD_FLEET_SEL_OLDER   (EG_SEL__COUNT + 2) /* not newer than the one in force */
#define EGD_FLEET_SEL_REASONS (EG_SEL__COUNT + 3)
#define EGD_FLEET_KSD_EQUAL   EG_KSD__COUNT	  /* the applied version again */
#define EGD_FLEET_KSD_OLDER   (EG_KSD__COUNT + 1) /* a lower version */
#define EGD_FLEET_KSD_APPLY   (EG_KSD__COUNT + 2) /* the worker could not apply it */
#define EGD_FLEET_KSD_REASONS (EG_KSD__COUNT + 3)

struct egd_fleet_sel {
	uint8_t sandbox[EG_ID_BYTES];
	bool has_sel;
	struct eg_selection sel;
	int64_t sel_rev;  /* mod_revision of the key that carried sel */
	int64_t seen_rev; /* the newest write of the key judged (applied or refused) */
	bool ack_dirty;
};

struct egd_fleet {
	bool on;
	pthread_mutex_t lock;
	pthread_cond_t wake; /* the acker: an ack to write, or stop */
	struct egd_fleet_sel *sels;
	size_t n_sels, cap_sels;
	struct eg_keyset roots;
	uint64_t keyset_version;
	int64_t keyset_seen_rev;
	int64_t applied_rev;	 /* the store revision this worker has applied */
	int64_t store_rev;	 /* the newest store revision etcd told it */
	uint64_t last_update_ns; /* CLOCK_MONOTONIC of the last answer from etcd */
	uint64_t last_update_unix;
	bool connected;
	char endpoint[256];
	uint64_t refused_sel[EGD_FLEET_SEL_REASONS];
	uint64_t refused_ksd[EGD_FLEET_KSD_REASONS];
	uint64_t reconciles, compactions, watch_errors, acks_written, ack_errors, retired;
	/* threads (fleet_watch.c) */
	pthread_t watcher, acker;
	bool started;
	volatile int interrupt; /* ends the watch: stop, or a reconcile is due */
	volatile int stopping;
	bool reconcile_due;
	char prefix_workers[512]; /* <prefix>/workers/<self>/selections/ */
	char key_keyset[256];	  /* <prefix>/keyset */
};

/* Loads the pinned roots, the applied key-set version and the stored
 * selections. 0, or -errno with err (the daemon does not start). */
int egd_fleet_init(struct egd *d, char *err, size_t err_size);
void egd_fleet_free(struct egd *d);

/* PUT /v1/sandboxes/{uuid}: called with fleet.lock held. NULL when spec
 * matches the selection in force, else why it does not (409 not-selected). */
const char *egd_fleet_put_refusal(struct egd *d, const struct eg_install_spec *spec);
/* Something changed what a sandbox's record enforces (a PUT completed, a
 * retire or forget): its ack is written again. Takes fleet.lock. */
void egd_fleet_touch(struct egd *d, const uint8_t sandbox[EG_ID_BYTES]);

/* What the watcher read, applied under fleet.lock (taken inside). key is
 * the etcd key (attacker-controlled text: escaped in logs), rev its
 * mod_revision. */
void egd_fleet_apply_selection(struct egd *d, const char *key, const char *value, size_t len,
			       int64_t rev);
void egd_fleet_apply_keyset(struct egd *d, const char *key, const char *value, size_t len,
			    int64_t rev);
/* A delete of one of the watched keys: logged, nothing changes. */
void egd_fleet_deleted(struct egd *d, const char *key, int64_t rev);
/* Every stored selection's ack is written again (after start-up). */
void egd_fleet_touch_all(struct egd *d);

/* The ack of one sandbox (docs/fleet.md, "Acks"), compact JSON on one
 * line, into *out (free()); under fleet.lock. 0 or -errno. */
int egd_fleet_ack_json(struct egd *d, const struct egd_fleet_sel *s, char **out);

/* GET /v1/status's "fleet" member; /metrics' execgate_fleet_* families. */
json_t *egd_fleet_status(struct egd *d);
void egd_fleet_metrics(struct egd *d, FILE *out);

/* fleet_watch.c: the watcher and acker threads. */
int egd_fleet_start(struct egd *d, char *err, size_t err_size);
void egd_fleet_stop(struct egd *d);

#endif
