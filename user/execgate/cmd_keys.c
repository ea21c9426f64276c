// SPDX-License-Identifier: Apache-2.0
/* execgate keys add FILE | remove KID | list: the worker's verification
 * key set in <state-dir>/keys. */
#include <errno.h>
#include <string.h>
#include <sodium.h>
#include "execgate/commands.h"
#include "lib/json.h"

static const struct eg_opt keys_opts[] = {
    EG_OPT("json", NULL, "list: print one JSON object (schema_version 2)"),
    EG_OPT_END,
};

struct list_out {
	bool json;
	json_t *keys;
};

static int list_one(const char *kid, const uint8_t pk[32], void *ctx)
{
	struct list_out *o = ctx;
	char hex[65];

	if (o->json)
		return eg_json_key_add(o->keys, kid, pk);
	sodium_bin2hex(hex, sizeof(hex), pk, 32);
	printf("%s %s\n", kid, hex);
	return 0;
}

static int run_keys(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	struct list_out o = {0};
	struct eg_cli_parse p;
	struct eg_worker *w;
	char err[EG_ERR_MAX] = "", kid[EG_KID_TEXT_LEN];
	const char *name, *val, *verb;
	int c, rc;

	eg_cli_parse_init(&p, cmd, argc, argv);
	while ((c = eg_cli_next(&p, &name, &val)) == 1)
		; /* --json is the only flag of its own, and eg_cli_next takes it */
	if (c < 0)
		return p.exit;
	o.json = p.json;
	verb = p.npos ? p.pos[0] : "";
	if (!((!strcmp(verb, "add") && p.npos == 2) || (!strcmp(verb, "remove") && p.npos == 2) ||
	      (!strcmp(verb, "list") && p.npos == 1)))
		return eg_cli_usage(&p, "expected add FILE, remove KID or list");
	if (eg_cli_worker_open(&p, &w))
		return EG_EXIT_ERROR;
	if (!strcmp(verb, "add")) {
		rc = eg_worker_keys_add(w, p.pos[1], kid, err, sizeof(err));
		if (rc >= 0)
			/* 1: already present. Adding is idempotent, so a
			 * re-run of a provisioning script succeeds. */
			printf("%s%s\n", kid, rc == 1 ? " (already present)" : "");
	} else if (!strcmp(verb, "remove")) {
		rc = eg_worker_keys_remove(w, p.pos[1], err, sizeof(err));
		if (!rc)
			printf("removed %s\n", p.pos[1]);
	} else {
		json_t *doc = o.json ? eg_json_keys(&o.keys) : NULL;

		rc = o.json && !doc ? -ENOMEM : eg_worker_keys_list(w, list_one, &o);
		if (rc < 0) {
			snprintf(err, sizeof(err), "keys: %s", strerror(-rc));
			json_decref(doc);
		} else if (doc && eg_json_print(stdout, doc)) { /* takes doc */
			snprintf(err, sizeof(err), "keys: cannot write the list");
			rc = -EIO;
		}
	}
	/* The files the load skipped (their keys are not trusted), each on
	 * a line of its own. */
	if (rc >= 0) {
		if (!strcmp(verb, "list"))
			eg_worker_keys_warnings(w, err, sizeof(err));
		for (char *line = err; *line;) {
			size_t n = strcspn(line, "\n");

			eg_cli_err("warning: skipped %.*s", (int)n, line);
			line += n + (line[n] ? 1 : 0);
		}
	}
	eg_worker_close(w);
	if (rc < 0) {
		eg_cli_err("%s", err);
		return rc == -EINVAL && !strcmp(verb, "remove") ? EG_EXIT_USAGE
								: eg_cli_exit_for(rc);
	}
	return EG_EXIT_OK;
}

const struct eg_cli_cmd eg_cmd_keys = {
    .name = "keys",
    .args = "add FILE | remove KID | list [--json]",
    .about = "The verification keys capabilities are checked with, in <state-dir>/keys.\n"
	     "add FILE takes a public key file (execgate-issue keygen writes KID.pub) and\n"
	     "refuses a secret one; adding a key already present succeeds (exit 0).\n"
	     "remove KID exits 7 when there is no such key. A file in the key set that\n"
	     "does not load is skipped (its key is not trusted) and named on stderr.",
    .opts = keys_opts,
    .dirs = true,
    .run = run_keys,
};
