// SPDX-License-Identifier: Apache-2.0
/* PUT /v1/mode: the enforce/audit switch at run time (docs/design.md,
 * "Modes"), an admin operation. Body {"mode": "enforce"|"audit"} for the
 * global mode, plus "sandbox": UUID for one sandbox's own mode (there also
 * "inherit"). Logged with who switched, and counted (the kernel's mode
 * word counts global switches; /metrics execgate_mode_switches_total). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <execgate/admin.h>
#include "daemon/http.h"
#include "daemon/log.h"
#include "daemon/metrics.h"
#include "lib/json.h"

enum MHD_Result egd_h_mode_put(struct egd_call *c)
{
	char who[128], err[EG_ERR_MAX] = "", before[8] = "", mode_now[8] = "";
	uint8_t sandbox[EG_ID_BYTES];
	enum MHD_Result replied;
	const char *mode, *sb = NULL, *key;
	unsigned switches = 0;
	json_t *o, *v;
	int rc;

	o = egd_body_object(c, &replied);
	if (!o)
		return replied;
	json_object_foreach(o, key, v)
	{
		if (strcmp(key, "mode") && strcmp(key, "sandbox")) {
			json_decref(o);
			return egd_reply_error(c, MHD_HTTP_BAD_REQUEST, "bad request",
					       "\"%.64s\": unknown field", key);
		}
	}
	v = json_object_get(o, "mode");
	mode = json_is_string(v) ? json_string_value(v) : NULL;
	v = json_object_get(o, "sandbox");
	if (v && !json_is_null(v)) {
		sb = json_is_string(v) ? json_string_value(v) : NULL;
		if (!sb || eg_uuid_from_text(sb, sandbox)) {
			json_decref(o);
			return egd_reply_error(c, MHD_HTTP_BAD_REQUEST, "bad request",
					       "\"sandbox\": not a UUID");
		}
	}
	if (!mode) {
		json_decref(o);
		return egd_reply_error(c, MHD_HTTP_BAD_REQUEST, "bad request",
				       "\"mode\": required, enforce or audit");
	}
	snprintf(who, sizeof(who), "uid %u pid %d (PUT /v1/mode)", (unsigned)c->peer->uid,
		 (int)c->peer->pid);
	rc = eg_mode_set(c->d->cfg.pin_dir, c->d->cfg.state_dir, sb ? sandbox : NULL, mode, who,
			 before, err, sizeof(err));
	if (rc) {
		json_decref(o);
		egd_log(EGD_LOG_WARNING, "mode: switch by %s refused: %s", who, err);
		return egd_reply_error(c,
				       rc == -EINVAL   ? MHD_HTTP_BAD_REQUEST
				       : rc == -ENOENT ? MHD_HTTP_NOT_FOUND
						       : MHD_HTTP_INTERNAL_SERVER_ERROR,
				       rc == -EINVAL   ? "bad request"
				       : rc == -ENOENT ? "not found"
						       : "internal error",
				       "%s", err);
	}
	egd_metrics_mode_switched(&c->d->metrics, sb != NULL);
	egd_log(EGD_LOG_NOTICE, "mode: %s%s %s -> %s, by %s", sb ? "sandbox " : "global",
		sb ? sb : "", before, mode, who);
	eg_mode_get(c->d->cfg.pin_dir, mode_now, &switches, NULL, NULL, err, sizeof(err));
	replied = egd_reply_json(c, MHD_HTTP_OK,
				 json_pack("{s:i,s:o,s:s,s:s,s:s}", "schema_version",
					   EG_JSON_SCHEMA_VERSION, "sandbox",
					   sb ? json_string(sb) : json_null(), "mode", mode,
					   "before", before, "global", mode_now));
	json_decref(o);
	return replied;
}
