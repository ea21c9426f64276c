/* SPDX-License-Identifier: Apache-2.0 */
/* execgate-issue pubkey --seed FILE: prints the typed public key line of a
 * seed. The one way to (re)make a .pub: from its seed, never by editing a
 * file, since an untyped file may be a seed copied by mistake. */
#include <stdio.h>
#include <string.h>
#include "core/key_file.h"
#include "core/keyset.h"
#include "issue/issue.h"

static const struct eg_opt opts[] = {
    EG_OPT("seed", "SEEDFILE",
	   "a seed file written by keygen (mode 0600); prints its public key line, the "
	   "content of a .pub"),
    EG_OPT_END,
};

static const struct issue_cmd pubkey = {
    .name = "pubkey",
    .synopsis = "--seed SEEDFILE",
    .about = "Prints the typed public key line of a seed: the one way to (re)make a .pub.",
    .opts = opts,
};

int cmd_pubkey(int argc, char **argv)
{
	uint8_t seed[crypto_sign_SEEDBYTES], pk[crypto_sign_PUBLICKEYBYTES];
	uint8_t sk[crypto_sign_SECRETKEYBYTES];
	char err[512], line[EG_KEY_FILE_LINE_MAX];
	const char *path = NULL;
	const struct eg_opt *o;
	struct eg_opts p;
	const char *val;
	int ret;

	issue_opts_init(&p, &pubkey, argc, argv);
	while ((ret = eg_opts_next(&p, &o, &val)) == 1)
		path = val; /* --seed, the only flag */
	if (ret < 0)
		return p.exit;
	if (!path)
		return eg_opts_usage(&p, "missing --seed SEEDFILE");
	ret = seed_file_read(path, seed, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "execgate-issue: pubkey: key %s: %s\n", path, err);
		return ISSUE_EXIT_ERROR;
	}
	crypto_sign_seed_keypair(pk, sk, seed);
	sodium_memzero(seed, sizeof(seed));
	sodium_memzero(sk, sizeof(sk));
	if (eg_key_file_encode(EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC, pk, sizeof(pk), line,
			       sizeof(line)) < 0) {
		fprintf(stderr, "execgate-issue: pubkey: encoding the public key failed\n");
		return ISSUE_EXIT_ERROR;
	}
	fputs(line, stdout);
	return fflush(stdout) ? ISSUE_EXIT_ERROR : ISSUE_EXIT_OK;
}
