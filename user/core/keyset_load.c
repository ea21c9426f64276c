/* SPDX-License-Identifier: Apache-2.0 */
/* Loading verification keys from files: one key per "*.pub" file, in the
 * typed form of core/key_file.h. A directory loads all or nothing. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/key_file.h"
#include "core/keyset.h"

enum eg_key_err eg_pubkey_parse(const char *text, size_t len,
				uint8_t pk[crypto_sign_PUBLICKEYBYTES])
{
	uint8_t tmp[crypto_sign_PUBLICKEYBYTES];
	enum eg_key_err err;

	err =
	    eg_key_file_decode(text, len, EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC, tmp, sizeof(tmp));
	if (err == EG_KEY_OK)
		err = eg_key_check(tmp);
	/* pk is written only for a key that passed every rule. */
	if (err == EG_KEY_OK)
		memcpy(pk, tmp, sizeof(tmp));
	return err;
}

enum eg_key_err eg_pubkey_read(const char *path, uint8_t pk[crypto_sign_PUBLICKEYBYTES])
{
	char buf[EG_KEY_FILE_MAX];
	enum eg_key_err err;
	size_t len;

	err = eg_key_file_read(path, buf, sizeof(buf), &len, NULL);
	if (err == EG_KEY_OK)
		err = eg_pubkey_parse(buf, len, pk);
	/* A .seed given by mistake must not linger on the stack. */
	sodium_memzero(buf, sizeof(buf));
	return err;
}

static void set_bad(char *bad, size_t bad_size, const char *path)
{
	if (bad && bad_size)
		snprintf(bad, bad_size, "%s", path);
}

static enum eg_key_err load_file(struct eg_keyset *ks, const char *path)
{
	uint8_t pk[crypto_sign_PUBLICKEYBYTES];
	enum eg_key_err err;

	err = eg_pubkey_read(path, pk);
	if (err == EG_KEY_OK)
		err = eg_keyset_add(ks, pk, NULL);
	return err;
}

static bool is_pub_name(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && n > 4 && !strcmp(name + n - 4, ".pub");
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void eg_key_names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int eg_key_dir_names(DIR *d, char ***out, size_t *out_n)
{
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;

	while ((de = readdir(d))) {
		if (!is_pub_name(de->d_name))
			continue;
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			char **p = realloc(names, ncap * sizeof(*names));

			if (!p)
				goto nomem;
			names = p;
			cap = ncap;
		}
		names[n] = strdup(de->d_name);
		if (!names[n])
			goto nomem;
		n++;
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	*out = names;
	*out_n = n;
	return 0;
nomem:
	eg_key_names_free(names, n);
	return -ENOMEM;
}

static enum eg_key_err load_dir(struct eg_keyset *ks, const char *dir, char *bad, size_t bad_size)
{
	char **names = NULL, path[4096];
	enum eg_key_err err = EG_KEY_OK;
	size_t n = 0;
	DIR *d;

	d = opendir(dir);
	if (!d) {
		set_bad(bad, bad_size, dir);
		return errno == ENOENT ? EG_KEY_FILE_MISSING : EG_KEY_FILE_UNREADABLE;
	}
	if (eg_key_dir_names(d, &names, &n)) {
		set_bad(bad, bad_size, dir);
		closedir(d);
		return EG_KEY_NO_MEMORY;
	}
	for (size_t i = 0; i < n; i++) {
		/* eg_pubkey_read refuses what is not a regular file (a
		 * directory called *.pub) with its own reason. */
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= sizeof(path))
			err = EG_KEY_FILE_UNREADABLE;
		else
			err = load_file(ks, path);
		if (err != EG_KEY_OK) {
			set_bad(bad, bad_size, path);
			break;
		}
	}
	eg_key_names_free(names, n);
	closedir(d);
	return err;
}

enum eg_key_err eg_keyset_load_path(struct eg_keyset *ks, const char *path, char *bad,
				    size_t bad_size)
{
	struct eg_keyset *fresh;
	enum eg_key_err err;
	struct stat st;

	set_bad(bad, bad_size, "");
	if (stat(path, &st) != 0) {
		set_bad(bad, bad_size, path);
		return errno == ENOENT ? EG_KEY_FILE_MISSING : EG_KEY_FILE_UNREADABLE;
	}
	fresh = calloc(1, sizeof(*fresh));
	if (!fresh) {
		set_bad(bad, bad_size, path);
		return EG_KEY_NO_MEMORY;
	}
	eg_keyset_init(fresh);
	if (S_ISDIR(st.st_mode)) {
		err = load_dir(fresh, path, bad, bad_size);
	} else {
		err = load_file(fresh, path);
		if (err != EG_KEY_OK)
			set_bad(bad, bad_size, path);
	}
	if (err == EG_KEY_OK) {
		/* Replace whole; the generation only moves forward, so a cache
		 * filled under the old set never matches the new one. */
		uint64_t gen = ks->generation + 1;

		*ks = *fresh;
		ks->generation = gen;
	}
	free(fresh);
	return err;
}
