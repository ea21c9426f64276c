/* SPDX-License-Identifier: Apache-2.0 */
/* Inside the fleet's worker side (user/fleetd/worker.h): the state shared
 * by the rules' application (worker.c) and the etcd threads (watch.c).
 *
 * One mutex (lock) orders everything that decides what a sandbox's record
 * may be: a PUT /v1/sandboxes/{uuid} holds it across its check and its
 * install, the watcher across applying one document. Admission never
 * takes it: verdicts come from the worker's maps whatever etcd does. */
#ifndef EXECGATE_FLEETD_WORKER_IMPL_H
#define EXECGATE_FLEETD_WORKER_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "core/keyset.h"
#include "core/keyset_doc.h"
#include "core/selection.h"

#include <execgate/execgate.h>
#include "fleetd/worker.h"

/* Why a document was refused, by kind: the decoder's reasons, then ours. */
#define EG_FW_SEL_BAD_KEY EG_SEL__COUNT	      /* key is not .../selections/<uuid> */
#define EG_FW_SEL_SANDBOX (EG_SEL__COUNT + 1) /* selection's sandbox is not the key's */
#define EG_FW_SEL_OLDER	  (EG_SEL__COUNT + 2) /* not newer than the one in force */
#define EG_FW_SEL_REASONS (EG_SEL__COUNT + 3)
#define EG_FW_KSD_EQUAL	  EG_KSD__COUNT	      /* the applied version again */
#define EG_FW_KSD_OLDER	  (EG_KSD__COUNT + 1) /* a lower version */
#define EG_FW_KSD_APPLY	  (EG_KSD__COUNT + 2) /* the worker could not apply it */
#define EG_FW_KSD_REASONS (EG_KSD__COUNT + 3)

#define EG_FW_ACK_FP_LEN 16

struct eg_fw_sel {
	uint8_t sandbox[EG_ID_BYTES];
	bool has_sel;
	struct eg_selection sel;
	int64_t sel_rev;  /* mod_revision of the key that carried sel */
	int64_t seen_rev; /* the newest write of the key judged (applied or refused) */
	/* A write refused unknown-key: judged again (its key may come with
	 * the next key set), counted once. */
	int64_t unknown_rev;
	bool ack_dirty;
	/* the fingerprint of the last ack written (fleetd/ack.c) */
	bool ack_written;
	uint8_t ack_fp[EG_FW_ACK_FP_LEN];
};

struct eg_fleet_worker {
	struct eg_worker *worker;
	char state_dir[512], prefix[128], endpoints[1024], self_text[EG_UUID_TEXT_LEN];
	const struct eg_etcd_auth *etcd_auth; /* the config's, NULL: none */
	uint8_t self[EG_ID_BYTES];
	unsigned reconcile_interval;
	void (*log)(int prio, const char *line, void *ctx);
	void (*streams)(const struct eg_stream_cuts *s, void *ctx);
	void *ctx;
	pthread_mutex_t lock;
	pthread_cond_t wake; /* the acker: an ack to write, or stop */
	struct eg_fw_sel *sels;
	size_t n_sels, cap_sels;
	struct eg_keyset roots;
	uint64_t keyset_version;
	int64_t keyset_seen_rev;
	int64_t applied_rev;	 /* the store revision this worker has applied */
	int64_t store_rev;	 /* the newest store revision etcd told it */
	uint64_t last_update_ns; /* CLOCK_MONOTONIC of the last answer from etcd */
	bool connected;
	char endpoint[256];
	uint64_t refused_sel[EG_FW_SEL_REASONS];
	uint64_t refused_ksd[EG_FW_KSD_REASONS];
	uint64_t reconciles, compactions, watch_errors, acks_written, ack_errors, retired;
	/* threads (watch.c) */
	pthread_t watcher, acker;
	bool started;
	uint8_t node_sk[64]; /* the node key that signs the acks (ack.c) */
	bool have_node_key;
	volatile int interrupt; /* ends the watch: stop, or a reconcile is due */
	volatile int stopping;
	char prefix_workers[512]; /* <prefix>/workers/<self>/selections/ */
	char key_keyset[256];	  /* <prefix>/keyset */
};

void eg_fw_log(struct eg_fleet_worker *d, int prio, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The ack of s as one line of JSON (docs/fleet.md, "Acks") into *out
 * (free()); under lock. 0 or -errno. */
int eg_fw_ack_json(struct eg_fleet_worker *d, const struct eg_fw_sel *s, char **out);
/* ack.c. The ack of s signed by the node key (<state_dir>/node.seed,
 * loaded at the first call), one line (docs/fleet.md, "Acks"), into *out
 * (free()), and fp, the fingerprint of what it says but its revision and
 * time; under lock. 0 or -errno (no node key, or the mode unreadable: the
 * ack is not written, and retried). */
int eg_fw_ack_signed(struct eg_fleet_worker *d, const struct eg_fw_sel *s, char **out,
		     uint8_t fp[EG_FW_ACK_FP_LEN]);
/* Marks dirty every written ack that no longer says what is true (a
 * record or mode changed by another process). Takes the lock. */
void eg_fw_ack_recheck(struct eg_fleet_worker *d);
uint64_t eg_fw_mono_ns(void);

#endif
