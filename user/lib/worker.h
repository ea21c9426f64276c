/* SPDX-License-Identifier: Apache-2.0 */
/* Inside the worker handle: what the files of user/lib share, never installed. */
#ifndef EXECGATE_LIB_WORKER_H
#define EXECGATE_LIB_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/stat.h>
#include "core/admission.h"
#include "core/ids.h"
#include "core/keyset.h"
#include "core/token_cache.h"
#include "execgate/execgate.h"
#include "loader/records/runtime.h"

#define EG_WORKER_STRIPES 64

struct ring_buffer; /* libbpf */

struct eg_worker {
	char *pin_dir, *state_dir;
	struct eg_runtime rt; /* maps open, no flock held */
	bool rt_open;

	/* worker_pins.c: read-held by every call that uses rt.maps (through
	 * eg_wk_maps_enter), write-held by a reopen that swaps them. */
	pthread_rwlock_t pins_lock;
	bool pins_lock_ready;
	bool pins_gone;				/* unloaded: rt.maps closed, calls fail -ENOLINK */
	int pins_dir_fd;			/* pin_dir, O_PATH, opened with the fds */
	_Atomic long long pins_next_path_check; /* CLOCK_MONOTONIC ns: look pin_dir up again */
	struct stat pins_dir;			/* pin_dir as it was when the fds were opened */
	ino_t pins_ino[EG_MAP__COUNT];		/* each pin's inode then */
	atomic_uint_fast64_t pins_generation;	/* +1 per reopen or unload seen */

	/* Read-held by admit/check for the whole authentication, write-held
	 * by a reload that swaps the set: a verify never sees half a set. */
	pthread_rwlock_t keys_lock;
	struct eg_keyset *keys;
	/* The key files the last load skipped (eg_keystore_load), under
	 * keys_lock; "" when none. */
	char key_warnings[EG_ERR_MAX];

	pthread_mutex_t cache_lock; /* the token cache is single-threaded */
	struct eg_token_cache *cache;
	atomic_uint_fast64_t cache_hits, cache_misses;

	/* Per-sandbox serialisation of admit/install/retire/forget. */
	pthread_mutex_t stripes[EG_WORKER_STRIPES];

	/* Writers: this mutex for threads, flock(state_lock_fd) for processes. */
	pthread_mutex_t write_lock;
	int state_lock_fd;
	bool locks_ready;

	/* events.c: eg_worker_events_next's reader of eg_events (libbpf's
	 * ring_buffer, NULL while closed), under events_lock, on its own fd
	 * (events_fd, -1 while closed) of the map of pins generation
	 * events_generation. */
	pthread_mutex_t events_lock;
	struct ring_buffer *events_ring;
	struct eg_denial *events_out; /* where take_one writes, during a call */
	int events_fd;
	uint64_t events_generation;

	/* Node key (node_key.c): signs refresh-route and deny verdicts. */
	bool have_node_key;
	uint8_t node_sk[crypto_sign_SECRETKEYBYTES];
	uint8_t node_kid[EG_KEY_ID_LEN];
	__u8 worker_id[EG_ID_BYTES];
	bool have_worker_id; /* worker_id is known (config, or node.worker) */
};

/* Every call accepts err == NULL: its message then goes to a scratch
 * buffer, so the code below can always write one. */
#define EG_WK_ERRBUF(err, err_size)                                                                \
	char err##_scratch_[EG_ERR_MAX];                                                           \
	if (!(err) || !(err_size)) {                                                               \
		(err) = err##_scratch_;                                                            \
		(err_size) = sizeof(err##_scratch_);                                               \
	}

/* events.c: closes eg_worker_events_next's reader (eg_worker_close). */
void eg_wk_events_close(struct eg_worker *w);

pthread_mutex_t *eg_wk_stripe(struct eg_worker *w, const __u8 sandbox[EG_ID_BYTES]);
/* Takes the writer locks (mutex, then flock); 0 or -errno with err set. */
/* The digest (eg_worker_keys_digest) and size of the key set that loads
 * from <state_dir>/keys now, without a handle: status's key_set. */
int eg_wk_keys_dir_digest(const char *state_dir, size_t *n, char digest[EG_KEYS_DIGEST_TEXT_LEN],
			  char *err, size_t err_size);
int eg_wk_write_begin(struct eg_worker *w, char *err, size_t err_size);
void eg_wk_write_end(struct eg_worker *w);
/* rep's warnings for spec: endpoints no loaded tier enforces
 * (install_warnings.c). */
void eg_wk_install_warnings(struct eg_worker *w, const struct eg_install_spec *spec,
			    struct eg_install_report *rep);

/* worker_pins.c. init: after eg_runtime_open, takes the pins' stamps. */
int eg_wk_pins_init(struct eg_worker *w, char *err, size_t err_size);
void eg_wk_pins_destroy(struct eg_worker *w);
/* Checks that rt.maps are the maps pinned now (reopening them if they were
 * replaced) and read-holds them until eg_wk_maps_exit: 0, -ENOLINK (nothing
 * loaded, err says so) or another negative errno. Take it after the stripe
 * and writer locks, never before, and never twice on one thread. */
int eg_wk_maps_enter(struct eg_worker *w, char *err, size_t err_size);
void eg_wk_maps_exit(struct eg_worker *w);

/* Loads <state_dir>/node.seed and the worker id (config, else node.worker);
 * without either, verdicts stay unsigned (0). */
int eg_wk_node_key_load(struct eg_worker *w, const char *worker_id, char *err, size_t err_size);
/* The install rule (fleet_gate.c, core/fleet_gate.h), under the writer
 * locks: 0, -EXDEV (wrong worker), -ENOMSG (not selected) or another
 * -errno, err set. */
int eg_wk_install_gate(struct eg_worker *w, const struct eg_install_spec *spec, char *err,
		       size_t err_size);
/* Fills res->signed_verdict for a refresh-route or deny of a decoded token. */
void eg_wk_sign_verdict(struct eg_worker *w, struct eg_verdict_result *res, uint64_t now);

#endif
