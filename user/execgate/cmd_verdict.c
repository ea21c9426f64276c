// SPDX-License-Identifier: Apache-2.0
/* execgate verdict verify: the check a front end runs on a signed verdict
 * (only an authenticated refresh signal may move a caller's route). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "execgate/commands.h"
#include "lib/json.h"

static const struct eg_opt verdict_opts[] = {
    EG_OPT("node-key", "FILE", "the signing worker's public node key (node.pub)"),
    EG_OPT("json", NULL, "print one JSON object (schema_version 2)"),
    EG_OPT_END,
};

static void print_claim(const struct eg_verdict_claim *v, bool json)
{
	char tok[2 * EG_ID_BYTES + 1], sb[EG_UUID_TEXT_LEN], wk[EG_UUID_TEXT_LEN], when[64];
	time_t t = (time_t)v->issued_at;
	struct tm tm;

	if (json) {
		if (eg_json_print(stdout, eg_json_claim(v)))
			eg_cli_err("verdict: out of memory");
		return;
	}
	/* A token id is 32 hex digits wherever it is printed (admit's
	 * token.token_id too), never UUID-formatted. */
	for (int i = 0; i < EG_ID_BYTES; i++)
		snprintf(tok + 2 * i, 3, "%02x", v->token_id[i]);
	eg_uuid_to_text(v->sandbox, sb);
	eg_uuid_to_text(v->worker, wk);
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	printf("%s: %s\n", eg_verdict_name(v->verdict), eg_reason_name(v->reason));
	printf("  signed by   node key %s, worker %s\n", v->node_key_id, wk);
	printf("  token       %s\n  sandbox     %s\n", tok, sb);
	if (v->has_record)
		printf("  installed   generation %llu activation %u\n",
		       (unsigned long long)v->generation, v->activation);
	else
		printf("  installed   no record of the sandbox\n");
	printf("  issued at   %s\n", when);
}

static int run_verdict(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	const char *name, *val, *key = NULL;
	struct eg_verdict_claim v;
	struct eg_cli_parse p;
	char err[EG_ERR_MAX], *text = NULL;
	int c, rc;

	eg_cli_parse_init(&p, cmd, argc, argv);
	while ((c = eg_cli_next(&p, &name, &val)) == 1)
		key = val; /* --node-key */
	if (c < 0)
		return p.exit;
	if (p.npos != 2 || strcmp(p.pos[0], "verify") || !key)
		return eg_cli_usage(&p, "expected verify --node-key FILE VERDICT");
	if (eg_cli_read_token(p.pos[1], &text)) {
		eg_cli_err("verdict: longer than 64 KiB");
		return EG_EXIT_DENY;
	}
	rc = eg_verdict_verify(key, text, &v, err, sizeof(err));
	free(text);
	if (rc) {
		/* Anything but a valid signature is the same answer for a
		 * route cache: do not act on it. */
		eg_cli_err("%s", err);
		if (p.json)
			eg_json_print(stdout, json_pack("{s:i,s:b}", "schema_version",
							EG_JSON_SCHEMA_VERSION, "valid", 0));
		return EG_EXIT_DENY;
	}
	print_claim(&v, p.json);
	return EG_EXIT_OK;
}

const struct eg_cli_cmd eg_cmd_verdict = {
    .name = "verdict",
    .args = "verify --node-key FILE [--json] VERDICT|-",
    .about = "Verifies a worker-signed verdict (the signed_verdict of admit/check --json)\n"
	     "against the worker's node key and prints what it says. Exit 0 when the\n"
	     "signature is valid, 4 for anything else (bad signature, another worker's key,\n"
	     "truncated, trailing bytes, malformed).",
    .opts = verdict_opts,
    .dirs = false,
    .run = run_verdict,
};
