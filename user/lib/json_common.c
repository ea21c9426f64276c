// SPDX-License-Identifier: Apache-2.0
/* The small JSON forms every object uses (lib/json.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/ids.h"
#include "lib/json.h"

json_t *eg_json_doc(void)
{
	return json_pack("{s:i}", "schema_version", EG_JSON_SCHEMA_VERSION);
}

int eg_json_print(FILE *f, json_t *doc)
{
	char *text;
	int rc = 0;

	if (!doc)
		return -ENOMEM;
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	if (!text)
		return -ENOMEM;
	if (fprintf(f, "%s\n", text) < 0)
		rc = -EIO;
	free(text);
	return rc;
}

json_t *eg_json_uuid(const uint8_t id[EG_ID_BYTES])
{
	char u[EG_UUID_TEXT_LEN];

	eg_uuid_format(id, u);
	return json_string(u);
}

json_t *eg_json_token_id(const uint8_t id[EG_ID_BYTES])
{
	char hex[2 * EG_ID_BYTES + 1];

	for (int i = 0; i < EG_ID_BYTES; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	return json_string(hex);
}

json_t *eg_json_proc(const struct eg_process *p)
{
	return json_pack("{s:I,s:I,s:I,s:I}", "tgid", (json_int_t)p->tgid, "start_boottime_ns",
			 (json_int_t)p->start_boottime_ns, "exe_dev", (json_int_t)p->exe_dev,
			 "exe_ino", (json_int_t)p->exe_ino);
}

json_t *eg_json_bytes(const char *s, size_t max)
{
	size_t n = strnlen(s, max), o = 0;
	char *buf = malloc(4 * n + 1);
	json_t *v;

	if (!buf)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, 5, "\\x%02x", c);
	}
	buf[o] = '\0';
	v = json_string(buf);
	free(buf);
	return v;
}

json_t *eg_json_error(const char *error, const char *reason)
{
	return json_pack("{s:i,s:s,s:s}", "schema_version", EG_JSON_SCHEMA_VERSION, "error", error,
			 "reason", reason);
}

void eg_json_rfc3339(int64_t wall_ns, char out[64])
{
	time_t secs = (time_t)(wall_ns / 1000000000LL);
	struct tm tm;

	gmtime_r(&secs, &tm);
	snprintf(out, 64, "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (long long)((uint64_t)wall_ns % 1000000000ULL));
}
