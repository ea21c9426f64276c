// SPDX-License-Identifier: Apache-2.0
/* The worker's verification key set on disk: <state-dir>/keys/<kid>.pub,
 * each in the typed form of core/key_file.h (what execgate-issue keygen
 * writes). Whatever form a key came in, it is stored re-encoded from its
 * decoded bytes: the store only ever holds the canonical public line. */
#include <dirent.h>
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
#include "loader/records/runtime.h"
#include "loader/records/state_dir.h"

static int keys_dir(const char *state_dir, char *out, size_t size, bool create)
{
	if ((size_t)snprintf(out, size, "%s/keys", state_dir) >= size)
		return -ENAMETOOLONG;
	if (create) {
		if (mkdir(state_dir, EG_STATE_DIR_MODE) && errno != EEXIST)
			return -errno;
		if (mkdir(out, EG_STATE_DIR_MODE) && errno != EEXIST)
			return -errno;
	}
	return 0;
}

/* pk has passed eg_pubkey_parse. */
static int store_key(const char *state_dir, const uint8_t pk[crypto_sign_PUBLICKEYBYTES],
		     char kid_out[EG_KID_TEXT_LEN], char *err, size_t err_size)
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
			 char kid_out[EG_KID_TEXT_LEN], char *err, size_t err_size)
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

int eg_keystore_add(const char *state_dir, const char *file, char kid_out[EG_KID_TEXT_LEN],
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

/* name with every byte outside printable ASCII as \xNN: a file name is
 * quoted in log lines and JSON answers. */
static void name_text(const char *name, char *out, size_t size)
{
	size_t o = 0;

	for (; *name && o + 5 < size; name++) {
		unsigned char c = (unsigned char)*name;

		if (c > 0x20 && c < 0x7f && c != '\\')
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
	}
	out[o] = '\0';
}

static void warn_add(char *warn, size_t warn_size, const char *dir, const char *name,
		     enum eg_key_err kerr)
{
	char text[1024];
	size_t used = strlen(warn);

	name_text(name, text, sizeof(text));
	if (used + 1 < warn_size)
		snprintf(warn + used, warn_size - used, "%skey file %s/%s: %s: %s",
			 used ? "\n" : "", dir, text, eg_key_err_name(kerr),
			 eg_key_err_detail(kerr));
}

int eg_keystore_load(const char *state_dir, struct eg_keyset *ks, char *warn, size_t warn_size,
		     char *err, size_t err_size)
{
	char dir[4096], path[8200], **names = NULL;
	struct eg_keyset *fresh;
	size_t n = 0;
	uint64_t gen = ks->generation + 1;
	DIR *d;
	int rc = 0;

	if (warn && warn_size)
		warn[0] = '\0';
	rc = keys_dir(state_dir, dir, sizeof(dir), false);
	if (rc)
		return rc;
	d = opendir(dir);
	if (!d && errno == ENOENT) {
		eg_keyset_init(ks);
		ks->generation = gen;
		return 0;
	}
	if (!d) {
		rc = -errno;
		snprintf(err, err_size, "key set %s: %s", dir, strerror(-rc));
		return rc;
	}
	fresh = calloc(1, sizeof(*fresh));
	if (!fresh) {
		closedir(d);
		snprintf(err, err_size, "key set %s: %s", dir, strerror(ENOMEM));
		return -ENOMEM;
	}
	eg_keyset_init(fresh);
	if (eg_key_dir_names(d, &names, &n)) {
		rc = -ENOMEM;
		snprintf(err, err_size, "key set %s: %s", dir, strerror(ENOMEM));
		goto out;
	}
	/* A file that does not load is skipped and named in warn, never a
	 * reason to keep the previous set: a withdrawn key must not stay
	 * trusted because a neighbour is malformed, and a key whose own file
	 * is malformed is not trusted. */
	for (size_t i = 0; i < n; i++) {
		uint8_t pk[crypto_sign_PUBLICKEYBYTES];
		enum eg_key_err kerr = EG_KEY_FILE_UNREADABLE;

		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, names[i]) < sizeof(path))
			kerr = eg_pubkey_read(path, pk);
		if (kerr == EG_KEY_OK)
			kerr = eg_keyset_add(fresh, pk, NULL);
		if (kerr != EG_KEY_OK && warn && warn_size)
			warn_add(warn, warn_size, dir, names[i], kerr);
	}
	*ks = *fresh;
	ks->generation = gen;
