// SPDX-License-Identifier: Apache-2.0
/* GET /v1/live and GET /v1/ready (docs/api.md, docs/kubernetes.md §4).
 *
 * Liveness is the process: it answers while the HTTP loop does, whatever
 * the pins hold, so that a kubelet never restarts a daemon an operator
 * unloaded (the restart would load everything again). Readiness is
 * enforcement: the guarantees GET /v1/status reports must cover every
 * endpoint kind of endpoint_kinds, or the node takes no sandboxes. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "daemon/http.h"
#include "daemon/json.h"

/* The guarantees (user/loader/tiers/tier_cgroup.c, lsm_tier.c, tcp_tier.c) that enforce a kind's
 * connects; any one held covers it. unix: the cgroup tier's connect_unix, or the lsm tier's
 * socket_connect on kernels without connect_unix. */
static const char *const kind_guarantees[EGD_ENDPOINT_KINDS][2] = {
    {"unix-bridge-socket-grant", "unix-path-machine-wide"},
    {"vsock-vmm-bridge-only", NULL},
    {"tcp-serviceport-profile", NULL},
};

enum MHD_Result egd_h_live(struct egd_call *c)
{
	return egd_reply_json(c, MHD_HTTP_OK,
			      json_pack("{s:i,s:b,s:s}", "schema_version", EG_JSON_SCHEMA_VERSION,
					"live", 1, "worker_id", c->d->cfg.worker_id_text));
}

/* A string member of o, "" when absent. */
static const char *str_of(json_t *o, const char *name)
{
	const char *s = json_string_value(json_object_get(o, name));

	return s ? s : "";
}

static json_t *guarantee_named(json_t *status, const char *name)
{
	json_t *g;
	size_t i;

	json_array_foreach(json_object_get(status, "guarantees"), i, g)
	{
		if (!strcmp(str_of(g, "name"), name))
			return g;
	}
	return NULL;
}

/* Appends text to buf (holding *used bytes), cut at its end. */
static void append(char *buf, size_t size, size_t *used, const char *text)
{
	if (*used < size - 1)
		*used += snprintf(buf + *used, size - *used, "%s", text);
	if (*used > size - 1)
		*used = size - 1;
}

/* One kind's entry of "kinds": covered by the first of its guarantees that
 * is held (or held in audit: the hooks decide, and only count), else the
 * reason of each. status NULL: nothing loaded, why says so. */
static json_t *kind_entry(int kind, json_t *status, const char *why, bool *covered)
{
	char reason[1024] = "";
	size_t used = 0;

	*covered = false;
	for (size_t i = 0; status && i < 2 && kind_guarantees[kind][i]; i++) {
		const char *name = kind_guarantees[kind][i];
		json_t *g = guarantee_named(status, name);
		bool held = json_is_true(json_object_get(g, "held"));
		bool audit = json_is_true(json_object_get(g, "audit"));

		if (held || audit) {
			*covered = true;
			return json_pack("{s:s,s:b,s:b,s:s,s:s}", "kind", egd_endpoint_kinds[kind],
					 "covered", 1, "audit", audit, "guarantee", name, "reason",
					 str_of(g, "reason"));
		}
		append(reason, sizeof(reason), &used, used ? "; " : "");
		append(reason, sizeof(reason), &used, name);
		append(reason, sizeof(reason), &used, ": ");
		append(reason, sizeof(reason), &used, g ? str_of(g, "reason") : "not reported");
	}
	return json_pack("{s:s,s:b,s:b,s:n,s:s}", "kind", egd_endpoint_kinds[kind], "covered", 0,
			 "audit", 0, "guarantee", "reason", status ? reason : why);
}

enum MHD_Result egd_h_ready(struct egd_call *c)
{
	json_t *status = NULL, *wanted = json_array(), *missing = json_array(),
	       *kinds = json_array(), *o;
	char why[EG_ERR_MAX] = "", first[EG_ERR_MAX] = "";
	const char *p = c->d->cfg.endpoint_kinds;
	int rc = egd_status_doc(c->d, &status);

	if (rc == -ENOENT)
		snprintf(why, sizeof(why), "nothing is loaded at %s", c->d->cfg.pin_dir);
	else if (rc)
		snprintf(why, sizeof(why), "status: %s", strerror(-rc));
	while (*p) {
		size_t len = strcspn(p, ",");
		int k = egd_endpoint_kind_find(p, len);
		bool covered;
		json_t *e;

		p += len + (p[len] == ',');
		if (k < 0) /* the config's parser let it through: never */
			continue;
		e = kind_entry(k, status, why, &covered);
		json_array_append_new(wanted, json_string(egd_endpoint_kinds[k]));
		if (!covered) {
			json_array_append_new(missing, json_string(egd_endpoint_kinds[k]));
			if (!first[0])
				snprintf(first, sizeof(first), "%s: %s", egd_endpoint_kinds[k],
					 str_of(e, "reason"));
		}
		json_array_append_new(kinds, e);
	}
	json_decref(status);
	o = json_pack("{s:i,s:b,s:o,s:o,s:o}", "schema_version", EG_JSON_SCHEMA_VERSION, "ready",
		      json_array_size(missing) == 0, "endpoint_kinds", wanted, "missing", missing,
		      "kinds", kinds);
	if (!o)
		return MHD_NO;
	if (!json_array_size(missing))
		return egd_reply_json(c, MHD_HTTP_OK, o);
	/* An error answer too (docs/api.md, "Errors"): error and reason on top,
	 * the reason naming the kinds left unenforced and why the first is. */
	{
		char line[EG_ERR_MAX] = "", text[EG_ERR_MAX];
		size_t used = 0, i;
		json_t *m;

		append(line, sizeof(line), &used, rc ? why : "not enforced");
		json_array_foreach(missing, i, m)
		{
			append(line, sizeof(line), &used, i ? ", " : ": ");
			append(line, sizeof(line), &used, json_string_value(m));
		}
		if (!rc) {
			append(line, sizeof(line), &used, " (");
			append(line, sizeof(line), &used, first);
			append(line, sizeof(line), &used, ")");
		}
		egd_printable(line, text, sizeof(text));
		json_object_set_new(o, "error", json_string(rc ? "not loaded" : "not ready"));
		json_object_set_new(o, "reason", json_string(text));
	}
	return egd_reply_json(c, MHD_HTTP_SERVICE_UNAVAILABLE, o);
}
