// SPDX-License-Identifier: Apache-2.0
/* The worker's key store (user/loader/records/keystore.c): keys are stored in the
 * typed public form, 0644, by temporary file and rename; a secret or an
 * untyped file never reaches <state-dir>/keys. Files only, no BPF; here
 * because the loader is linked into the kernel tests, not the unit tests. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/ids.h"
#include "core/key_file.h"
#include "core/keyset.h"
#include "loader/records/runtime.h"

static char dir[64], state[128], keys[160];

static void init(void)
{
	snprintf(dir, sizeof(dir), "/tmp/execgate-keystore.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(state, sizeof(state), "%s/state", dir);
	snprintf(keys, sizeof(keys), "%s/keys", state);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void fini(void)
{
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

TestSuite(keystore, .init = init, .fini = fini, .timeout = 30);

static void key_lines(uint8_t n, char pub[EG_KEY_FILE_LINE_MAX], char sec[EG_KEY_FILE_LINE_MAX],
		      char kid[EG_KID_TEXT_LEN])
{
	uint8_t seed[32], pk[32], sk[64], id[EG_KEY_ID_LEN];

	memset(seed, n, sizeof(seed));
	crypto_sign_seed_keypair(pk, sk, seed);
	cr_assert_eq(eg_key_file_encode(EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC, pk, 32, pub,
					EG_KEY_FILE_LINE_MAX),
		     92);
	cr_assert_eq(eg_key_file_encode(EG_KEY_ALG_ED25519, EG_KEY_KIND_SECRET, seed, 32, sec,
					EG_KEY_FILE_LINE_MAX),
		     92);
	eg_key_id(pk, id);
	eg_key_id_format(id, kid);
}

/* The names in <state-dir>/keys, space-separated, sorted by readdir. */
static void listing(char *out, size_t size)
{
	struct dirent *de;
	DIR *d = opendir(keys);

	out[0] = '\0';
	if (!d)
		return;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			snprintf(out + strlen(out), size - strlen(out), "%s ", de->d_name);
	closedir(d);
}

