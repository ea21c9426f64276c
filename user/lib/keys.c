// SPDX-License-Identifier: Apache-2.0
/* The handle's key set. Every change is a transaction over disk and
 * memory: the file is written or removed in <state_dir>/keys first
 * (user/loader/records/keystore.c), then the directory is re-read into a fresh set
 * that is swapped in under the write lock, and the token cache is flushed.
 * When the change cannot be completed, what was done is undone, so that
 * after every answer memory holds exactly the keys that load from disk --
 * except that a withdrawal always leaves memory, even when its file could
 * not be removed (fail closed; the error says so). A file that does not
 * load is skipped and reported on its own (key_warnings): it never decides
 * the fate of its neighbours. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/keyset_digest.h"
#include "lib/worker.h"

/* The directory, read into a fresh set whose generation continues the
 * current one: a cache entry of the old set can never match. */
static int load_next(struct eg_worker *w, struct eg_keyset **out, char *warn, size_t warn_size,
		     char *err, size_t err_size)
{
	struct eg_keyset *next = calloc(1, sizeof(*next));
	int rc;

	*out = NULL;
	if (!next) {
		snprintf(err, err_size, "key set: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	pthread_rwlock_rdlock(&w->keys_lock);
	*next = *w->keys;
	pthread_rwlock_unlock(&w->keys_lock);
	rc = eg_keystore_load(w->state_dir, next, warn, warn_size, err, err_size);
	if (rc) {
		sodium_memzero(next, sizeof(*next));
		free(next);
		return rc;
	}
	*out = next;
	return 0;
}

/* Swaps next in and flushes the token cache; with only_if_changed, and
 * next holding the same keys as memory, keeps the set and the cache (and
 * takes next's warnings). One write-lock section: the keys compared are
 * the keys replaced. Consumes next; true when it was swapped in. */
static bool swap_in(struct eg_worker *w, struct eg_keyset *next, const char *warn,
		    bool only_if_changed)
{
	struct eg_keyset *old = next;
	bool swap;

	pthread_rwlock_wrlock(&w->keys_lock);
	swap = !only_if_changed || !eg_keyset_same_keys(w->keys, next);
	if (swap) {
		old = w->keys;
		w->keys = next;
		pthread_mutex_lock(&w->cache_lock);
		eg_token_cache_flush(w->cache);
		pthread_mutex_unlock(&w->cache_lock);
	}
	snprintf(w->key_warnings, sizeof(w->key_warnings), "%s", warn);
	pthread_rwlock_unlock(&w->keys_lock);
	sodium_memzero(old, sizeof(*old));
	free(old);
	return swap;
}

static int reload(struct eg_worker *w, bool only_if_changed, bool *changed, char *err,
		  size_t err_size)
{
	char warn[EG_ERR_MAX] = "";
	struct eg_keyset *next;
	int rc;

	*changed = false;
	/* This process's key writers (the API's) hold write_lock from their
	 * file change to their swap: a reload that read the directory before
	 * a removal must not swap in after it and trust the key again. Not
	 * the state dir's flock: another process's change is followed by its
	 * own directory event, and the last read wins. */
	pthread_mutex_lock(&w->write_lock);
	rc = load_next(w, &next, warn, sizeof(warn), err, err_size);
	if (!rc) {
		*changed = swap_in(w, next, warn, only_if_changed);
		snprintf(err, err_size, "%s", warn);
	}
	pthread_mutex_unlock(&w->write_lock);
	return rc;
}

int eg_worker_keys_reload(struct eg_worker *w, char *err, size_t err_size)
{
	bool changed;

	EG_WK_ERRBUF(err, err_size);
	return reload(w, false, &changed, err, err_size);
}

int eg_worker_keys_sync(struct eg_worker *w, bool *changed, char *err, size_t err_size)
{
	EG_WK_ERRBUF(err, err_size);
	return reload(w, true, changed, err, err_size);
}

static bool has_kid(const struct eg_keyset *ks, const char *kid_text)
{
	uint8_t kid[EG_KEY_ID_LEN];

	return !eg_key_id_parse(kid_text, kid) && eg_keyset_find(ks, kid);
}

/* The shared tail of both adds. stored: 0 (a new file), -EEXIST (the file
 * was there) or the store's error. The new file goes again unless the
 * set that includes it is swapped in. */
static int add_locked(struct eg_worker *w, int stored, const char *kid, char *err, size_t err_size)
{
	char warn[EG_ERR_MAX] = "", scratch[EG_ERR_MAX];
	struct eg_keyset *next = NULL;
	int rc;

	if (stored && stored != -EEXIST)
		return stored;
	rc = load_next(w, &next, warn, sizeof(warn), err, err_size);
	if (!rc && !has_kid(next, kid)) {
		/* Its own file did not load (the set is full, or the file
		 * already there is not a key file): warn says why. */
		const char *why = strstr(warn, kid);
		size_t line = why ? strcspn(why, "\n") : 0;

		snprintf(err, err_size, "key %s: stored but not loaded: %.*s", kid, (int)line,
			 why ? why : "not in the key set read back");
		rc = -EINVAL;
	}
	if (rc) {
		if (next) {
			sodium_memzero(next, sizeof(*next));
			free(next);
		}
		if (!stored)
			eg_keystore_remove(w->state_dir, kid, scratch, sizeof(scratch));
		return rc;
	}
	swap_in(w, next, warn, false);
	snprintf(err, err_size, "%s", warn);
	return stored == -EEXIST ? 1 : 0;
}

int eg_worker_keys_add(struct eg_worker *w, const char *file, char kid[EG_KID_TEXT_LEN], char *err,
		       size_t err_size)
{
	int rc;

	EG_WK_ERRBUF(err, err_size);
	rc = eg_wk_write_begin(w, err, err_size);
	if (rc)
		return rc;
	rc = eg_keystore_add(w->state_dir, file, kid, err, err_size);
	rc = add_locked(w, rc, kid, err, err_size);
	eg_wk_write_end(w);
	return rc;
}

int eg_worker_keys_add_text(struct eg_worker *w, const char *text, size_t len,
			    const char *expect_kid, char kid[EG_KID_TEXT_LEN], char *err,
			    size_t err_size)
{
	uint8_t pk[crypto_sign_PUBLICKEYBYTES], id[EG_KEY_ID_LEN];
	char found[EG_KID_TEXT_LEN];
	enum eg_key_err kerr;
	int rc;

	EG_WK_ERRBUF(err, err_size);
	/* The key-file decoder is the one strict parser of the format (and
	 * refuses a secret by its type); the id is checked before anything
	 * is stored. */
	kerr = eg_pubkey_parse(text, len, pk);
	if (kerr != EG_KEY_OK) {
		snprintf(err, err_size, "key: %s: %s", eg_key_err_name(kerr),
			 eg_key_err_detail(kerr));
		return -EINVAL;
	}
	eg_key_id(pk, id);
	eg_key_id_format(id, found);
	if (expect_kid && strcmp(expect_kid, found)) {
		snprintf(err, err_size, "key %s: the key given has id %s", expect_kid, found);
		return -EINVAL;
	}
	rc = eg_wk_write_begin(w, err, err_size);
	if (rc)
		return rc;
	rc = eg_keystore_add_text(w->state_dir, text, len, kid, err, err_size);
	rc = add_locked(w, rc, kid, err, err_size);
	eg_wk_write_end(w);
	return rc;
}

/* The key leaves memory whatever happens on disk; then memory is made
 * what the directory holds (less that key). */
static int remove_locked(struct eg_worker *w, const char *kid_text, char *err, size_t err_size)
{
	char warn[EG_ERR_MAX] = "", disk_err[EG_ERR_MAX] = "", load_err[EG_ERR_MAX] = "";
	uint8_t kid[EG_KEY_ID_LEN];
	struct eg_keyset *next;
	bool held;
	int disk, rc;

	if (eg_key_id_parse(kid_text, kid)) {
		snprintf(err, err_size, "key %s: not a key id (16 hex digits)", kid_text);
		return -EINVAL;
	}
	pthread_rwlock_rdlock(&w->keys_lock);
	held = eg_keyset_find(w->keys, kid) != NULL;
	pthread_rwlock_unlock(&w->keys_lock);
	disk = eg_keystore_remove(w->state_dir, kid_text, disk_err, sizeof(disk_err));
	if (disk == -ENOENT && !held) {
		snprintf(err, err_size, "key %s: not in the key set", kid_text);
		return -ENOENT;
	}
	rc = load_next(w, &next, warn, sizeof(warn), load_err, sizeof(load_err));
	if (rc) {
		/* The directory cannot be read back: the set held, less
		 * this key. */
		next = calloc(1, sizeof(*next));
		if (!next) {
			snprintf(err, err_size, "key %s: %s", kid_text, strerror(ENOMEM));
			return -ENOMEM;
		}
		pthread_rwlock_rdlock(&w->keys_lock);
		*next = *w->keys;
		pthread_rwlock_unlock(&w->keys_lock);
		next->generation++;
		snprintf(warn, sizeof(warn), "%s: kept the other keys held", load_err);
	}
	eg_keyset_remove(next, kid); /* EG_KEY_NOT_FOUND: not loaded, fine */
	swap_in(w, next, warn, false);
	if (disk && disk != -ENOENT) {
		snprintf(err, err_size,
			 "key %s: withdrawn from memory, but its file stays: %s (it is trusted "
			 "again at the next reload unless the file goes)",
			 kid_text, disk_err);
		return disk;
	}
	snprintf(err, err_size, "%s", warn);
	return 0;
}

int eg_worker_keys_remove(struct eg_worker *w, const char *kid, char *err, size_t err_size)
{
	int rc;

	EG_WK_ERRBUF(err, err_size);
	rc = eg_wk_write_begin(w, err, err_size);
	if (rc)
		return rc;
	rc = remove_locked(w, kid, err, err_size);
	eg_wk_write_end(w);
	return rc;
}

static int replace_locked(struct eg_worker *w, const uint8_t (*pks)[32], size_t n, uint64_t version,
			  char *err, size_t err_size)
{
	struct eg_keyset *next;
	uint64_t applied;
	int rc;

	rc = eg_keystore_version_read(w->state_dir, &applied, err, err_size);
	if (rc)
		return rc;
	if (version <= applied) {
		snprintf(err, err_size, "key set version %llu: not above the applied version %llu",
			 (unsigned long long)version, (unsigned long long)applied);
		return -ESTALE;
	}
	next = calloc(1, sizeof(*next));
	if (!next) {
		snprintf(err, err_size, "key set: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	/* The set in memory is exactly pks, checked before the disk is
	 * touched: a key the loader would refuse changes nothing. */
	eg_keyset_init(next);
	for (size_t i = 0; i < n; i++) {
		enum eg_key_err kerr = eg_keyset_add(next, pks[i], NULL);

		if (kerr != EG_KEY_OK) {
			snprintf(err, err_size, "key set version %llu: key %zu: %s",
				 (unsigned long long)version, i + 1, eg_key_err_name(kerr));
			sodium_memzero(next, sizeof(*next));
			free(next);
			return -EINVAL;
		}
	}
	pthread_rwlock_rdlock(&w->keys_lock);
	next->generation = w->keys->generation + 1;
	pthread_rwlock_unlock(&w->keys_lock);
	rc = eg_keystore_replace(w->state_dir, pks, n, err, err_size);
	/* Swapped in even when the directory could not be made to match:
	 * every withdrawn key leaves memory now (a key that could not be
	 * written is trusted until the next reload, which reads the disk). */
	swap_in(w, next, "", false);
	if (rc)
		return rc;
	return eg_keystore_version_write(w->state_dir, version, err, err_size);
}

int eg_worker_keys_replace(struct eg_worker *w, const uint8_t (*pks)[32], size_t n,
			   uint64_t version, char *err, size_t err_size)
{
	int rc;

	EG_WK_ERRBUF(err, err_size);
	if (!n || n > EG_KEYSET_MAX || (n && !pks)) {
		snprintf(err, err_size, "key set: %zu keys, not 1 to %d", n, EG_KEYSET_MAX);
		return -EINVAL;
	}
	rc = eg_wk_write_begin(w, err, err_size);
	if (rc)
		return rc;
	rc = replace_locked(w, pks, n, version, err, err_size);
	eg_wk_write_end(w);
	return rc;
}

int eg_worker_keys_version(struct eg_worker *w, uint64_t *version, char *err, size_t err_size)
{
	EG_WK_ERRBUF(err, err_size);
	return eg_keystore_version_read(w->state_dir, version, err, err_size);
}

int eg_worker_keys_list(struct eg_worker *w,
			int (*fn)(const char *kid, const uint8_t pk[32], void *ctx), void *ctx)
{
	char kid[EG_KID_TEXT_LEN];
	int rc = 0;

	pthread_rwlock_rdlock(&w->keys_lock);
	for (size_t i = 0; i < w->keys->n && !rc; i++) {
		eg_key_id_format(w->keys->keys[i].kid, kid);
		rc = fn(kid, w->keys->keys[i].pk, ctx);
	}
	pthread_rwlock_unlock(&w->keys_lock);
	return rc;
}

size_t eg_worker_keys_warnings(struct eg_worker *w, char *buf, size_t size)
{
	size_t n;

	pthread_rwlock_rdlock(&w->keys_lock);
	n = strlen(w->key_warnings);
	if (size)
		snprintf(buf, size, "%s", w->key_warnings);
	pthread_rwlock_unlock(&w->keys_lock);
	return n;
}

size_t eg_worker_keys_digest(struct eg_worker *w, char digest[EG_KEYS_DIGEST_TEXT_LEN])
{
	size_t n;

	pthread_rwlock_rdlock(&w->keys_lock);
	eg_keyset_digest_hex(w->keys, digest);
	n = w->keys->n;
	pthread_rwlock_unlock(&w->keys_lock);
	return n;
}

int eg_wk_keys_dir_digest(const char *state_dir, size_t *n, char digest[EG_KEYS_DIGEST_TEXT_LEN],
			  char *err, size_t err_size)
{
	struct eg_keyset *ks = calloc(1, sizeof(*ks));
	char warn[EG_ERR_MAX];
	int rc;

	if (!ks) {
		snprintf(err, err_size, "key set: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	eg_keyset_init(ks);
	rc = eg_keystore_load(state_dir, ks, warn, sizeof(warn), err, err_size);
	if (!rc) {
		eg_keyset_digest_hex(ks, digest);
		*n = ks->n;
	}
	free(ks);
	return rc;
}
