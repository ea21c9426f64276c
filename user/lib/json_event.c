// SPDX-License-Identifier: Apache-2.0
/* Denial events and the key set (lib/json.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "core/ids.h"
#include "lib/json.h"
#include "execgate/text.h"

json_t *eg_json_event(const struct eg_denial *d, const char *worker_id)
{
	char when[64];
	json_t *o;

	eg_json_rfc3339(d->realtime_ns, when);
	o = json_pack("{s:i,s:s,s:s,s:I,s:o,s:s,s:s,s:I,s:I,s:o,s:o,s:I}", "schema_version",
		      EG_JSON_SCHEMA_VERSION, "kind", "denial", "time", when, "time_unix_ns",
		      (json_int_t)d->realtime_ns, "worker_id",
		      worker_id ? json_string(worker_id) : json_null(), "hook",
		      eg_hook_name(d->hook), "reason", eg_kreason_name(d->reason), "pid",
		      (json_int_t)d->pid, "tid", (json_int_t)d->tid, "comm",
		      eg_json_bytes(d->comm, EG_COMM_LEN), "sandbox", eg_json_uuid(d->sandbox),
		      "epoch", (json_int_t)d->epoch);
	if (!o)
		return NULL;
	/* audit mode let it through (docs/design.md, "Modes") */
	json_object_set_new(o, "audit", json_boolean(d->audit));
	switch (d->dest) {
	case EG_DENIAL_DEST_UNIX:
		json_object_set_new(o, "path", eg_json_bytes(d->path, EG_UNIX_PATH_MAX));
		break;
	case EG_DENIAL_DEST_VSOCK:
		json_object_set_new(o, "vsock",
				    json_pack("{s:I,s:I}", "cid", (json_int_t)d->vsock.cid, "port",
					      (json_int_t)d->vsock.port));
		break;
	case EG_DENIAL_DEST_INET: {
		char addr[EG_INET_TEXT_MAX];

		/* A TCP/UDP denial: the ServicePort destination asked for. */
		json_object_set_new(o, "inet",
				    json_pack("{s:s,s:I,s:s}", "addr",
					      eg_inet_format(d->inet.family, d->inet.addr, addr),
					      "port", (json_int_t)d->inet_port, "proto",
					      eg_proto_name(d->inet_proto)));
		break;
	}
	case EG_DENIAL_DEST_NONE:
		break;
	}
	return o;
}

json_t *eg_json_keys(json_t **keys)
{
	json_t *o = eg_json_doc();

	*keys = json_array();
	if (!o || !*keys || json_object_set_new(o, "keys", *keys)) {
		json_decref(o);
		*keys = NULL;
		return NULL;
	}
	return o;
}

json_t *eg_json_lines(const char *text)
{
	json_t *arr = json_array();

	while (arr && *text) {
		size_t n = strcspn(text, "\n");

		if (json_array_append_new(arr, eg_json_bytes(text, n))) {
			json_decref(arr);
			return NULL;
		}
		text += n + (text[n] ? 1 : 0);
	}
	return arr;
}

int eg_json_key_add(json_t *keys, const char *kid, const uint8_t pk[32])
{
	char hex[65];

	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", pk[i]);
	return json_array_append_new(keys, json_pack("{s:s,s:s}", "kid", kid, "public_key", hex))
		   ? -ENOMEM
		   : 0;
}

json_t *eg_json_key_change(const char *kid, const char *what, bool value)
{
	return json_pack("{s:i,s:s,s:b}", "schema_version", EG_JSON_SCHEMA_VERSION, "kid", kid,
			 what, value);
}