/* guarantees: none */
Test(keystore, add_text_stores_the_typed_line_0644)
{
	char pub[EG_KEY_FILE_LINE_MAX], sec[EG_KEY_FILE_LINE_MAX], kid[EG_KID_TEXT_LEN];
	char got[EG_KID_TEXT_LEN], err[512], path[300], content[200], names[512], want[64];
	struct eg_keyset ks = {0};
	struct stat st;
	FILE *f;
	size_t n;

	key_lines(1, pub, sec, kid);
	cr_assert_eq(eg_keystore_add_text(state, pub, 91, got, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(got, kid);
	snprintf(path, sizeof(path), "%s/%s.pub", keys, kid);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0644);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	n = fread(content, 1, sizeof(content), f);
	fclose(f);
	/* Stored canonical, with its LF, though it was given without. */
	cr_assert_eq(n, 92);
	cr_assert_eq(memcmp(content, pub, 92), 0);
	listing(names, sizeof(names));
	snprintf(want, sizeof(want), "%s.pub ", kid);
	cr_assert_str_eq(names, want, "no temporary file is left");

	/* Present: -EEXIST, and the kid is still reported. */
	memset(got, 0, sizeof(got));
	cr_assert_eq(eg_keystore_add_text(state, pub, 92, got, err, sizeof(err)), -EEXIST);
	cr_assert_str_eq(got, kid);
	cr_assert_not_null(strstr(err, "already present"), "%s", err);

	cr_assert_eq(eg_keystore_load(state, &ks, NULL, 0, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(ks.n, 1);
}

/* guarantees: none */
Test(keystore, add_text_refuses_secret_untyped_and_malformed)
{
	char pub[EG_KEY_FILE_LINE_MAX], sec[EG_KEY_FILE_LINE_MAX], kid[EG_KID_TEXT_LEN];
	char got[EG_KID_TEXT_LEN], err[512], names[512], crlf[120];

	key_lines(2, pub, sec, kid);
	cr_assert_eq(eg_keystore_add_text(state, sec, 92, got, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "key: key-file-holds-secret: holds a secret key: refusing it; give "
			      "the .pub file");
	cr_assert_str_eq(got, "");
	/* The old untyped form of the public key. */
	cr_assert_eq(eg_keystore_add_text(state, pub + 27, 65, got, err, sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "key: key-file-untyped: "), "%s", err);
	snprintf(crlf, sizeof(crlf), "%.91s\r\n", pub);
	cr_assert_eq(eg_keystore_add_text(state, crlf, strlen(crlf), got, err, sizeof(err)),
		     -EINVAL);
	cr_assert_not_null(strstr(err, "key: key-file-crlf: "), "%s", err);
	cr_assert_eq(eg_keystore_add_text(state, pub, 80, got, err, sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "key: key-wrong-length: "), "%s", err);
	listing(names, sizeof(names));
	cr_assert_str_eq(names, "", "nothing stored");
}

/* guarantees: none */
Test(keystore, add_file_names_the_file_and_the_reason)
{
	char pub[EG_KEY_FILE_LINE_MAX], sec[EG_KEY_FILE_LINE_MAX], kid[EG_KID_TEXT_LEN];
	char got[EG_KID_TEXT_LEN], err[512], path[300], want[600];
	FILE *f;

	key_lines(3, pub, sec, kid);
	snprintf(path, sizeof(path), "%s/missing.pub", dir);
	cr_assert_eq(eg_keystore_add(state, path, got, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "key file %s: key-file-missing: no such file", path);
	cr_assert_str_eq(err, want);

	snprintf(path, sizeof(path), "%s/%s.seed", dir, kid);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(sec, f);
	fclose(f);
	cr_assert_eq(eg_keystore_add(state, path, got, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want),
		 "key file %s: key-file-holds-secret: holds a secret key: refusing it; give the "
		 ".pub file",
		 path);
	cr_assert_str_eq(err, want);

	snprintf(path, sizeof(path), "%s/%s.pub", dir, kid);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(pub, f);
	fclose(f);
	cr_assert_eq(eg_keystore_add(state, path, got, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(got, kid);
	memset(got, 0, sizeof(got));
	cr_assert_eq(eg_keystore_add(state, path, got, err, sizeof(err)), -EEXIST);
	cr_assert_str_eq(got, kid);
}

static void pk_of(uint8_t n, uint8_t pk[32])
{
	uint8_t seed[32], sk[64];

	memset(seed, n, sizeof(seed));
	crypto_sign_seed_keypair(pk, sk, seed);
}

/* guarantees: none */
Test(keystore, replace_leaves_exactly_the_set_and_persists_the_version)
{
	char pub[EG_KEY_FILE_LINE_MAX], sec[EG_KEY_FILE_LINE_MAX], k1[EG_KID_TEXT_LEN];
	char k2[EG_KID_TEXT_LEN], k3[EG_KID_TEXT_LEN], got[EG_KID_TEXT_LEN], err[512];
	char names[512], want[128], path[300];
	uint8_t set[2][32];
	uint64_t v = 99;
	FILE *f;

	key_lines(1, pub, sec, k1);
	cr_assert_eq(eg_keystore_add_text(state, pub, 92, got, err, sizeof(err)), 0, "%s", err);
	/* a stray file under a name that is not its key's id goes too */
	snprintf(path, sizeof(path), "%s/stray.pub", keys);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(pub, f);
	fclose(f);
	key_lines(2, pub, sec, k2);
	key_lines(3, pub, sec, k3);
	pk_of(2, set[0]);
	pk_of(3, set[1]);
	cr_assert_eq(eg_keystore_replace(state, (const uint8_t(*)[32])set, 2, err, sizeof(err)), 0,
		     "%s", err);
	listing(names, sizeof(names));
	cr_assert_not_null(strstr(names, k2), "%s", names);
	cr_assert_not_null(strstr(names, k3), "%s", names);
	cr_assert_null(strstr(names, k1), "the withdrawn key stays: %s", names);
	cr_assert_null(strstr(names, "stray"), "a stray file stays: %s", names);
	snprintf(want, sizeof(want), "%s.pub %s.pub ", k2, k3);
	cr_assert_eq(strlen(names), strlen(want), "exactly two files: %s", names);

	cr_assert_eq(eg_keystore_version_read(state, &v, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(v, 0, "no version before the first write");
	cr_assert_eq(eg_keystore_version_write(state, 7, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(eg_keystore_version_read(state, &v, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(v, 7);
	snprintf(path, sizeof(path), "%s/keyset.version", state);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("7x\n", f);
	fclose(f);
	cr_assert_eq(eg_keystore_version_read(state, &v, err, sizeof(err)), -EINVAL);
}
