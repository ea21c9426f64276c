/* SPDX-License-Identifier: Apache-2.0 */
/* Loading verification keys from files: one key per "*.pub" file, one line
 * of 64 hex digits. A directory loads all or nothing. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/hex_line.h"
#include "core/keyset.h"

enum eg_key_err eg_pubkey_read(const char *path, uint8_t pk[crypto_sign_PUBLICKEYBYTES])
{
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return EG_KEY_BAD_FILE;
	rc = eg_hex_line_read(fd, pk, crypto_sign_PUBLICKEYBYTES);
	close(fd);
	return rc ? EG_KEY_BAD_FILE : EG_KEY_OK;
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

	/* Hidden entries are skipped: Kubernetes secret volumes keep their
	 * real files under "..data" and link them into place. */
	return name[0] != '.' && n > 4 && !strcmp(name + n - 4, ".pub");
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static enum eg_key_err load_dir(struct eg_keyset *ks, const char *dir, char *bad, size_t bad_size)
{
	char **names = NULL, path[4096];
	size_t n = 0, cap = 0;
	enum eg_key_err err = EG_KEY_OK;
	struct dirent *de;
	DIR *d;

	d = opendir(dir);
	if (!d) {
		set_bad(bad, bad_size, dir);
		return EG_KEY_BAD_FILE;
	}
	while ((de = readdir(d))) {
		if (!is_pub_name(de->d_name))
			continue;
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			char **p = realloc(names, ncap * sizeof(*names));

			if (!p) {
				err = EG_KEY_BAD_FILE;
				set_bad(bad, bad_size, dir);
				goto cleanup;
			}
			names = p;
			cap = ncap;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			err = EG_KEY_BAD_FILE;
			set_bad(bad, bad_size, dir);
			goto cleanup;
		}
		n++;
	}
	/* Sorted, so that which file is named on failure does not depend on
	 * directory order. */
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= sizeof(path) ||
		    stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
			err = EG_KEY_BAD_FILE;
		} else {
			err = load_file(ks, path);
		}
		if (err != EG_KEY_OK) {
			set_bad(bad, bad_size, path);
			goto cleanup;
		}
	}

cleanup:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
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
		return EG_KEY_BAD_FILE;
	}
	fresh = calloc(1, sizeof(*fresh));
	if (!fresh) {
		set_bad(bad, bad_size, path);
		return EG_KEY_BAD_FILE;
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
