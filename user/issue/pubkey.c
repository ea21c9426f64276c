/* SPDX-License-Identifier: Apache-2.0 */
/* execgate-issue pubkey --seed FILE: prints the typed public key line of a
 * seed. The one way to (re)make a .pub: from its seed, never by editing a
 * file, since an untyped file may be a seed copied by mistake. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "core/key_file.h"
#include "core/keyset.h"
#include "issue/issue.h"

int cmd_pubkey(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"seed", required_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	uint8_t seed[crypto_sign_SEEDBYTES], pk[crypto_sign_PUBLICKEYBYTES];
	uint8_t sk[crypto_sign_SECRETKEYBYTES];
	char err[512], line[EG_KEY_FILE_LINE_MAX];
	const char *path = NULL;
	int c, ret;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (path) {
				fprintf(stderr, "execgate-issue pubkey: --seed given twice\n");
				return ISSUE_EXIT_USAGE;
			}
			path = optarg;
			break;
		case 'h':
			printf("usage: execgate-issue pubkey --seed SEEDFILE\n"
			       "  --seed SEEDFILE  a seed file written by keygen (mode 0600);\n"
			       "                   prints its public key line, the content of a "
			       ".pub\n");
			return ISSUE_EXIT_OK;
		case ':':
			fprintf(stderr, "execgate-issue pubkey: %s: missing value\n",
				argv[optind - 1]);
			return ISSUE_EXIT_USAGE;
		default:
			fprintf(stderr, "execgate-issue pubkey: %s: unknown option\n",
				argv[optind - 1]);
			return ISSUE_EXIT_USAGE;
		}
	}
	if (!path || optind != argc) {
		fprintf(stderr, "execgate-issue pubkey: %s\n",
			!path ? "missing --seed SEEDFILE" : "unexpected argument");
		return ISSUE_EXIT_USAGE;
	}
	ret = seed_file_read(path, seed, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "execgate-issue pubkey: key %s: %s\n", path, err);
		return ISSUE_EXIT_ERROR;
	}
	crypto_sign_seed_keypair(pk, sk, seed);
	sodium_memzero(seed, sizeof(seed));
	sodium_memzero(sk, sizeof(sk));
	if (eg_key_file_encode(EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC, pk, sizeof(pk), line,
			       sizeof(line)) < 0) {
		fprintf(stderr, "execgate-issue pubkey: encoding the public key failed\n");
		return ISSUE_EXIT_ERROR;
	}
	fputs(line, stdout);
	return fflush(stdout) ? ISSUE_EXIT_ERROR : ISSUE_EXIT_OK;
}
