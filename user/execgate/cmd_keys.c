// SPDX-License-Identifier: Apache-2.0
/* execgate keys add FILE | remove KID | list: the worker's verification
 * key set in <state-dir>/keys. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include "core/ids.h"
#include "core/keyset.h"
#include "execgate/cli.h"
#include "execgate/commands.h"
#include "loader/runtime.h"

int cmd_keys(int argc, char **argv)
{
	static const struct option opts[] = {
	    EG_CLI_DIRS_LONG_OPTS,
	    {"json", no_argument, NULL, 0},
	    {NULL, 0, NULL, 0},
	};
	struct eg_cli_dirs dirs;
	struct eg_keyset *ks;
	char err[768], kid[EG_KEY_ID_TEXT_LEN], hex[2 * crypto_sign_PUBLICKEYBYTES + 1];
	const char *verb;
	bool json = false;
	const char *name;
	int c, rc;

	eg_cli_dirs_init(&dirs);
	optind = 1;
	while ((c = eg_cli_getopt(argc, argv, opts, &dirs, &name)) == 0)
		json = true;
	if (c != -1 || optind >= argc)
		goto usage;
	verb = argv[optind];
	if (!strcmp(verb, "add") && optind + 2 == argc) {
		rc = eg_keystore_add(dirs.state_dir, argv[optind + 1], kid, err, sizeof(err));
		if (rc) {
			eg_cli_err("%s", err);
			return rc == -EINVAL ? EG_EXIT_ERROR : eg_cli_exit_for(rc);
		}
		printf("%s\n", kid);
		return EG_EXIT_OK;
	}
	if (!strcmp(verb, "remove") && optind + 2 == argc) {
		rc = eg_keystore_remove(dirs.state_dir, argv[optind + 1], err, sizeof(err));
		if (rc) {
			eg_cli_err("%s", err);
			return rc == -EINVAL ? EG_EXIT_USAGE : eg_cli_exit_for(rc);
		}
		printf("removed %s\n", argv[optind + 1]);
		return EG_EXIT_OK;
	}
	if (!strcmp(verb, "list") && optind + 1 == argc) {
		ks = calloc(1, sizeof(*ks));
		if (!ks)
			return EG_EXIT_ERROR;
		rc = eg_keystore_load(dirs.state_dir, ks, err, sizeof(err));
		if (rc) {
			eg_cli_err("%s", err);
			free(ks);
			return EG_EXIT_ERROR;
		}
		if (json)
			printf("[");
		for (size_t i = 0; i < ks->n; i++) {
			eg_key_id_format(ks->keys[i].kid, kid);
			sodium_bin2hex(hex, sizeof(hex), ks->keys[i].pk, sizeof(ks->keys[i].pk));
			if (json)
				printf("%s{\"kid\":\"%s\",\"public_key\":\"%s\"}", i ? "," : "",
				       kid, hex);
			else
				printf("%s %s\n", kid, hex);
		}
		if (json)
			printf("]\n");
		free(ks);
		return EG_EXIT_OK;
	}
usage:
	eg_cli_err("keys: usage: keys [--state-dir DIR] add FILE | remove KID | list [--json]");
	return EG_EXIT_USAGE;
}
