// SPDX-License-Identifier: Apache-2.0
/* The worker's verification key set on disk: <state-dir>/keys/<kid>.pub,
 * one line of 64 hex digits each (the format execgate-issue keygen writes). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sodium.h>
#include "loader/runtime.h"

static int keys_dir(const char *state_dir, char *out, size_t size, bool create)
{
	if ((size_t)snprintf(out, size, "%s/keys", state_dir) >= size)
		return -ENAMETOOLONG;
	if (create) {
		if (mkdir(state_dir, 0700) && errno != EEXIST)
			return -errno;
		if (mkdir(out, 0700) && errno != EEXIST)
			return -errno;
	}
	return 0;
}

int eg_keystore_add(const char *state_dir, const char *file, char kid_out[EG_KEY_ID_TEXT_LEN],
		    char *err, size_t err_size)
{
	uint8_t pk[crypto_sign_PUBLICKEYBYTES], kid[EG_KEY_ID_LEN];
	char dir[4096], dst[4200], tmp[4300], hex[2 * crypto_sign_PUBLICKEYBYTES + 1];
	enum eg_key_err kerr;
	int fd, rc;

	kerr = eg_pubkey_read(file, pk);
	if (kerr == EG_KEY_OK)
		kerr = eg_key_check(pk);
	if (kerr != EG_KEY_OK) {
		snprintf(err, err_size, "key file %s: %s", file, eg_key_err_name(kerr));
		return -EINVAL;
	}
	eg_key_id(pk, kid);
	eg_key_id_format(kid, kid_out);
	rc = keys_dir(state_dir, dir, sizeof(dir), true);
	if (rc) {
		snprintf(err, err_size, "state dir %s: %s", state_dir, strerror(-rc));
		return rc;
	}
	snprintf(dst, sizeof(dst), "%s/%s.pub", dir, kid_out);
	if (access(dst, F_OK) == 0) {
		snprintf(err, err_size, "key %s: already present (%s)", kid_out, dst);
		return -EEXIST;
	}
	/* A dot name is skipped by eg_keyset_load_path: a half-written key is
	 * never loaded. */
	snprintf(tmp, sizeof(tmp), "%s/.%s.pub.tmp", dir, kid_out);
	sodium_bin2hex(hex, sizeof(hex), pk, sizeof(pk));
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, err_size, "key %s: %s: %s", kid_out, tmp, strerror(errno));
		return rc;
	}
	if (dprintf(fd, "%s\n", hex) < 0 || fsync(fd)) {
		rc = -errno;
		close(fd);
		unlink(tmp);
		snprintf(err, err_size, "key %s: writing %s: %s", kid_out, tmp, strerror(-rc));
		return rc;
	}
	close(fd);
	if (rename(tmp, dst)) {
		rc = -errno;
		unlink(tmp);
		snprintf(err, err_size, "key %s: %s: %s", kid_out, dst, strerror(-rc));
		return rc;
	}
	return 0;
}

int eg_keystore_remove(const char *state_dir, const char *kid_text, char *err, size_t err_size)
{
	uint8_t kid[EG_KEY_ID_LEN];
	char dir[4096], path[4200];
	int rc;

	if (eg_key_id_parse(kid_text, kid)) {
		snprintf(err, err_size, "key %s: not a key id (16 hex digits)", kid_text);
		return -EINVAL;
	}
	rc = keys_dir(state_dir, dir, sizeof(dir), false);
	if (rc)
		return rc;
	snprintf(path, sizeof(path), "%s/%s.pub", dir, kid_text);
	if (unlink(path)) {
		rc = -errno;
		snprintf(err, err_size, "key %s: %s", kid_text,
			 rc == -ENOENT ? "not in the key set" : strerror(-rc));
		return rc;
	}
	return 0;
}

int eg_keystore_load(const char *state_dir, struct eg_keyset *ks, char *err, size_t err_size)
{
	char dir[4096], bad[4096];
	enum eg_key_err kerr;
	struct stat st;
	int rc;

	eg_keyset_init(ks);
	rc = keys_dir(state_dir, dir, sizeof(dir), false);
	if (rc)
		return rc;
	if (stat(dir, &st) && errno == ENOENT)
		return 0;
	bad[0] = '\0';
	kerr = eg_keyset_load_path(ks, dir, bad, sizeof(bad));
	if (kerr != EG_KEY_OK) {
		snprintf(err, err_size, "key set %s: %s: %s", dir, bad[0] ? bad : "?",
			 eg_key_err_name(kerr));
		return -EINVAL;
	}
	return 0;
}
