// SPDX-License-Identifier: Apache-2.0
/* The handle's key set: every change is written to <state_dir>/keys first
 * (user/loader/keystore.c), then the set is re-read whole and swapped in
 * under the write lock, and the token cache is flushed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/worker.h"

/* Loads the directory into a fresh set whose generation continues the
 * current one, then swaps: a cache entry of the old set can never match. */
static int reload_locked(struct eg_worker *w, char *err, size_t err_size)
{
	struct eg_keyset *next, *old;
	int rc;

	next = calloc(1, sizeof(*next));
	if (!next)
		return -ENOMEM;
	pthread_rwlock_rdlock(&w->keys_lock);
	*next = *w->keys;
	pthread_rwlock_unlock(&w->keys_lock);
	rc = eg_keystore_load(w->state_dir, next, err, err_size);
	if (rc) {
		free(next);
		return rc;
	}
	pthread_rwlock_wrlock(&w->keys_lock);
	old = w->keys;
	w->keys = next;
	pthread_mutex_lock(&w->cache_lock);
	eg_token_cache_flush(w->cache);
	pthread_mutex_unlock(&w->cache_lock);
	pthread_rwlock_unlock(&w->keys_lock);
	free(old);
	return 0;
}

int eg_worker_keys_reload(struct eg_worker *w, char *err, size_t err_size)
{

	EG_WK_ERRBUF(err, err_size);
	return reload_locked(w, err, err_size);
}

/* The shared tail of both adds: store (idempotent), then re-read. */
static int add_locked(struct eg_worker *w, int stored, char *err, size_t err_size)
{
	int rc = stored == -EEXIST ? 0 : stored; /* present is what was asked */

	if (!rc)
		rc = reload_locked(w, err, err_size);
	return rc ? rc : stored == -EEXIST ? 1 : 0;
}

int eg_worker_keys_add(struct eg_worker *w, const char *file, char kid[EG_KID_TEXT_LEN], char *err,
		       size_t err_size)
{
	int rc;

	EG_WK_ERRBUF(err, err_size);
	rc = eg_wk_write_begin(w, err, err_size);
	if (rc)
		return rc;
	rc = add_locked(w, eg_keystore_add(w->state_dir, file, kid, err, err_size), err, err_size);
	eg_wk_write_end(w);
	return rc;
}

int eg_worker_keys_add_text(struct eg_worker *w, const char *text, size_t len,
			    const char *expect_kid, char kid[EG_KID_TEXT_LEN], char *err,
			    size_t err_size)
{
	uint8_t pk[crypto_sign_PUBLICKEYBYTES], id[EG_KEY_ID_LEN];
	char found[EG_KEY_ID_TEXT_LEN];
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
	rc = add_locked(w, eg_keystore_add_text(w->state_dir, text, len, kid, err, err_size), err,
			err_size);
	eg_wk_write_end(w);
	return rc;
}

int eg_worker_keys_remove(struct eg_worker *w, const char *kid, char *err, size_t err_size)
{
	int rc;

	EG_WK_ERRBUF(err, err_size);
	rc = eg_wk_write_begin(w, err, err_size);
	if (rc)
		return rc;
	rc = eg_keystore_remove(w->state_dir, kid, err, err_size);
	if (!rc)
		rc = reload_locked(w, err, err_size);
	eg_wk_write_end(w);
	return rc;
}

int eg_worker_keys_list(struct eg_worker *w,
			int (*fn)(const char *kid, const uint8_t pk[32], void *ctx), void *ctx)
{
	char kid[EG_KEY_ID_TEXT_LEN];
	int rc = 0;

	pthread_rwlock_rdlock(&w->keys_lock);
	for (size_t i = 0; i < w->keys->n && !rc; i++) {
		eg_key_id_format(w->keys->keys[i].kid, kid);
		rc = fn(kid, w->keys->keys[i].pk, ctx);
	}
	pthread_rwlock_unlock(&w->keys_lock);
	return rc;
}
