/* SPDX-License-Identifier: Apache-2.0 */
/* execgate: the worker-side loader and checker. One subcommand per file
 * (cmd_*.c); this file only dispatches. */
#include <stdio.h>
#include <string.h>
#include <sodium.h>
#include <execgate/execgate.h>
#include "execgate/commands.h"
#include "loader/pins.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *synopsis;
};

static const struct command commands[] = {
    {"check", cmd_check, "check --keys DIR <identity flags> [--now UNIX] [--json] TOKEN|-"},
    {"load", cmd_load, "load [--cgroup PATH] [--require cgroup|lsm|full] [--json]"},
    {"unload", cmd_unload, "unload"},
    {"status", cmd_status, "status [--json]"},
    {"keys", cmd_keys, "keys add FILE | remove KID | list [--json]"},
    {"install", cmd_install,
     "install <identity flags> --bridge-pid PID [--vmm-pid PID] [--bridge-socket PATH]... "
     "[--vmm-socket PATH]... [--vsock CID:PORT]... [--json]"},
    {"retire", cmd_retire, "retire --sandbox UUID"},
    {"admit", cmd_admit, "admit --pid PID [--scope LIST] [--now UNIX] [--json] TOKEN|-"},
    {"revoke", cmd_revoke, "revoke --pid PID --sandbox UUID"},
    {"events", cmd_events, "events [--json] [--count N]"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: execgate COMMAND [ARGS]\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %s\n", commands[i].synopsis);
	fprintf(f,
		"every loader command takes --pin-dir DIR (default %s) and --state-dir DIR\n"
		"(default %s)\n",
		EG_DEFAULT_PIN_DIR, EG_DEFAULT_STATE_DIR);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EG_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return EG_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("execgate %s\n", EXECGATE_VERSION);
		return EG_EXIT_OK;
	}
	if (sodium_init() < 0) {
		fprintf(stderr, "execgate: libsodium: initialisation failed\n");
		return EG_EXIT_ERROR;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "execgate: %s: unknown command\n", argv[1]);
	usage(stderr);
	return EG_EXIT_USAGE;
}
