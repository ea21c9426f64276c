/* SPDX-License-Identifier: Apache-2.0 */
/* execgate-issue: keygen, pubkey, cap, selection, keyset, their
 * inspectors, and fence. This file only dispatches. */
#include <stdio.h>
#include <string.h>
#include <sodium.h>
#include <execgate/execgate.h>
#include "frontend/identity_opts.h"
#include "frontend/opts.h"
#include "issue/issue.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: execgate-issue keygen --out DIR\n"
		   "       execgate-issue pubkey --seed SEEDFILE\n"
		   "       execgate-issue cap --key SEEDFILE --sandbox UUID --worker UUID "
		   "--generation N --activation N\n"
		   "                          [--pod-uid UUID] [--substrate NAME] --scope LIST "
		   "[--port N/tcp|udp]\n"
		   "                          [--ttl S] [--now UNIX] [--not-before UNIX]\n"
		   "       execgate-issue selection --key SEEDFILE --sandbox UUID --worker UUID "
		   "--generation N\n"
		   "                          --activation N [--pod-uid UUID] [--substrate NAME] "
		   "[--now UNIX]\n"
		   "       execgate-issue keyset --root-key SEEDFILE --version N [--now UNIX] "
		   "PUBFILE...\n"
		   "       execgate-issue inspect-selection [--keys FILE|DIR] TEXT\n"
		   "       execgate-issue inspect-keyset [--root-keys FILE|DIR] TEXT\n"
		   "       execgate-issue fence --etcd URL[,URL] [--prefix P] --sandbox UUID "
		   "--generation N\n"
		   "                          --workers W1,W2,... --node-keys DIR [--allow-audit]\n"
		   "                          --timeout SEC\n"
		   "(execgate-issue COMMAND --help for its flags)\n\noptions:\n");
	eg_opts_help_std(f);
}

int main(int argc, char **argv)
{
	int rc;

	if (sodium_init() < 0) {
		fprintf(stderr, "execgate-issue: libsodium: initialisation failed\n");
		return ISSUE_EXIT_ERROR;
	}
	rc = eg_opts_top("execgate-issue", &argc, argv, usage);
	if (rc >= 0)
		return rc;
	if (!strcmp(argv[1], "keygen"))
		return cmd_keygen(argc - 1, argv + 1);
	if (!strcmp(argv[1], "pubkey"))
		return cmd_pubkey(argc - 1, argv + 1);
	if (!strcmp(argv[1], "cap"))
		return cmd_cap(argc - 1, argv + 1);
	if (!strcmp(argv[1], "selection"))
		return cmd_selection(argc - 1, argv + 1);
	if (!strcmp(argv[1], "keyset"))
		return cmd_keyset(argc - 1, argv + 1);
	if (!strcmp(argv[1], "inspect-selection"))
		return cmd_inspect_selection(argc - 1, argv + 1);
	if (!strcmp(argv[1], "inspect-keyset"))
		return cmd_inspect_keyset(argc - 1, argv + 1);
	if (!strcmp(argv[1], "fence"))
		return cmd_fence(argc - 1, argv + 1);
	fprintf(stderr, "execgate-issue: %s: unknown command (execgate-issue --help)\n", argv[1]);
	return ISSUE_EXIT_USAGE;
}

static void cmd_help(const struct eg_opts *p, FILE *f)
{
	const struct issue_cmd *cmd = p->ctx;

	fprintf(f, "usage: execgate-issue %s %s\n\n%s\n\noptions:\n", cmd->name, cmd->synopsis,
		cmd->about);
	eg_opts_help_rows(f, cmd->opts);
	for (size_t t = 1; t < EG_OPTS_TABLES; t++)
		if (p->tables[t]) /* shared ones: issue/etcd_opts.c */
			eg_opts_help_rows(f, p->tables[t]);
	eg_opts_help_std(f);
	fprintf(f, "\nexit codes: 0 done, 1 failed, 2 usage\n");
}

void issue_opts_init(struct eg_opts *p, const struct issue_cmd *cmd, int argc, char **argv)
{
	eg_opts_init(p, "execgate-issue", cmd->name, argc, argv);
	p->tables[0] = cmd->opts;
	p->help = cmd_help;
	p->ctx = cmd;
}

int issue_next_signer(struct eg_opts *p, struct eg_identity_opts *id, const char **key_path,
		      const struct eg_opt **o, const char **value)
{
	char err[256];
	int c;

	while ((c = eg_opts_next(p, o, value)) == 1) {
		if (!strcmp((*o)->name, "key"))
			*key_path = *value;
		else if ((c = eg_identity_opt(id, (*o)->name, *value, err, sizeof(err))) < 0)
			goto usage;
		else if (c == 0)
			return 1;
	}
	if (c < 0)
		return -1;
	if (!*key_path) {
		p->exit = eg_opts_usage(p, "missing --key SEEDFILE");
		return -1;
	}
	if (eg_identity_opts_finish(id, EG_IDF_REQUIRED, err, sizeof(err)) == 0)
		return 0;
usage:
	p->exit = eg_opts_usage(p, "%s", err);
	return -1;
}
