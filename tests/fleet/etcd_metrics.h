/* SPDX-License-Identifier: Apache-2.0 */
/* What one member of a test cluster (tests/fleet/etcd_env.h) says on its
 * /metrics (the client URL; under TLS with the env's client certificate),
 * and a defragmentation of one member. The names are those of etcd 3.4
 * (Debian 12's 3.4.23 exports all of them). */
#ifndef EXECGATE_TESTS_FLEET_ETCD_METRICS_H
#define EXECGATE_TESTS_FLEET_ETCD_METRICS_H

#include "fleet/etcd_env.h"

struct eg_test_etcd_metrics {
	double watchers;	/* etcd_debugging_mvcc_watcher_total */
	double watch_streams;	/* etcd_debugging_mvcc_watch_stream_total */
	double keys;		/* etcd_debugging_mvcc_keys_total */
	double db_bytes;	/* etcd_mvcc_db_total_size_in_bytes */
	double db_in_use_bytes; /* etcd_mvcc_db_total_size_in_use_in_bytes */
	double cpu_s;		/* process_cpu_seconds_total */
	double rss_bytes;	/* process_resident_memory_bytes */
};

/* Member i's figures into m: 0, or -1 (the member is down or did not
 * answer, or a figure is missing) with m zeroed. */
int eg_test_etcd_metrics(const struct eg_test_etcd *env, size_t i, struct eg_test_etcd_metrics *m);
/* etcdctl defrag on member i alone (it blocks that member while it runs),
 * its duration into *seconds. 0 or -1. */
int eg_test_etcd_defrag(struct eg_test_etcd *env, size_t i, double *seconds);

#endif
