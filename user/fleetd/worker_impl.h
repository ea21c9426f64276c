/* SPDX-License-Identifier: Apache-2.0 */
/* Inside the fleet's worker side (user/fleetd/worker.h): the state shared
 * by the rules' application (apply_selection.c, apply_keyset.c) and the etcd threads (watch.c).
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
#include "core/fleet_apply.h"
#include "core/keyset_doc.h"
#include "core/selection.h"

#include <execgate/execgate.h>
#include "fleetd/backend.h"
#include "fleetd/worker.h"

/* The most keys under <prefix>/workers/<self>/selections/ that a worker
 * reads every etcd_reconcile_interval (docs/fleet.md, "Bounded work"):
 * far above the sandboxes a worker runs. Above it (junk put by a writer)
 * the periodic read stops and status says so; the watch goes on. */
#define EG_FW_MAX_PREFIX_KEYS 10000u

/* Why a document was refused, by kind: the decoders' reasons, then ours. */
#define EG_FW_SEL_BAD_KEY  EG_SEL__COUNT       /* key is not .../selections/<uuid> */
#define EG_FW_SEL_SANDBOX  (EG_SEL__COUNT + 1) /* selection's sandbox is not the key's */
#define EG_FW_SEL_OLDER	   (EG_SEL__COUNT + 2) /* not newer than the one in force */
#define EG_FW_SEL_AUDIENCE (EG_SEL__COUNT + 3) /* v2: addressed to another worker */
#define EG_FW_SEL_NO_AUD   (EG_SEL__COUNT + 4) /* v1 naming another worker: no audience */
#define EG_FW_SEL_REASONS  (EG_SEL__COUNT + 5)
#define EG_FW_KSD_EQUAL	   EG_KSD__COUNT       /* the applied version again */
#define EG_FW_KSD_OLDER	   (EG_KSD__COUNT + 1) /* a lower version */
#define EG_FW_KSD_APPLY	   (EG_KSD__COUNT + 2) /* the worker could not apply it */
#define EG_FW_KSD_EXPIRED  (EG_KSD__COUNT + 3) /* its signed expiry has passed */
#define EG_FW_KSD_FLOOR	   (EG_KSD__COUNT + 4) /* below the highest version ever seen */
#define EG_FW_KSD_REASONS  (EG_KSD__COUNT + 5)

/* A selection in force. Only a verified selection makes one: a refused
 * document costs no memory at all (a writer can put any number of keys). */
#define EG_FW_ACK_FP_LEN 16

struct eg_fw_sel {
	uint8_t sandbox[EG_ID_BYTES];
	bool has_sel; /* always true once in the table */
	struct eg_selection sel;
	uint8_t raw[EG_SEL_MAX_LEN]; /* the signed bytes: verified again at a key-set change */
	size_t raw_len;
	int64_t sel_rev; /* mod_revision of the key that carried sel (informational) */
	bool ack_dirty;
	/* Its record is being retired with the state lock let go (apply_selection.c,
	 * retire): no ack of it is written until the cut is over, so a
	 * "retired" ack still means the old streams are cut. */
	bool retiring;
	/* the fingerprint of the last ack written (fleetd/ack.c) */
	bool ack_written;
	uint8_t ack_fp[EG_FW_ACK_FP_LEN];
};

