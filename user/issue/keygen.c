/* SPDX-License-Identifier: Apache-2.0 */
/* execgate-issue keygen --out DIR: a new signing seed and its public key,
 * both in the typed form of core/key_file.h, so that no reader can take
 * the one for the other. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/ids.h"
#include "core/key_file.h"
#include "core/keyset.h"
#include "issue/issue.h"

static const struct eg_opt opts[] = {
    EG_OPT("out", "DIR",
	   "the directory the key pair is written to (created 0700 if missing); never "
	   "overwrites a file"),
    EG_OPT_END,
};

static const struct issue_cmd keygen = {
    .name = "keygen",
    .synopsis = "--out DIR",
    .about = "Makes an Ed25519 key pair: DIR/KID.seed (mode 0600, the signing seed; it stays\n"
	     "with the control plane) and DIR/KID.pub (for the workers' execgate keys add),\n"
	     "and prints the key id KID. A root key, which signs only key sets (execgate-issue\n"
	     "keyset), is made the same way: give it a directory of its own.",
    .opts = opts,
};

int cmd_keygen(int argc, char **argv)
{
	uint8_t seed[crypto_sign_SEEDBYTES], pk[crypto_sign_PUBLICKEYBYTES];
	uint8_t sk[crypto_sign_SECRETKEYBYTES], kid[EG_KEY_ID_LEN];
	char kid_hex[EG_KID_TEXT_LEN], name[64], seed_line[EG_KEY_FILE_LINE_MAX];
	char pub_line[EG_KEY_FILE_LINE_MAX];
	const char *out = NULL;
	int ret, seed_len, pub_len, rc = ISSUE_EXIT_ERROR;
	const struct eg_opt *o;
	struct eg_opts p;
	const char *val;

	issue_opts_init(&p, &keygen, argc, argv);
	while ((ret = eg_opts_next(&p, &o, &val)) == 1)
		out = val; /* --out, the only flag */
	if (ret < 0)
		return p.exit;
	if (!out)
		return eg_opts_usage(&p, "missing --out DIR");
	if (mkdir(out, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "execgate-issue: keygen: %s: %s\n", out, strerror(errno));
		return ISSUE_EXIT_ERROR;
	}

	randombytes_buf(seed, sizeof(seed));
	crypto_sign_seed_keypair(pk, sk, seed);
	/* A fresh key is valid with overwhelming probability; checking costs
	 * nothing and keeps the key-set rule in one place. */
	if (eg_key_check(pk) != EG_KEY_OK) {
		fprintf(stderr, "execgate-issue: keygen: generated key failed the key rules\n");
		goto cleanup;
	}
	eg_key_id(pk, kid);
	eg_key_id_format(kid, kid_hex);
	seed_len = eg_key_file_encode(EG_KEY_ALG_ED25519, EG_KEY_KIND_SECRET, seed, sizeof(seed),
				      seed_line, sizeof(seed_line));
	pub_len = eg_key_file_encode(EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC, pk, sizeof(pk),
				     pub_line, sizeof(pub_line));
	if (seed_len < 0 || pub_len < 0) {
		fprintf(stderr, "execgate-issue: keygen: encoding the key files failed\n");
		goto cleanup;
	}

	snprintf(name, sizeof(name), "%s.seed", kid_hex);
	ret = file_create_new(out, name, seed_line, (size_t)seed_len, 0600);
	if (ret) {
		fprintf(stderr, "execgate-issue: keygen: %s/%s: %s\n", out, name, strerror(-ret));
		goto cleanup;
	}
	snprintf(name, sizeof(name), "%s.pub", kid_hex);
	ret = file_create_new(out, name, pub_line, (size_t)pub_len, 0644);
	if (ret) {
		char seed_path[4096];

		fprintf(stderr, "execgate-issue: keygen: %s/%s: %s\n", out, name, strerror(-ret));
		/* No half key pair: the seed we just wrote goes again. */
		snprintf(seed_path, sizeof(seed_path), "%s/%s.seed", out, kid_hex);
		unlink(seed_path);
		goto cleanup;
	}
	printf("%s\n", kid_hex);
	rc = ISSUE_EXIT_OK;

cleanup:
	sodium_memzero(seed, sizeof(seed));
	sodium_memzero(sk, sizeof(sk));
	sodium_memzero(seed_line, sizeof(seed_line));
	return rc;
}
