// SPDX-License-Identifier: Apache-2.0
/* execgate node-key init / verdict verify: the worker's own signing key
 * and the check a front end runs on a signed verdict (docs/design.md §5: only an
 * authenticated refresh signal may trigger route reconciliation). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "execgate/commands.h"
#include "lib/json.h"
#include "lib/worker.h"

static const struct eg_opt node_key_opts[] = {
    EG_OPT("worker-id", "UUID",
	   "this worker's id as the control plane names it, bound into every signed verdict"),
    EG_OPT_END,
};

static int run_node_key(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	const char *name, *val, *worker_id = NULL;
	char pub[4200], err[EG_ERR_MAX];
	struct eg_cli_parse p;
	bool created;
	__u8 id[EG_ID_BYTES];
	int c, rc;

	eg_cli_parse_init(&p, cmd, argc, argv);
	while ((c = eg_cli_next(&p, &name, &val)) == 1) {
		if (eg_uuid_from_text(val, id))
			return eg_cli_usage(&p, "--worker-id %s: not a UUID", val);
		worker_id = val;
	}
	if (c < 0)
		return p.exit;
	if (p.npos != 1 || (strcmp(p.pos[0], "init") && strcmp(p.pos[0], "reset")))
		return eg_cli_usage(&p, "expected init or reset");
	if (!strcmp(p.pos[0], "reset")) {
		/* A reset without the new id would leave a key no verdict
		 * can be bound to: the id is required. */
		if (!worker_id)
			return eg_cli_usage(&p, "reset needs --worker-id");
		rc = eg_wk_node_key_reset(p.state_dir, worker_id, pub, sizeof(pub), err,
					  sizeof(err));
		created = true;
	} else {
		rc = eg_node_key_init(p.state_dir, worker_id, pub, sizeof(pub), &created, err,
				      sizeof(err));
	}
	if (rc) {
		eg_cli_err("%s", err);
		return rc == -EEXIST ? EG_EXIT_STALE : EG_EXIT_ERROR;
	}
	/* stdout is the path alone, so that `scp "$(execgate node-key init)"`
	 * works; what happened goes to stderr. */
	printf("%s\n", pub);
	fprintf(stderr, "execgate: node-key: %s\n",
		!strcmp(p.pos[0], "reset") ? "replaced"
		: created		   ? "created"
					   : "already present");
	return EG_EXIT_OK;
}

const struct eg_cli_cmd eg_cmd_node_key = {
    .name = "node-key",
    .args = "init [--worker-id UUID] | reset --worker-id UUID",
    .about = "init creates the worker's node key in the state dir if it is missing (node.seed\n"
	     "0600, node.pub 0644, typed key-file form) and prints the path of the public key\n"
	     "file, for front ends. Idempotent. With --worker-id, records the id signed\n"
	     "verdicts carry; a different id than the one recorded is refused (exit 6).\n"
	     "reset replaces the node key with a new one bound to --worker-id: the way to\n"
	     "correct a worker's id (run it with execgated stopped). Verdicts signed before\n"
	     "no longer verify: front ends need the new node.pub.",
    .opts = node_key_opts,
    .dirs = true,
    .run = run_node_key,
};

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
	bool json = false;
	int c, rc;

	eg_cli_parse_init(&p, cmd, argc, argv);
	while ((c = eg_cli_next(&p, &name, &val)) == 1) {
		if (!strcmp(name, "json"))
			json = true;
		else
			key = val;
	}
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
		if (json)
			eg_json_print(stdout, json_pack("{s:i,s:b}", "schema_version",
							EG_JSON_SCHEMA_VERSION, "valid", 0));
		return EG_EXIT_DENY;
	}
	print_claim(&v, json);
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
