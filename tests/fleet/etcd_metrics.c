/* SPDX-License-Identifier: Apache-2.0 */
/* etcd's own figures and a defragmentation (tests/fleet/etcd_metrics.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fleet/etcd_metrics.h"

/* The value of an unlabelled sample "name value" in the text format. */
static bool sample_of(const char *text, const char *name, double *out)
{
	size_t n = strlen(name);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		char *end;

		if (strncmp(p, name, n) || p[n] != ' ')
			continue;
		*out = strtod(p + n + 1, &end);
		return end != p + n + 1;
	}
	return false;
}

int eg_test_etcd_metrics(const struct eg_test_etcd *env, size_t i, struct eg_test_etcd_metrics *m)
{
	char *t = eg_test_etcd_http(env, i, "/metrics", NULL, 3000L);
	bool ok;

	memset(m, 0, sizeof(*m));
	if (!t)
		return -1;
	ok = sample_of(t, "etcd_debugging_mvcc_watcher_total", &m->watchers) &&
	     sample_of(t, "etcd_debugging_mvcc_watch_stream_total", &m->watch_streams) &&
	     sample_of(t, "etcd_debugging_mvcc_keys_total", &m->keys) &&
	     sample_of(t, "etcd_mvcc_db_total_size_in_bytes", &m->db_bytes) &&
	     sample_of(t, "etcd_mvcc_db_total_size_in_use_in_bytes", &m->db_in_use_bytes) &&
	     sample_of(t, "process_cpu_seconds_total", &m->cpu_s) &&
	     sample_of(t, "process_resident_memory_bytes", &m->rss_bytes);
	free(t);
	if (!ok) {
		memset(m, 0, sizeof(*m));
		return -1;
	}
	return 0;
}

int eg_test_etcd_defrag(struct eg_test_etcd *env, size_t i, double *seconds)
{
	struct timespec a, b;
	int rc;

	if (i >= env->n || env->m[i].pid <= 0)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	rc = eg_test_etcdctl_on(env, env->m[i].client_url, 60, "defrag");
	clock_gettime(CLOCK_MONOTONIC, &b);
	*seconds = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	return rc;
}
