/* SPDX-License-Identifier: Apache-2.0 */
/* execgate: the worker-side loader and checker. One subcommand per file
 * (cmd_*.c), each a table of flags, calls into libexecgate and output; this
 * file only dispatches. */
#include <stdio.h>
#include <string.h>
#include <sodium.h>
#include <execgate/execgate.h>
#include "execgate/commands.h"

static const struct eg_cli_cmd *const commands[] = {
    &eg_cmd_load,     &eg_cmd_mode,    &eg_cmd_unload,	     &eg_cmd_status, &eg_cmd_probe,
    &eg_cmd_keys,     &eg_cmd_install, &eg_cmd_retire,	     &eg_cmd_forget, &eg_cmd_list,
    &eg_cmd_show,     &eg_cmd_admit,   &eg_cmd_check,	     &eg_cmd_revoke, &eg_cmd_events,
    &eg_cmd_node_key, &eg_cmd_verdict, &eg_cmd_audit_report,
};

/* -v/--verbose: the library's debug messages, libbpf's included. */
static void verbose(void)
{
	eg_log_set_level(EG_LOG_DEBUG);
}

static void help_exit_codes_row(FILE *f)
{
	const struct eg_opt row[] = {
	    EG_OPT("help-exit-codes", NULL,
		   "print the exit codes and their meanings, one per line, and exit 0"),
	    EG_OPT_END,
	};

	eg_opts_help_rows(f, row);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: execgate [--pin-dir DIR] [--state-dir DIR] COMMAND [ARGS]\n"
		   "(execgate help COMMAND, or execgate COMMAND --help: its flags)\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %s%s%s\n", commands[i]->name, commands[i]->args[0] ? " " : "",
			commands[i]->args);
	fprintf(f, "every command but verdict takes --pin-dir and --state-dir, before the command\n"
		   "or among its flags; every command takes --help\n");
	eg_cli_exit_codes_brief(f);
	fprintf(f, "\noptions:\n");
	eg_cli_help_dirs(f);
	help_exit_codes_row(f);
	eg_opts_help_std(f);
}

/* The global options a command also takes among its own flags: the
 * dirs (with a value, "--pin-dir X" or "--pin-dir=X") and -v. */
static int global_option(char **argv, int i, int argc)
{
	static const char *const with_value[] = {"--pin-dir", "--state-dir"};
	const char *a = argv[i];

	if (!strcmp(a, "-v") || !strcmp(a, "--verbose"))
		return 1;
	for (size_t k = 0; k < sizeof(with_value) / sizeof(with_value[0]); k++) {
		size_t n = strlen(with_value[k]);

		if (strncmp(a, with_value[k], n))
			continue;
		if (a[n] == '=')
			return 1;
		if (!a[n])
			return i + 1 < argc ? 2 : -1;
	}
	return 0;
}

/* "execgate --pin-dir X keys list" is "execgate keys --pin-dir X list", as
 * bpftool and systemctl take their global options on either side of the
 * command: the global options before the command word move to just after
 * it, where the command's parser takes them (and refuses one given twice,
 * or one the command has no use for). -1 with a usage error printed. */
static int hoist_global_options(int argc, char **argv)
{
	int i = 1, n;

	while (i < argc && (n = global_option(argv, i, argc)) != 0) {
		if (n < 0) {
			fprintf(stderr, "execgate: %s: missing DIR (execgate --help)\n", argv[i]);
			return -1;
		}
		i += n;
	}
	if (i > 1 && i >= argc) {
		fprintf(stderr,
			"execgate: no command after the global options (execgate --help)\n");
		return -1;
	}
	if (i == 1 || argv[i][0] == '-')
		return 0; /* none, or an option eg_opts_top takes or refuses */
	char *cmd = argv[i];

	memmove(&argv[2], &argv[1], (size_t)(i - 1) * sizeof(*argv));
	argv[1] = cmd;
	return 0;
}

int main(int argc, char **argv)
{
	char *help_argv[4];
	int rc;

	eg_opts_verbose(verbose);
	if (argc == 2 && !strcmp(argv[1], "--help-exit-codes")) {
		eg_cli_exit_codes_doc(stdout);
		return EG_EXIT_OK;
	}
	if (hoist_global_options(argc, argv))
		return EG_EXIT_USAGE;
	/* "execgate help CMD" is "execgate CMD --help". */
	if (argc >= 3 && !strcmp(argv[1], "help")) {
		if (argc > 3) {
			fprintf(stderr,
				"execgate: help: %s: unexpected argument (execgate --help)\n",
				argv[3]);
			return EG_EXIT_USAGE;
		}
		help_argv[0] = argv[0];
		help_argv[1] = argv[2];
		help_argv[2] = "--help";
		help_argv[3] = NULL;
		argv = help_argv;
	}
	rc = eg_opts_top("execgate", &argc, argv, usage);
	if (rc >= 0)
		return rc;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i]->name))
			continue;
		eg_cli_command = commands[i]->name;
		if (sodium_init() < 0) {
			eg_cli_err("libsodium: initialisation failed");
			return EG_EXIT_ERROR;
		}
		return commands[i]->run(commands[i], argc - 1, argv + 1);
	}
	fprintf(stderr, "execgate: %s: unknown command (execgate --help)\n", argv[1]);
	return EG_EXIT_USAGE;
}
