// SPDX-License-Identifier: Apache-2.0
/* execgate list: every runtime record on this worker. */
#include <errno.h>
#include <string.h>
#include "execgate/commands.h"
#include "execgate/daemon_ask.h"
#include "execgate/sandbox_cmd.h"
#include "lib/json.h"

/* The text form; --json is eg_json_list_worker's document. */
static int list_one(const struct eg_runtime_record *r, const struct eg_inet_addr *addrs,
		    size_t naddrs, void *ctx)
{
	(void)ctx;
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
	struct eg_cli_parse p;
	struct eg_worker *w;
	json_t *doc = NULL;
	int rc;

	rc = eg_cli_parse_json_only(&p, cmd, argc, argv);
	if (rc >= 0)
		return rc;
	rc = eg_cli_pins_denied(p.pin_dir, EG_DAEMON_DEFAULT_SOCKET);
	if (rc >= 0)
		return rc;
	if (eg_cli_worker_open(&p, &w))
		return EG_EXIT_ERROR;
	/* The JSON document is printed whole or not at all. */
	if (p.json)
		rc = eg_json_list_worker(w, &doc, err, sizeof(err));
	else
		rc = eg_list_with_addrs(w, list_one, NULL, err, sizeof(err));
	eg_worker_close(w);
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