struct eg_fleet_worker {
	/* every call into records, keys and modes (fleetd/backend.h) */
	const struct eg_fleet_backend *be;
	void *be_ctx;
	char state_dir[512], prefix[128], endpoints[1024], self_text[EG_UUID_TEXT_LEN];
	const struct eg_etcd_auth *etcd_auth; /* the config's, NULL: none */
	/* the token the watcher, reconciler and acker share: one login a
	 * worker, not three (user/fleet/etcd.h, struct eg_etcd_session) */
	struct eg_etcd_session *etcd_session;
	uint8_t self[EG_ID_BYTES];
	unsigned reconcile_interval;
	void (*log)(int prio, const char *line, void *ctx);
	void (*streams)(const struct eg_stream_cuts *s, void *ctx);
	void *ctx;
	/* Two locks, taken in this order. apply_lock makes each change of
	 * what is in force one step: a PUT's install rule check and install
	 * (eg_fleet_worker_install), and the watcher's apply of a selection
	 * or key set with the retire it implies; only its holders insert
	 * into or drop from sels. lock guards the state below, for them and
	 * for the readers (status, metrics, the acker): held for reads and
	 * writes of it only, never across an install or a retire, so a slow
	 * stream cut does not hold status and /metrics. */
	pthread_mutex_t apply_lock;
	pthread_mutex_t lock;
	pthread_cond_t wake; /* the acker: an ack to write, or stop */
	/* the selections in force, and an open-addressing index over them by
	 * sandbox (slot = position + 1, 0 empty): a lookup is O(1) */
	struct eg_fw_sel *sels;
	size_t n_sels, cap_sels;
	uint32_t *idx;
	size_t idx_cap; /* a power of two, at least 2 n_sels */
	struct eg_keyset roots;
	uint64_t keyset_version;
	uint64_t keys_gen; /* bumped under lock by every key set applied */
	/* the highest key-set version this worker ever saw applied, or was
	 * given (keyset_min_version): nothing below it applies */
	uint64_t keyset_floor, keyset_min_version;
	uint64_t keyset_expires_at; /* of the applied set; 0: none (v1) or unknown */
	bool keyset_judged;	    /* the key-set key was judged once since start or a rewind */
	int64_t applied_rev;	    /* the store revision this worker has applied */
	/* Two key-set writes that need no second judgement, by their
	 * mod_revision (0: none): the one that brought the set in force,
	 * whoever read it (the reconciler too, which counts nothing), and
	 * the last one judged by a read ahead of its stream (keys_ahead.c).
	 * The stream's delivery of either later is no refusal: the same
	 * write, not an equal one. */
	int64_t keyset_rev, keyset_ahead_rev;
	int64_t store_rev;	 /* the newest store revision etcd told it */
	uint64_t cluster_id;	 /* the store's cluster id, 0 before the first read */
	uint64_t last_update_ns; /* CLOCK_MONOTONIC of the last answer from etcd */
	bool connected;
	char endpoint[256];
	uint64_t refused_sel[EG_FW_SEL_REASONS];
	uint64_t refused_ksd[EG_FW_KSD_REASONS];
	uint64_t reconciles, compactions, watch_errors, acks_written, ack_errors, retired;
	uint64_t skipped_keys; /* etcd keys holding a NUL, skipped by the client */
	struct {
		const void *e; /* the watcher's and the reconciler's handles */
		uint64_t n;
	} skipped_by[2];
	uint64_t dropped;	/* selections whose key was withdrawn, dropped */
	uint64_t store_rewinds; /* the store's revision or cluster id went back */
	int64_t last_rewind_at; /* unix seconds, 0: never */
	char last_rewind[200];	/* what the last rewind was */
	/* refusals logged this second (worker.c, eg_fw_refusal_loggable) */
	uint64_t log_second, log_in_second, log_suppressed;
	/* threads (watch.c) */
	pthread_t watcher, acker, reconciler;
	bool started;
	uint8_t node_sk[64]; /* the node key that signs the acks (ack.c) */
	bool have_node_key;
	volatile int interrupt;	    /* ends the watch: stop, or a reconcile is due */
	volatile int full_read_due; /* the reconciler reads everything at once */
	int64_t read_rev;	    /* the store revision the last read (full or since) saw */
	size_t prefix_keys;	    /* keys under the selections prefix at the last full read */
	uint64_t periodic_skipped;  /* periodic reads not made: prefix_keys above the limit */
	volatile int stopping;
	char prefix_workers[512]; /* <prefix>/workers/<self>/selections/ */
	char key_keyset[256];	  /* <prefix>/keyset */
};

