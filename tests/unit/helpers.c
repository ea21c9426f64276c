/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"

const uint8_t SANDBOX_S[EG_ID_BYTES] = {0x5f, 0x0c, 0x1a, 0x2b, 0x3c, 0x4d, 0x4e, 0x5f,
					0x80, 0x91, 0xa2, 0xb3, 0xc4, 0xd5, 0xe6, 0xf7};
const uint8_t SANDBOX_T[EG_ID_BYTES] = {0x7a, 0x11, 0x1a, 0x2b, 0x3c, 0x4d, 0x4e, 0x5f,
					0x80, 0x91, 0xa2, 0xb3, 0xc4, 0xd5, 0xe6, 0xf7};
const uint8_t WORKER_A[EG_ID_BYTES] = {0xaa, 0xaa, 0xaa, 0xaa, 0x00, 0x00, 0x40, 0x00,
				       0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a};
const uint8_t WORKER_B[EG_ID_BYTES] = {0xbb, 0xbb, 0xbb, 0xbb, 0x00, 0x00, 0x40, 0x00,
				       0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0b};
const uint8_t POD_P[EG_ID_BYTES] = {0x90, 0xd0, 0x00, 0x01, 0x00, 0x00, 0x40, 0x00,
				    0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01};
const uint8_t POD_Q[EG_ID_BYTES] = {0x90, 0xd0, 0x00, 0x02, 0x00, 0x00, 0x40, 0x00,
				    0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02};

__attribute__((constructor)) static void init_sodium(void)
{
	if (sodium_init() < 0)
		abort();
}

void test_key(struct test_key *k, uint8_t n)
{
	uint8_t seed[crypto_sign_SEEDBYTES];

	memset(seed, 0x40 + n, sizeof(seed));
	seed[0] = n;
	crypto_sign_seed_keypair(k->pk, k->sk, seed);
	eg_key_id(k->pk, k->kid);
}

void test_cap(struct eg_capability *cap, const struct test_key *k)
{
	memset(cap, 0, sizeof(*cap));
	cap->version = EG_CAP_VERSION;
	cap->id.substrate = EG_SUBSTRATE_FC_HOST;
	memset(cap->token_id, 0x11, EG_ID_BYTES);
	memcpy(cap->id.sandbox, SANDBOX_S, EG_ID_BYTES);
	memcpy(cap->id.worker, WORKER_A, EG_ID_BYTES);
	cap->id.generation = 7;
	cap->id.activation = 1;
	cap->scope = EG_SCOPE_FILE_READ | EG_SCOPE_EXEC;
	cap->issued_at = T0;
	cap->not_before = T0;
	cap->expiry = T0 + 120;
	if (k)
		memcpy(cap->key_id, k->kid, EG_KEY_ID_LEN);
}

void test_sign(struct eg_capability *cap, const struct test_key *k, uint8_t raw[EG_CAP_LEN])
{
	uint8_t msg[EG_CAP_SIGNED_LEN];

	memcpy(cap->key_id, k->kid, EG_KEY_ID_LEN);
	eg_cap_encode_body(cap, raw);
	eg_cap_signed_message(raw, msg);
	crypto_sign_detached(cap->signature, NULL, msg, sizeof(msg), k->sk);
	eg_cap_encode(cap, raw);
}

void test_record_for(const struct eg_capability *cap, struct eg_record *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->id = cap->id;
	if (cap->port) {
		rec->ports[0].port = cap->port;
		rec->ports[0].proto = cap->proto;
		rec->nports = 1;
	}
}

const char *test_vectors_dir(void)
{
	const char *d = getenv("EXECGATE_VECTORS_DIR");

	return d && *d ? d : "tests/vectors";
}

uint8_t *test_unhex(const char *hex, size_t *len)
{
	size_t n = strlen(hex);
	uint8_t *out = malloc(n / 2 + 1);

	cr_assert_not_null(out);
	cr_assert_eq(sodium_hex2bin(out, n / 2 + 1, hex, n, NULL, len, NULL), 0, "bad hex: %s",
		     hex);
	return out;
}

char *test_tmpdir(void)
{
	char *d = strdup("/tmp/execgate-unit-XXXXXX");

	cr_assert_not_null(d);
	cr_assert_not_null(mkdtemp(d), "mkdtemp");
	return d;
}

void test_rmtree(const char *dir)
{
	char path[4096];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path) != 0)
			test_rmtree(path);
	}
	closedir(d);
	rmdir(dir);
}

void test_write_file(const char *dir, const char *name, const char *content)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	cr_assert_not_null(f, "fopen %s", path);
	fputs(content, f);
	cr_assert_eq(fclose(f), 0);
}
