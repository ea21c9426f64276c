/* SPDX-License-Identifier: Apache-2.0 */
/* Verification key sets: key id -> Ed25519 public key, rotatable at run time.
 * Workers hold only public keys; nothing here can sign. */
#ifndef EXECGATE_CORE_KEYSET_H
#define EXECGATE_CORE_KEYSET_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sodium.h>
#include "core/capability.h"

#define EG_KEYSET_MAX 64

struct eg_key {
	uint8_t kid[EG_KEY_ID_LEN];
	uint8_t pk[crypto_sign_PUBLICKEYBYTES];
};

struct eg_keyset {
	struct eg_key keys[EG_KEYSET_MAX];
	size_t n;
	/* Bumped on every add/remove so that caches of verified tokens can
	 * tell that what they verified against may be gone. */
	uint64_t generation;
};

/* Stable: the names (eg_key_err_name) appear in CLI and API output. Every
 * way a key or key file can be refused has its own value, so that an error
 * names the real cause. */
enum eg_key_err {
	EG_KEY_OK = 0,
	EG_KEY_ZERO,	    /* all-zero encoding */
	EG_KEY_SMALL_ORDER, /* small-order point or a point with a small-order component */
	EG_KEY_INVALID,	    /* fails crypto_core_ed25519_is_valid_point */
	EG_KEY_DUPLICATE,   /* same key id already present */
	EG_KEY_FULL,	    /* EG_KEYSET_MAX reached */
	EG_KEY_NOT_FOUND,
	/* Key files (core/key_file.h has the format). */
	EG_KEY_FILE_MISSING,	  /* no such file or directory */
	EG_KEY_FILE_UNREADABLE,	  /* open/read/stat failed (not ENOENT) */
	EG_KEY_FILE_NOT_REGULAR,  /* a directory, FIFO, device... */
	EG_KEY_FILE_EMPTY,	  /* no bytes, or only the newline */
	EG_KEY_FILE_CRLF,	  /* a CR anywhere: key files end lines with LF only */
	EG_KEY_FILE_TRAILING,	  /* anything after the key line */
	EG_KEY_FILE_UNTYPED,	  /* the old bare-hex form, which cannot tell public from secret */
	EG_KEY_FILE_UNKNOWN_TYPE, /* does not start with a known type name */
	EG_KEY_FILE_WRONG_LENGTH, /* the key is not 2 * bytes hex digits */
	EG_KEY_FILE_NOT_HEX,	  /* the key has a byte that is not a lowercase hex digit */
	EG_KEY_FILE_SECRET,	  /* a secret key where a public one was asked for */
	EG_KEY_FILE_PUBLIC,	  /* a public key where a secret one was asked for */
	EG_KEY_NO_MEMORY,
};

const char *eg_key_err_name(enum eg_key_err err);
/* One human sentence for err, for error messages after the name. */
const char *eg_key_err_detail(enum eg_key_err err);

/* Key id = first EG_KEY_ID_LEN bytes of BLAKE2b-256(public key). */
void eg_key_id(const uint8_t pk[crypto_sign_PUBLICKEYBYTES], uint8_t kid[EG_KEY_ID_LEN]);
/* The load-time validity rules, without adding anything. */
enum eg_key_err eg_key_check(const uint8_t pk[crypto_sign_PUBLICKEYBYTES]);

void eg_keyset_init(struct eg_keyset *ks);
enum eg_key_err eg_keyset_add(struct eg_keyset *ks, const uint8_t pk[crypto_sign_PUBLICKEYBYTES],
			      uint8_t kid_out[EG_KEY_ID_LEN]);
enum eg_key_err eg_keyset_remove(struct eg_keyset *ks, const uint8_t kid[EG_KEY_ID_LEN]);
const struct eg_key *eg_keyset_find(const struct eg_keyset *ks, const uint8_t kid[EG_KEY_ID_LEN]);
/* Whether a and b hold the same keys, in any order (generations aside). */
bool eg_keyset_same_keys(const struct eg_keyset *a, const struct eg_keyset *b);

/* The contents of a public key file, in the typed form of core/key_file.h
 * ("execgate-ed25519-public-v1 <64 hex>\n"), decoded and checked with
 * eg_key_check. A secret key is refused (EG_KEY_FILE_SECRET) and never
 * decoded; text is the caller's, so the caller wipes it. */
enum eg_key_err eg_pubkey_parse(const char *text, size_t len,
				uint8_t pk[crypto_sign_PUBLICKEYBYTES]);
/* eg_pubkey_parse on the contents of path (a regular file). Its read
 * buffer is wiped: the file may hold a secret. */
enum eg_key_err eg_pubkey_read(const char *path, uint8_t pk[crypto_sign_PUBLICKEYBYTES]);
/* Loads every "*.pub" in dir (names starting with '.' are skipped), or the
 * one file if path is a file, and replaces ks with exactly those keys,
 * bumping its generation. On the first bad file (sorted by name) ks is left
 * untouched, bad names the file, and its error is returned: a key set is
 * replaced whole or not at all. A directory without keys loads an empty
 * set (which verifies nothing); whether that is acceptable is the caller's
 * call. Not thread-safe: callers that share ks serialise. */
enum eg_key_err eg_keyset_load_path(struct eg_keyset *ks, const char *path, char *bad,
				    size_t bad_size);

/* The names of the key files in the open directory dir: every "*.pub" not
 * starting with '.' (temporary files, a secret volume's "..data"), sorted
 * so that which file a message names does not depend on directory order.
 * 0 with *names (n of them; eg_key_names_free) or -ENOMEM. */
int eg_key_dir_names(DIR *dir, char ***names, size_t *n);
void eg_key_names_free(char **names, size_t n);

#endif
