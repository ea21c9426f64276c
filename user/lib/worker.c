// SPDX-License-Identifier: Apache-2.0
/* The worker handle: open maps, key set and verified-token cache kept
 * between calls, and the locks that make one handle safe for many threads
 * (the rules are in include/execgate/execgate.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sodium.h>
#include "lib/worker.h"
#include "loader/process/proc_id.h"
#include "loader/records/state_dir.h"

#define DEFAULT_CACHE 4096

const char *eg_worker_pin_dir(const struct eg_worker *w)
{
	return w->pin_dir;
}

const char *eg_worker_state_dir(const struct eg_worker *w)
{
	return w->state_dir;
}

static void set_err(char *err, size_t err_size, const char *fmt, const char *a, const char *b)
{
	if (err && err_size)
		snprintf(err, err_size, fmt, a, b);
}

int eg_worker_open(const struct eg_worker_config *cfg, struct eg_worker **out, char *err,
		   size_t err_size)
{
	struct eg_worker_config none = {0};
	struct eg_worker *w;
	int rc;

	EG_WK_ERRBUF(err, err_size);
	*out = NULL;
	if (!cfg)
		cfg = &none;
	if (sodium_init() < 0) {
		snprintf(err, err_size, "libsodium: initialisation failed");
		return -EIO;
	}
	if (!cfg->skip_namespace_check) {
		/* /proc numbers match what BPF reads only in the initial PID
		 * and time namespaces. */
		rc = eg_proc_check_namespaces(err, err_size);
		if (rc)
			return rc;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->state_lock_fd = -1;
	w->pins_dir_fd = -1;
	w->events_fd = -1;
	w->pin_dir = strdup(cfg->pin_dir ? cfg->pin_dir : EG_WORKER_DEFAULT_PIN_DIR);
	w->state_dir = strdup(cfg->state_dir ? cfg->state_dir : EG_WORKER_DEFAULT_STATE_DIR);
	w->keys = calloc(1, sizeof(*w->keys));
	w->cache = eg_token_cache_new(cfg->token_cache_capacity ? cfg->token_cache_capacity
								: DEFAULT_CACHE);
	if (!w->pin_dir || !w->state_dir || !w->keys || !w->cache) {
		snprintf(err, err_size, "worker: %s",
			 !w->cache && cfg->token_cache_capacity ? "token cache capacity too large"
								: "out of memory");
		rc = -ENOMEM;
		goto fail;
	}
	pthread_rwlock_init(&w->keys_lock, NULL);
	pthread_mutex_init(&w->cache_lock, NULL);
	pthread_mutex_init(&w->write_lock, NULL);
	pthread_mutex_init(&w->events_lock, NULL);
	for (size_t i = 0; i < EG_WORKER_STRIPES; i++)
		pthread_mutex_init(&w->stripes[i], NULL);
	w->locks_ready = true;
	eg_keyset_init(w->keys);
	rc = eg_runtime_open(&w->rt, w->pin_dir, w->state_dir, false, err, err_size);
	if (rc)
		goto fail;
	w->rt_open = true;
	rc = eg_wk_pins_init(w, err, err_size);
	if (rc)
		goto fail;
	rc = eg_keystore_load(w->state_dir, w->keys, w->key_warnings, sizeof(w->key_warnings), err,
			      err_size);
	if (rc)
		goto fail;
	rc = eg_wk_node_key_load(w, cfg->worker_id, err, err_size);
	if (rc)
		goto fail;
	*out = w;
	return 0;
fail:
	eg_worker_close(w);
	return rc;
}

void eg_worker_close(struct eg_worker *w)
{
	if (!w)
		return;
	eg_wk_events_close(w);
	if (w->rt_open)
		eg_runtime_close(&w->rt);
	eg_wk_pins_destroy(w);
	if (w->state_lock_fd >= 0)
		close(w->state_lock_fd);
	eg_token_cache_free(w->cache);
	if (w->keys)
		sodium_memzero(w->keys, sizeof(*w->keys));
	sodium_memzero(w->node_sk, sizeof(w->node_sk));
	free(w->keys);
	if (w->locks_ready) {
		pthread_rwlock_destroy(&w->keys_lock);
		pthread_mutex_destroy(&w->cache_lock);
		pthread_mutex_destroy(&w->write_lock);
		pthread_mutex_destroy(&w->events_lock);
		for (size_t i = 0; i < EG_WORKER_STRIPES; i++)
			pthread_mutex_destroy(&w->stripes[i]);
	}
	free(w->pin_dir);
	free(w->state_dir);
	free(w);
}

/* --- locks ----------------------------------------------------------------- */

