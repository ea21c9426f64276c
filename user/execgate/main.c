/* SPDX-License-Identifier: Apache-2.0 */
/* execgate: the worker-side loader and checker. One subcommand per file
 * (cmd_*.c); this file only dispatches. */
#include <stdio.h>
#include <string.h>
#include "execgate/commands.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *synopsis;
};

static const struct command commands[] = {
	{"check", cmd_check, "check --keys DIR <identity flags> [--now UNIX] [--json] TOKEN|-"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: execgate COMMAND [ARGS]\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %s\n", commands[i].synopsis);
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
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "execgate: %s: unknown command\n", argv[1]);
	usage(stderr);
	return EG_EXIT_USAGE;
}
