// SPDX-License-Identifier: Apache-2.0
/* execgate audit-report: the would-deny events by reason, hook, sandbox,
 * comm and executable (docs/operators.md, "Rolling enforcement out").
 * execgated consumes the eg_events ring while it runs and keeps the
 * aggregate, so the report is asked of it (GET /v1/audit) when it serves
 * this pin dir; without it, the events pending in the ring are read here
 * (and so consumed). Either way the library makes the document. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>
#include <execgate/admin.h>
#include "execgate/commands.h"
#include "execgate/daemon_ask.h"
#include "frontend/unix_get.h"
#include "lib/json.h"

#define DAEMON_TIMEOUT_MS 10000

static const struct eg_opt audit_report_opts[] = {
    EG_OPT("since", "DURATION",
	   "only rows last seen within DURATION (30s, 10m, 2h, 1d); counts stay whole"),
    EG_OPT("socket", "PATH",
	   "execgated's API socket (default " EG_DAEMON_DEFAULT_SOCKET "); given, it must "
	   "answer for this pin dir"),
    EG_OPT("json", NULL, "the report as one JSON document (schema_version 2)"),
    EG_OPT_END,
};

/* 0 and *json set: the daemon's report; 0 and *json NULL: no daemon serves
 * this pin dir here (read the ring); else an exit code after the message
 * (never 1 for a report: EG_EXIT_ERROR is 1). */
static int ask_daemon(const struct eg_cli_parse *p, const char *sock, bool sock_given,
		      const char *since, char **json)
{
	char target[96];
	json_t *doc, *reason;
	int status = 0, rc;
	bool ours;

	snprintf(target, sizeof(target), "/v1/audit%s%s", since ? "?since=" : "",
		 since ? since : "");
	rc = eg_unix_get(sock, target, DAEMON_TIMEOUT_MS, &status, json);
	if (!sock_given && (rc == -ENOENT || rc == -ECONNREFUSED))
		return 0;
	if (rc) {
		eg_cli_err("execgated at %s: %s", sock,
			   rc == -EPROTO ? "not an HTTP answer" : strerror(-rc));
		return EG_EXIT_ERROR;
	}
	doc = json_loads(*json, 0, NULL);
	if (status != 200) {
		reason = json_object_get(doc, "reason");
		eg_cli_err("execgated at %s: GET %s: %d %s", sock, target, status,
			   json_is_string(reason) ? json_string_value(reason) : "");
		json_decref(doc);
		free(*json);
		*json = NULL;
		return status == 503 ? EG_EXIT_NOT_FOUND : EG_EXIT_ERROR;
	}
	if (!json_is_string(json_object_get(doc, "pin_dir"))) {
		/* never read the ring behind a daemon that may be its reader */
		eg_cli_err("execgated at %s: GET %s: not an audit report", sock, target);
		json_decref(doc);
		free(*json);
		*json = NULL;
		return EG_EXIT_ERROR;
	}
	ours = eg_cli_same_pin_dir(json_string_value(json_object_get(doc, "pin_dir")), p->pin_dir);
	json_decref(doc);
	if (ours)
		return EG_EXIT_OK;
	free(*json);
	*json = NULL;
	if (!sock_given)
		return 0;
	eg_cli_err("execgated at %s: serves another pin dir than %s", sock, p->pin_dir);
	return EG_EXIT_ERROR;
}

static int read_ring(const struct eg_cli_parse *p, const char *since, char **json)
{
	char err[EG_ERR_MAX], worker_id[EG_UUID_TEXT_LEN];
	struct eg_audit *a = eg_audit_new(0);
	int rc;

	if (!a) {
		eg_cli_err("audit report: out of memory");
		return EG_EXIT_ERROR;
	}
	rc = eg_audit_drain(a, p->pin_dir, err, sizeof(err));
	if (rc >= 0)
		rc = eg_audit_report(a, p->pin_dir, since, "ring",
				     eg_node_worker_id_text(p->state_dir, worker_id) ? NULL
										     : worker_id,
				     json, err, sizeof(err));
	eg_audit_free(a);
	if (rc < 0) {
		eg_cli_err("%s", err);
		return eg_cli_exit_for(rc);
	}
	return EG_EXIT_OK;
}

static int run_audit_report(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	const char *name, *val, *since = NULL, *sock = EG_DAEMON_DEFAULT_SOCKET;
	char err[EG_ERR_MAX], *json = NULL;
	struct eg_cli_parse p;
	bool sock_given = false;
	int64_t ns;
	int c, rc;

	eg_cli_parse_init(&p, cmd, argc, argv);
	while ((c = eg_cli_next(&p, &name, &val)) == 1) {
		if (!strcmp(name, "since")) {
			if (eg_audit_since_parse(val, &ns))
				return eg_cli_usage(
				    &p, "--since %s: not a duration (e.g. 30s, 10m, 2h, 1d)", val);
			since = val;
		} else {
			sock = val;
			sock_given = true;
		}
	}
	if (c < 0)
		return p.exit;
	if (p.npos)
		return eg_cli_usage(&p, "%s: unexpected argument", p.pos[0]);
	rc = ask_daemon(&p, sock, sock_given, since, &json);
	if (!rc && !json) {
		rc = eg_cli_pins_denied(p.pin_dir, sock);
		rc = rc >= 0 ? rc : read_ring(&p, since, &json);
	}
	if (rc)
		return rc;
	if (p.json) {
		size_t len = strlen(json);

		/* the daemon's answer ends with its newline, the library's not */
		printf("%s%s", json, len && json[len - 1] == '\n' ? "" : "\n");
	} else if (eg_audit_print(stdout, json, err, sizeof(err))) {
		eg_cli_err("%s", err);
		rc = EG_EXIT_ERROR;
	}
	free(json);
	return rc;
}

const struct eg_cli_cmd eg_cmd_audit_report = {
    .name = "audit-report",
    .args = "[--since DURATION] [--json] [--socket PATH]",
    .about = "Summarises the would-deny events of audit mode by reason, hook, sandbox, comm\n"
	     "and executable, with counts and first/last seen, next to the kernel's\n"
	     "would-deny totals and the events the ring dropped. Asks execgated when it\n"
	     "serves this pin dir (it keeps the history); else reads, and so consumes, the\n"
	     "events pending in the ring.",
    .opts = audit_report_opts,
    .dirs = true,
    .run = run_audit_report,
};
