// SPDX-License-Identifier: Apache-2.0
/* GET /v1/status, /metrics and /v1/events. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "daemon/events.h"
#include "daemon/http.h"
#include "fleetd/worker.h"

int egd_status_doc(struct egd *d, json_t **doc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc;

	*doc = NULL;
	if (!f)
		return -ENOMEM;
	rc = eg_status_write(d->cfg.pin_dir, d->cfg.state_dir, f, true);
	fclose(f);
	if (!rc) {
		*doc = json_loadb(buf, len, 0, NULL);
		if (!json_is_object(*doc)) {
			json_decref(*doc);
			*doc = NULL;
			rc = -EBADMSG;
		}
	}
	free(buf);
	return rc;
}

/* What `execgate status --json` prints, from the same function. */
enum MHD_Result egd_h_status(struct egd_call *c)
{
	char digest[EG_KEYS_DIGEST_TEXT_LEN];
	json_t *doc;
	size_t n;
	int rc = egd_status_doc(c->d, &doc);

	if (rc == -ENOENT)
		return egd_reply_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "not loaded",
				       "nothing is loaded at %s", c->d->cfg.pin_dir);
	if (rc == -EBADMSG)
		return egd_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error",
				       "status: not a JSON object");
	if (rc)
		return egd_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error", "%s",
				       strerror(-rc));
	/* The daemon's own part of status (docs/api.md, "GET /v1/status"),
	 * after what the CLI prints: the key set it holds rather than the
	 * directory's, and the fleet watcher's state. */
	n = eg_worker_keys_digest(c->d->worker, digest);
	json_object_set_new(doc, "key_set",
			    json_pack("{s:I,s:s,s:s,s:n}", "keys", (json_int_t)n, "digest", digest,
				      "source", "daemon", "error"));
	if (c->d->fleet)
		json_object_set_new(doc, "fleet", eg_fleet_worker_status(c->d->fleet));
	return egd_reply_json(c, MHD_HTTP_OK, doc);
}

enum MHD_Result egd_h_metrics(struct egd_call *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return MHD_NO;
	egd_metrics_write(c->d, f);
	fclose(f);
	return egd_reply_buf(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", buf, len);
}

enum MHD_Result egd_h_events(struct egd_call *c)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;
	int rc;

	rc = egd_events_response(c->d, c->conn, c->peer->uid, c->peer->role == EGD_ROLE_ADMIN,
				 &resp);
	if (rc == -EUSERS)
		return egd_reply_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "overloaded",
				       "uid %u holds %u event streams already, retry later",
				       (unsigned)c->peer->uid, c->d->cfg.max_event_streams_per_uid);
	if (rc == -EBUSY)
		return egd_reply_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "overloaded",
				       "%u event streams open already, retry later",
				       c->d->cfg.max_event_streams);
	if (rc)
		return MHD_NO;
	/* A stream may stay quiet for hours: no idle timeout. Its reader is
	 * suspended while quiet (events.h), and a suspended connection does
	 * not time out anyway. */
	MHD_set_connection_option(c->conn, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/x-ndjson");
	ret = MHD_queue_response(c->conn, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	egd_metrics_http(&c->d->metrics, MHD_HTTP_OK);
	return ret;
}
