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
	fprintf(f, "usage: execgate COMMAND [ARGS]   (execgate COMMAND --help for its flags)\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %s%s%s\n", commands[i]->name, commands[i]->args[0] ? " " : "",
			commands[i]->args);
	fprintf(f,
		"every command takes --pin-dir DIR (default %s) and --state-dir DIR\n"
		"(default %s), and --help\n",
		EG_WORKER_DEFAULT_PIN_DIR, EG_WORKER_DEFAULT_STATE_DIR);
	eg_cli_exit_codes_brief(f);
	fprintf(f, "\noptions:\n");
	help_exit_codes_row(f);
	eg_opts_help_std(f);
}

int main(int argc, char **argv)
{
	int rc;

	eg_opts_verbose(verbose);
	if (argc == 2 && !strcmp(argv[1], "--help-exit-codes")) {
		eg_cli_exit_codes_doc(stdout);
		return EG_EXIT_OK;
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