pthread_mutex_t *eg_wk_stripe(struct eg_worker *w, const __u8 sandbox[EG_ID_BYTES])
{
	/* Sandbox ids are control-plane UUIDs, not attacker-chosen per call;
	 * a collision only serialises two sandboxes, never mixes them. */
	uint32_t h = 2166136261u;

	for (int i = 0; i < EG_ID_BYTES; i++)
		h = (h ^ sandbox[i]) * 16777619u;
	return &w->stripes[h % EG_WORKER_STRIPES];
}

int eg_wk_write_begin(struct eg_worker *w, char *err, size_t err_size)
{
	char path[4096];
	int rc;

	pthread_mutex_lock(&w->write_lock);
	if (w->state_lock_fd < 0) {
		if (mkdir(w->state_dir, EG_STATE_DIR_MODE) && errno != EEXIST) {
			rc = -errno;
			set_err(err, err_size, "state dir %s: %s", w->state_dir, strerror(-rc));
			goto fail;
		}
		snprintf(path, sizeof(path), "%s/lock", w->state_dir);
		w->state_lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (w->state_lock_fd < 0) {
			rc = -errno;
			set_err(err, err_size, "state dir %s: lock: %s", w->state_dir,
				strerror(-rc));
			goto fail;
		}
	}
	/* flock is per open file description: the mutex above orders this
	 * process's threads, the flock orders processes (the CLI, a second
	 * handle). */
	if (flock(w->state_lock_fd, LOCK_EX)) {
		rc = -errno;
		set_err(err, err_size, "state dir %s: lock: %s", w->state_dir, strerror(-rc));
		goto fail;
	}
	return 0;
fail:
	pthread_mutex_unlock(&w->write_lock);
	return rc;
}

void eg_wk_write_end(struct eg_worker *w)
{
	flock(w->state_lock_fd, LOCK_UN);
	pthread_mutex_unlock(&w->write_lock);
}

/* --- text forms ------------------------------------------------------------ */

int eg_uuid_from_text(const char *text, __u8 out[EG_ID_BYTES])
{
	return eg_uuid_parse(text, out) ? -EINVAL : 0;
}

void eg_uuid_to_text(const __u8 id[EG_ID_BYTES], char out[EG_UUID_TEXT_LEN])
{
	eg_uuid_format(id, out);
}

/* --- observation ----------------------------------------------------------- */

void eg_worker_stats(struct eg_worker *w, struct eg_worker_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->cache_hits = atomic_load(&w->cache_hits);
	out->cache_misses = atomic_load(&w->cache_misses);
	pthread_mutex_lock(&w->cache_lock);
	out->cache_entries = eg_token_cache_size(w->cache);
	out->cache_capacity = eg_token_cache_capacity(w->cache);
	pthread_mutex_unlock(&w->cache_lock);
	pthread_rwlock_rdlock(&w->keys_lock);
	out->keyset_generation = w->keys->generation;
	out->keys = w->keys->n;
	pthread_rwlock_unlock(&w->keys_lock);
}

int eg_worker_counters(struct eg_worker *w, uint64_t *out, size_t max)
{
	__u64 c[EG_K_REASON_COUNT];
	int rc = eg_wk_maps_enter(w, NULL, 0);

	if (rc)
		return rc;
	rc = eg_counters_read(&w->rt.maps, c);
	eg_wk_maps_exit(w);
	if (rc)
		return rc;
	for (size_t i = 0; i < max && i < EG_K_REASON_COUNT; i++)
		out[i] = c[i];
	return EG_K_REASON_COUNT;
}

size_t eg_worker_map_fill(struct eg_worker *w, struct eg_map_fill *out, size_t max)
{
	static const enum eg_map_id hash_maps[] = {
	    EG_MAP_RECORDS,	   EG_MAP_ENDPOINTS,	   EG_MAP_PATH_FILTER,
	    EG_MAP_GRANTS,	   EG_MAP_VSOCK_ENDPOINTS, EG_MAP_INODE_ENDPOINTS,
	    EG_MAP_INET_ENDPOINTS, EG_MAP_SERVICE_GRANTS,  EG_MAP_INET_NETNS,
	    EG_MAP_INET_TAGS,	   EG_MAP_ADMIT_CACHE,
	};
	size_t n = 0;

	if (eg_wk_maps_enter(w, NULL, 0))
		return 0;
	for (size_t i = 0; i < sizeof(hash_maps) / sizeof(hash_maps[0]) && n < max; i++) {
		int fd = w->rt.maps.fd[hash_maps[i]];

		if (fd < 0 || eg_map_fill(fd, &out[n].entries, &out[n].max_entries))
			continue;
		out[n].name = eg_map_names[hash_maps[i]];
		n++;
	}
	eg_wk_maps_exit(w);
	return n;
}

int eg_worker_events_fd(struct eg_worker *w)
{
	return w->rt.maps.fd[EG_MAP_EVENTS];
}
