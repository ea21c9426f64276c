// SPDX-License-Identifier: Apache-2.0
/* GET /v1/audit[?since=DURATION]: the rollout report (docs/api.md), built
 * by the library over the aggregate this daemon's events consumer feeds
 * (events.c), the same document `execgate audit-report --json` prints. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <execgate/admin.h>
#include "daemon/daemon.h"
#include "daemon/http.h"

static enum MHD_Result unknown_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				   const char *value)
{
	const char **bad = cls;

	(void)kind;
	(void)value;
	if (strcmp(key, "since")) {
		*bad = key;
		return MHD_NO;
	}
	return MHD_YES;
}

enum MHD_Result egd_h_audit(struct egd_call *c)
{
	const char *since, *bad = NULL;
	char err[EG_ERR_MAX] = "", *json = NULL;
	int rc;

	MHD_get_connection_values(c->conn, MHD_GET_ARGUMENT_KIND, unknown_arg, &bad);
	if (bad)
		return egd_reply_error(c, MHD_HTTP_BAD_REQUEST, "bad request",
				       "query parameter %.64s: unknown (only since)", bad);
	since = MHD_lookup_connection_value(c->conn, MHD_GET_ARGUMENT_KIND, "since");
	rc = eg_audit_report(c->d->audit, c->d->cfg.pin_dir, since, "daemon",
			     c->d->cfg.worker_id_text[0] ? c->d->cfg.worker_id_text : NULL, &json,
			     err, sizeof(err));
	if (rc == -EINVAL)
		return egd_reply_error(c, MHD_HTTP_BAD_REQUEST, "bad request", "%s", err);
	if (rc == -ENOENT)
		return egd_reply_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "not loaded",
				       "nothing is loaded at %s", c->d->cfg.pin_dir);
	if (rc)
		return egd_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error", "%s",
				       err);
	{
		size_t len = strlen(json);

		json[len] = '\n'; /* its NUL becomes the line end, as every answer's */
		return egd_reply_buf(c, MHD_HTTP_OK, "application/json", json, len + 1);
	}
}