out:
	eg_key_names_free(names, n);
	closedir(d);
	sodium_memzero(fresh, sizeof(*fresh));
	free(fresh);
	return rc;
}

/* Is the file name/path one of pks, stored under its canonical name? */
static bool wanted(const char *dir, const char *name,
		   const uint8_t (*pks)[crypto_sign_PUBLICKEYBYTES], size_t n)
{
	uint8_t pk[crypto_sign_PUBLICKEYBYTES], kid[EG_KEY_ID_LEN];
	char path[8200], kid_text[EG_KID_TEXT_LEN + 8];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (eg_pubkey_read(path, pk) != EG_KEY_OK)
		return false;
	eg_key_id(pk, kid);
	eg_key_id_format(kid, kid_text);
	strcat(kid_text, ".pub");
	if (strcmp(name, kid_text))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!sodium_memcmp(pks[i], pk, sizeof(pk)))
			return true;
	return false;
}

int eg_keystore_replace(const char *state_dir, const uint8_t (*pks)[crypto_sign_PUBLICKEYBYTES],
			size_t n, char *err, size_t err_size)
{
	char dir[4096], path[8200], kid[EG_KID_TEXT_LEN], **names = NULL;
	size_t nn = 0;
	DIR *d;
	int rc;

	rc = keys_dir(state_dir, dir, sizeof(dir), true);
	if (rc) {
		snprintf(err, err_size, "state dir %s: %s", state_dir, strerror(-rc));
		return rc;
	}
	d = opendir(dir);
	if (!d) {
		rc = -errno;
		snprintf(err, err_size, "key set %s: %s", dir, strerror(-rc));
		return rc;
	}
	if (eg_key_dir_names(d, &names, &nn)) {
		closedir(d);
		snprintf(err, err_size, "key set %s: %s", dir, strerror(ENOMEM));
		return -ENOMEM;
	}
	closedir(d);
	for (size_t i = 0; i < nn && !rc; i++) {
		if (wanted(dir, names[i], pks, n))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (unlink(path) && errno != ENOENT) {
			rc = -errno;
			snprintf(err, err_size, "key file %s: %s", path, strerror(-rc));
		}
	}
	eg_key_names_free(names, nn);
	for (size_t i = 0; i < n && !rc; i++) {
		rc = store_key(state_dir, pks[i], kid, err, err_size);
		if (rc == -EEXIST)
			rc = 0;
	}
	return rc;
}

static void version_path(const char *state_dir, char *out, size_t size)
{
	snprintf(out, size, "%s/keyset.version", state_dir);
}

int eg_keystore_version_read(const char *state_dir, uint64_t *version, char *err, size_t err_size)
{
	char path[4200], buf[32] = "", *end;
	unsigned long long v;
	FILE *f;
	size_t n;

	*version = 0;
	version_path(state_dir, path, sizeof(path));
	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		return -errno;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || end == buf || strcmp(end, "\n") || buf[0] == '-') {
		snprintf(err, err_size, "%s: not a key-set version", path);
		return -EINVAL;
	}
	*version = v;
	return 0;
}

int eg_keystore_version_write(const char *state_dir, uint64_t version, char *err, size_t err_size)
{
	char path[4200], buf[32];
	int n, rc;

	version_path(state_dir, path, sizeof(path));
	n = snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)version);
	rc = eg_write_file_atomic(path, buf, (size_t)n, 0644);
	if (rc)
		snprintf(err, err_size, "%s: %s", path, strerror(-rc));
	return rc;
}
