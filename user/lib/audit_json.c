// SPDX-License-Identifier: Apache-2.0
/* execgate/admin.h: the rollout report as a JSON document
 * (docs/schema/audit.schema.json): the aggregate's rows next to the
 * kernel's own totals, so a gap between them is visible. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <execgate/admin.h>
#include "core/audit_agg.h"
#include "core/duration.h"
#include "core/ids.h"
#include "lib/audit.h"
#include "lib/json.h"
#include "loader/maps/kreason.h"
#include "loader/maps/maps.h"
#include "loader/records/mode.h"

static json_t *time_or_null(uint64_t count, int64_t ns)
{
	char t[64];

	if (!count)
		return json_null();
	eg_json_rfc3339(ns, t);
	return json_string(t);
}

static int row_cmp(const void *pa, const void *pb)
{
	const struct eg_audit_row *a = *(const struct eg_audit_row *const *)pa,
				  *b = *(const struct eg_audit_row *const *)pb;
	int c;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	if ((c = strcmp(a->key.reason, b->key.reason)) || (c = strcmp(a->key.hook, b->key.hook)) ||
	    (c = memcmp(a->key.sandbox, b->key.sandbox, EG_ID_BYTES)) ||
	    (c = memcmp(a->key.comm, b->key.comm, EG_AUDIT_COMM_LEN)))
		return c;
	if (!a->key.exe || !b->key.exe)
		return !a->key.exe - !b->key.exe;
	return strcmp(a->key.exe, b->key.exe);
}

static json_t *row_json(const struct eg_audit_row *r)
{
	bool none = eg_id_is_zero(r->key.sandbox);

	return json_pack("{s:s,s:s,s:o,s:o,s:o,s:I,s:o,s:o}", "reason", r->key.reason, "hook",
			 r->key.hook, "sandbox", none ? json_null() : eg_json_uuid(r->key.sandbox),
			 "comm", eg_json_bytes(r->key.comm, EG_AUDIT_COMM_LEN), "exe",
			 r->key.exe ? eg_json_bytes(r->key.exe, EG_AUDIT_EXE_MAX) : json_null(),
			 "count", (json_int_t)r->count, "first_seen",
			 time_or_null(r->count, r->first_ns), "last_seen",
			 time_or_null(r->count, r->last_ns));
}

/* The rows last seen at or after since_ns, most counted first. Caller
 * holds a->mu. */
static json_t *rows_json(const struct eg_audit *a, int64_t since_ns)
{
	const struct eg_audit_row **v = calloc(a->agg.nrows + 1, sizeof(*v));
	json_t *rows = json_array();
	size_t n = 0;

	if (!v || !rows) {
		free(v);
		json_decref(rows);
		return NULL;
	}
	for (size_t i = 0; i < a->agg.nrows; i++)
		if (a->agg.rows[i].last_ns >= since_ns)
			v[n++] = &a->agg.rows[i];
	qsort(v, n, sizeof(*v), row_cmp);
	for (size_t i = 0; i < n; i++)
		if (json_array_append_new(rows, row_json(v[i]))) {
			json_decref(rows);
			rows = NULL;
			break;
		}
	free(v);
	return rows;
}

/* The kernel's side: the would-deny totals by (reason, hook), the events
 * the ring had no room for, the global mode. */
static int kernel_json(json_t *o, const char *pin_dir, char *err, size_t err_size)
{
	static __thread __u64 wd[EG_HOOK_SLOTS][EG_COUNTER_SLOTS];
	__u64 counters[EG_K_REASON_COUNT];
	struct eg_mode_census census;
	struct eg_maps maps;
	json_t *totals;
	int rc;

	rc = eg_maps_open(&maps, pin_dir, err, err_size);
	if (rc)
		return rc;
	rc = eg_would_deny_read(&maps, wd);
	if (rc)
		snprintf(err, err_size, "map eg_would_deny: reading: %s", strerror(-rc));
	if (!rc && (rc = eg_counters_read(&maps, counters)))
		snprintf(err, err_size, "map eg_counters: reading: %s", strerror(-rc));
	if (!rc && (rc = eg_mode_census_read(&maps, &census)))
		snprintf(err, err_size, "map eg_mode: reading: %s", strerror(-rc));
	eg_maps_close(&maps);
	if (rc)
		return rc;
	totals = json_array();
	for (__u32 h = 0; totals && h < EG_HOOK_SLOTS; h++)
		for (__u32 r = 0; r < EG_K_REASON_COUNT; r++)
			if (wd[h][r])
				json_array_append_new(totals, json_pack("{s:s,s:s,s:I}", "reason",
									eg_kreason_name(r), "hook",
									eg_hook_name(h), "count",
									(json_int_t)wd[h][r]));
	if (!totals || json_object_set_new(o, "would_deny", totals) ||
	    json_object_set_new(o, "events_dropped",
				json_integer((json_int_t)counters[EG_K_EVENT_DROPPED])) ||
	    json_object_set_new(o, "mode", json_string(eg_mode_name(census.global)))) {
		snprintf(err, err_size, "audit report: out of memory");
		return -ENOMEM;
	}
	return 0;
}

static int64_t wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int eg_audit_report(struct eg_audit *a, const char *pin_dir, const char *since, const char *source,
		    const char *worker_id, char **json, char *err, size_t err_size)
{
	int64_t now = wall_now(), window = 0, since_ns = INT64_MIN;
	char t[64];
	json_t *o, *rows, *other;
	int rc;

	*json = NULL;
	if (since && eg_duration_parse(since, &window)) {
		snprintf(err, err_size, "since %.32s: not a duration (e.g. 30s, 10m, 2h, 1d)",
			 since);
		return -EINVAL;
	}
	if (since)
		since_ns = window > now ? INT64_MIN : now - window;
	o = eg_json_doc();
	if (!o) {
		snprintf(err, err_size, "audit report: out of memory");
		return -ENOMEM;
	}
	eg_json_rfc3339(now, t);
	json_object_set_new(o, "source", json_string(source));
	json_object_set_new(o, "worker_id", worker_id ? json_string(worker_id) : json_null());
	json_object_set_new(o, "pin_dir", json_string(pin_dir));
	json_object_set_new(o, "generated", json_string(t));
	json_object_set_new(o, "since", since ? json_string(since) : json_null());
	if (since) {
		eg_json_rfc3339(since_ns == INT64_MIN ? 0 : since_ns, t);
		json_object_set_new(o, "since_time", json_string(t));
	} else {
		json_object_set_new(o, "since_time", json_null());
	}
	rc = kernel_json(o, pin_dir, err, err_size);
	if (rc) {
		json_decref(o);
		return rc;
	}
	pthread_mutex_lock(&a->mu);
	rows = rows_json(a, since_ns);
	other = json_pack("{s:I,s:o,s:o}", "count", (json_int_t)a->agg.other.count, "first_seen",
			  time_or_null(a->agg.other.count, a->agg.other.first_ns), "last_seen",
			  time_or_null(a->agg.other.count, a->agg.other.last_ns));
	json_object_set_new(o, "audit_events", json_integer((json_int_t)a->agg.events));
	json_object_set_new(o, "rows_max", json_integer((json_int_t)a->agg.max_rows));
	pthread_mutex_unlock(&a->mu);
	/* set_new takes its reference even when it fails, and NULL fails */
	if (json_object_set_new(o, "rows", rows) | json_object_set_new(o, "other", other) ||
	    !(*json = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER))) {
		json_decref(o);
		snprintf(err, err_size, "audit report: out of memory");
		return -ENOMEM;
	}
	json_decref(o);
	return 0;
}
