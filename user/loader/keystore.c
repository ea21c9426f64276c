// SPDX-License-Identifier: Apache-2.0
/* The worker's verification key set on disk: <state-dir>/keys/<kid>.pub,
 * each in the typed form of core/key_file.h (what execgate-issue keygen
 * writes). Whatever form a key came in, it is stored re-encoded from its
 * decoded bytes: the store only ever holds the canonical public line. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sodium.h>
#include "core/fd_io.h"
#include "core/key_file.h"
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

/* pk has passed eg_pubkey_parse. */
static int store_key(const char *state_dir, const uint8_t pk[crypto_sign_PUBLICKEYBYTES],
		     char kid_out[EG_KEY_ID_TEXT_LEN], char *err, size_t err_size)
{
	uint8_t kid[EG_KEY_ID_LEN];
	char dir[4096], dst[4200], tmp[4300], line[EG_KEY_FILE_LINE_MAX];
	int fd, dfd, rc, n;

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
	n = eg_key_file_encode(EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC, pk,
			       crypto_sign_PUBLICKEYBYTES, line, sizeof(line));
	if (n < 0) {
		snprintf(err, err_size, "key %s: encoding: %s", kid_out, strerror(-n));
		return n;
	}
	/* A dot name is skipped by eg_keyset_load_path: a half-written key is
	 * never loaded. mkostemp gives each writer its own temporary file. */
	snprintf(tmp, sizeof(tmp), "%s/.%s.pub.XXXXXX", dir, kid_out);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, err_size, "key %s: temporary file in %s: %s", kid_out, dir,
			 strerror(errno));
		return rc;
	}
	rc = fchmod(fd, 0644) ? -errno : 0;
	if (!rc)
		rc = eg_write_all(fd, line, (size_t)n);
	if (!rc && fsync(fd))
		rc = -errno;
	if (close(fd) && !rc)
		rc = -errno;
	if (rc) {
		unlink(tmp);
		snprintf(err, err_size, "key %s: writing %s: %s", kid_out, tmp, strerror(-rc));
		return rc;
	}
	if (rename(tmp, dst)) {
		rc = -errno;
		unlink(tmp);
		snprintf(err, err_size, "key %s: %s: %s", kid_out, dst, strerror(-rc));
		return rc;
	}
	/* The rename is durable only once the directory is synced. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

int eg_keystore_add_text(const char *state_dir, const char *text, size_t len,
			 char kid_out[EG_KEY_ID_TEXT_LEN], char *err, size_t err_size)
{
	uint8_t pk[crypto_sign_PUBLICKEYBYTES];
	enum eg_key_err kerr;

	kid_out[0] = '\0';
	kerr = eg_pubkey_parse(text, len, pk);
	if (kerr != EG_KEY_OK) {
		snprintf(err, err_size, "key: %s: %s", eg_key_err_name(kerr),
			 eg_key_err_detail(kerr));
		return -EINVAL;
	}
	return store_key(state_dir, pk, kid_out, err, err_size);
}

int eg_keystore_add(const char *state_dir, const char *file, char kid_out[EG_KEY_ID_TEXT_LEN],
		    char *err, size_t err_size)
{
	uint8_t pk[crypto_sign_PUBLICKEYBYTES];
	enum eg_key_err kerr;

	kid_out[0] = '\0';
	kerr = eg_pubkey_read(file, pk);
	if (kerr != EG_KEY_OK) {
		snprintf(err, err_size, "key file %s: %s: %s", file, eg_key_err_name(kerr),
			 eg_key_err_detail(kerr));
		return -EINVAL;
	}
	return store_key(state_dir, pk, kid_out, err, err_size);
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