void eg_fw_log(struct eg_fleet_worker *d, int prio, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
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
/* The sandbox's record as the rules read it: the record alone, one map
 * lookup (this runs at every selection read and every ack, and counting
 * endpoints and grants would walk whole maps). No record: all zero. */
void eg_fw_local_of(struct eg_fleet_worker *d, const uint8_t sandbox[EG_ID_BYTES],
		    struct eg_fleet_local *l);
uint64_t eg_fw_mono_ns(void);
/* eg_fleet_worker_apply_selection / _keyset; may_count false: a refusal
 * is not counted nor logged (the periodic full read beside the watch,
 * which would count a write the watch counts too). */
void eg_fw_apply_selection(struct eg_fleet_worker *d, const char *key, const char *value,
			   size_t len, int64_t rev, bool may_count);
void eg_fw_apply_keyset(struct eg_fleet_worker *d, const char *key, const char *value, size_t len,
			int64_t rev, bool may_count);
/* Retires every active record that the selection in force does not name,
 * as reading each selection again would. Takes the lock. */
void eg_fw_enforce_all(struct eg_fleet_worker *d);
/* The selection in force for sandbox, NULL when none; under lock. */
struct eg_fw_sel *eg_fw_find(struct eg_fleet_worker *d, const uint8_t sandbox[EG_ID_BYTES]);
/* The store answered at revision with cluster id cluster (0: unknown) a
 * request sent when the newest revision seen was before (store_rev then:
 * another thread may have seen newer ones since, while a long read was
 * served at its first page's revision); under lock. True when it went back
 * (a restore, a re-created cluster): the revisions and the counting floor
 * are reset, the rewind counted and logged, and the caller must read
 * everything again. */
bool eg_fw_store_seen(struct eg_fleet_worker *d, uint64_t cluster, int64_t before, int64_t revision,
		      const char *where);
/* An etcd key in a log line: attacker-controlled bytes, cut to 400
 * (worker.c). */
const char *eg_fw_key_text(const char *key, char *buf, size_t size);
/* Whether one more refusal may be logged this second; under lock
 * (worker.c). */
bool eg_fw_refusal_loggable(struct eg_fleet_worker *d);
/* selections.c: the selections in force and their copies on disk
 * (<state_dir>/fleet/selections/<uuid>). */
void eg_fw_sel_dir(const struct eg_fleet_worker *d, char *out, size_t size);
/* A new entry for a selection that has just verified; NULL when out of
 * memory. Under lock. */
struct eg_fw_sel *eg_fw_insert(struct eg_fleet_worker *d, const uint8_t sandbox[EG_ID_BYTES]);
/* Forgets the selection in force s, on disk too. Under lock. */
void eg_fw_drop(struct eg_fleet_worker *d, struct eg_fw_sel *s);
/* Decodes raw and verifies it against the worker's key set into *out. */
enum eg_sel_err eg_fw_verify_sel(struct eg_fleet_worker *d, const uint8_t *raw, size_t len,
				 struct eg_selection *out);
struct eg_etcd;
struct eg_etcd_event;
/* watch.c: an answer from etcd on handle e: the worker's view is current
 * as of revision (store_rev, connected, the endpoint, skipped keys). */
void eg_fw_heard(struct eg_fleet_worker *d, struct eg_etcd *e, int64_t revision);
/* keys_ahead.c: before a watch batch ev[0..n) is applied, reads the
 * key-set key when the batch holds a selection of a key the worker does
 * not hold (the two streams are not in order with each other); *ahead_at
 * paces the reads that bring no new key set. */
void eg_fw_keys_ahead(struct eg_fleet_worker *d, struct eg_etcd *e, const struct eg_etcd_event *ev,
		      size_t n, uint64_t *ahead_at);
/* A key-set write read ahead of its stream: judged (and counted) now, as
 * the stream would, and recorded (keyset_ahead_rev) so that the stream's
 * delivery of it is not judged again. */
void eg_fw_apply_keyset_ahead(struct eg_fleet_worker *d, const char *key, const char *value,
			      size_t len, int64_t rev);
/* Whether the selection text decodes and names a key the worker's key set
 * does not hold (its signature is not checked). */
bool eg_fw_sel_key_unknown(struct eg_fleet_worker *d, const char *text, size_t len);
/* Writes s's copy on disk, crash-safe. 0 or -errno. */
int eg_fw_store_selection(struct eg_fleet_worker *d, const struct eg_fw_sel *s);
/* Reads the copies back at open: 0, or -errno with err set. */
int eg_fw_load_selections(struct eg_fleet_worker *d, char *err, size_t err_size);
/* apply_keyset.c: reads <state_dir>/fleet/keyset (the version applied
 * last and its expiry) at open. */
void eg_fw_load_keyset_state(struct eg_fleet_worker *d);
/* Whether the applied key set's signed expiry has passed (now: unix s). */
bool eg_fw_keyset_stale(const struct eg_fleet_worker *d, int64_t now);

#endif
