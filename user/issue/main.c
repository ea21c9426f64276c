/* SPDX-License-Identifier: Apache-2.0 */
/* execgate-issue: keygen, pubkey and cap. This file only dispatches. */
#include <stdio.h>
#include <string.h>
#include <sodium.h>
#include <execgate/execgate.h>
#include "issue/issue.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: execgate-issue keygen --out DIR\n"
		   "       execgate-issue pubkey --seed SEEDFILE\n"
		   "       execgate-issue cap --key SEEDFILE --sandbox UUID --worker UUID "
		   "--generation N --activation N\n"
		   "                          [--pod-uid UUID] [--substrate NAME] --scope LIST "
		   "[--port N/tcp|udp]\n"
		   "                          [--ttl S] [--now UNIX] [--not-before UNIX]\n");
}

int main(int argc, char **argv)
{
	if (sodium_init() < 0) {
		fprintf(stderr, "execgate-issue: libsodium: initialisation failed\n");
		return ISSUE_EXIT_ERROR;
	}
	if (argc < 2) {
		usage(stderr);
		return ISSUE_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return ISSUE_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("execgate-issue %s\n", EXECGATE_VERSION);
		return ISSUE_EXIT_OK;
	}
	if (!strcmp(argv[1], "keygen"))
		return cmd_keygen(argc - 1, argv + 1);
	if (!strcmp(argv[1], "pubkey"))
		return cmd_pubkey(argc - 1, argv + 1);
	if (!strcmp(argv[1], "cap"))
		return cmd_cap(argc - 1, argv + 1);
	fprintf(stderr, "execgate-issue: %s: unknown command\n", argv[1]);
	usage(stderr);
	return ISSUE_EXIT_USAGE;
}
