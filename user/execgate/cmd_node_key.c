// SPDX-License-Identifier: Apache-2.0
/* execgate node-key init / reset: the worker's own key, which signs
 * refresh-route and deny verdicts. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <execgate/admin.h>
#include "execgate/commands.h"

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
	uint8_t id[EG_ID_BYTES];
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
		rc = eg_node_key_reset(p.state_dir, worker_id, pub, sizeof(pub), err, sizeof(err));
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
