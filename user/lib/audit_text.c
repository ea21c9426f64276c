// SPDX-License-Identifier: Apache-2.0
/* execgate/admin.h: a rollout report document as text, one row a line.
 * The document may come over a socket: every string is printed through
 * eg_audit_escape (core/audit_agg.h), so nothing in it can break a line
 * or a column. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <execgate/admin.h>
#include "core/audit_agg.h"

#define TOKEN_MAX (4 * EG_AUDIT_EXE_MAX + 1)

static const char *tok(json_t *o, const char *member, char *buf)
{
	json_t *v = json_object_get(o, member);

	if (json_is_null(v))
		return "-";
	if (json_is_string(v))
		return eg_audit_escape(json_string_value(v), EG_AUDIT_EXE_MAX, buf, TOKEN_MAX);
	return "?";
}

static unsigned long long num(json_t *o, const char *member)
{
	json_t *v = json_object_get(o, member);

	return json_is_integer(v) && json_integer_value(v) > 0
		   ? (unsigned long long)json_integer_value(v)
		   : 0;
}

int eg_audit_print(FILE *f, const char *json, char *err, size_t err_size)
{
	static __thread char a[TOKEN_MAX], b[TOKEN_MAX], c[TOKEN_MAX], d[TOKEN_MAX];
	json_t *o = json_loads(json, 0, NULL), *rows, *totals, *other, *row;
	size_t i;

	rows = json_object_get(o, "rows");
	totals = json_object_get(o, "would_deny");
	other = json_object_get(o, "other");
	if (!json_is_object(o) || !json_is_array(rows) || !json_is_array(totals) ||
	    !json_is_object(other)) {
		json_decref(o);
		snprintf(err, err_size, "audit report: not a report document");
		return -EINVAL;
	}
	fprintf(f, "audit report from %s, worker %s, mode %s, generated %s\n", tok(o, "source", a),
		tok(o, "worker_id", b), tok(o, "mode", c), tok(o, "generated", d));
	if (json_is_string(json_object_get(o, "since")))
		fprintf(f, "rows last seen since %s (%s ago); counts are since the report began\n",
			tok(o, "since_time", a), tok(o, "since", b));
	fprintf(f, "%-8s %-24s %-16s %-36s %-16s %s\n", "COUNT", "REASON", "HOOK", "SANDBOX",
		"COMM", "EXE FIRST-SEEN LAST-SEEN");
	json_array_foreach(rows, i, row)
	{
		fprintf(f, "%-8llu %-24s %-16s %-36s ", num(row, "count"), tok(row, "reason", a),
			tok(row, "hook", b), tok(row, "sandbox", c));
		fprintf(f, "%-16s ", tok(row, "comm", a));
		fprintf(f, "%s ", tok(row, "exe", a));
		fprintf(f, "%s %s\n", tok(row, "first_seen", b), tok(row, "last_seen", c));
	}
	if (num(other, "count"))
		fprintf(f, "%-8llu other: events of further rows (more than %llu), last seen %s\n",
			num(other, "count"), num(o, "rows_max"), tok(other, "last_seen", a));
	fprintf(f, "kernel would-deny totals since load (all events, seen or not):\n");
	json_array_foreach(totals, i, row)
	{
		fprintf(f, "%-8llu %-24s %s\n", num(row, "count"), tok(row, "reason", a),
			tok(row, "hook", b));
	}
	fprintf(f, "audit events read: %llu; events dropped, the ring full: %llu\n",
		num(o, "audit_events"), num(o, "events_dropped"));
	json_decref(o);
	return 0;
}
