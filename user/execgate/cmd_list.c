// SPDX-License-Identifier: Apache-2.0
/* execgate list: every runtime record on this worker. */
#include <errno.h>
#include <string.h>
#include "execgate/commands.h"
#include "execgate/sandbox_cmd.h"
#include "lib/json.h"

struct list_out {
	struct eg_worker *w;
	char *err;
	size_t err_size;
};

/* The text form; --json is eg_json_list_worker's document. */
static int list_one(const struct eg_runtime_record *r, void *ctx)
{
	struct eg_inet_addr addrs[EG_WORKER_MAX_ENDPOINTS];
	struct list_out *o = ctx;
	size_t naddrs = 0;
	int rc;

	rc = eg_worker_service_addrs(o->w, r->sandbox, addrs, EG_WORKER_MAX_ENDPOINTS, &naddrs,
				     o->err, o->err_size);
	if (rc)
		return rc;
	eg_cli_record_text(r, addrs, naddrs);
	printf("\n");
	return 0;
}

static const struct eg_opt list_opts[] = {
    EG_OPT("json", NULL, "print one JSON object (schema_version 2)"),
    EG_OPT_END,
};

static int run_list(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	char err[EG_ERR_MAX] = "";
	struct list_out o = {.err = err, .err_size = sizeof(err)};
	struct eg_cli_parse p;
	json_t *doc = NULL;
	int rc;

	rc = eg_cli_parse_json_only(&p, cmd, argc, argv);
	if (rc >= 0)
		return rc;
	if (eg_cli_worker_open(&p, &o.w))
		return EG_EXIT_ERROR;
	/* The JSON document is printed whole or not at all. */
	if (p.json)
		rc = eg_json_list_worker(o.w, &doc, err, sizeof(err));
	else
		rc = eg_worker_list(o.w, list_one, &o, err, sizeof(err));
	eg_worker_close(o.w);
	if (rc) {
		eg_cli_err("%s", err[0] ? err : strerror(rc < 0 ? -rc : ENOMEM));
		return EG_EXIT_ERROR;
	}
	if (doc && eg_json_print(stdout, doc))
		return EG_EXIT_ERROR;
	return EG_EXIT_OK;
}

const struct eg_cli_cmd eg_cmd_list = {
    .name = "list",
    .args = "[--json]",
    .about = "Every runtime record on this worker, active and retired, one per line, with\n"
	     "its ServicePort profile (ports and service addresses).",
    .opts = list_opts,
    .dirs = true,
    .run = run_list,
};
