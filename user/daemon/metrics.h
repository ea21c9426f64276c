/* SPDX-License-Identifier: Apache-2.0 */
/* What GET /metrics shows that the daemon itself counts: admissions by
 * verdict, their latency, HTTP answers by status. Lock-free (relaxed
 * atomics): handlers on every pool thread bump them. The kernel counters,
 * map fill and token-cache figures are read from the worker handle at
 * scrape time. */
#ifndef EXECGATE_DAEMON_METRICS_H
#define EXECGATE_DAEMON_METRICS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <execgate/verdict.h>

struct egd;

#define EGD_LAT_BUCKETS 12

enum egd_op {
	EGD_OP_ADMIT = 0,
	EGD_OP_CHECK = 1,
	EGD_OP__COUNT,
};

/* HTTP status codes we count apart; everything else is "other". */
#define EGD_HTTP_CODES 11

struct egd_metrics {
	uint64_t verdicts[EGD_OP__COUNT][3][EG_REASON__COUNT];	 /* [op][verdict][reason] */
	uint64_t lat_bucket[EGD_OP__COUNT][EGD_LAT_BUCKETS + 1]; /* last: +Inf */
	uint64_t lat_sum_ns[EGD_OP__COUNT];
	uint64_t http[EGD_HTTP_CODES + 1];
	uint64_t connections_open;
	uint64_t connections_total;
	uint64_t connections_unprivileged;  /* open now, from callers without a role */
	uint64_t connections_refused;	    /* unprivileged beyond their share */
	uint64_t connections_admit;	    /* open now, from admit_group */
	uint64_t connections_admit_refused; /* admit_group beyond its budget */
	uint64_t key_reloads, key_reload_errors;
	/* the periodic check found the directory's key set other than
	 * memory's, and resynced (main.c) */
	uint64_t key_drifts;
	/* Established streams install and retire cut (eg_stream_cuts), by
	 * kind: [0] Unix, [1] TCP. */
	uint64_t streams_cut[2], streams_unreachable[2];
	/* Stale streams audit left running (eg_stream_cuts.would_cut). */
	uint64_t streams_would_cut;
	/* Revocations of that kind that failed (a step refused, a stale
	 * stream left): install/retire answered 500. */
	uint64_t stream_revocation_errors[2];
	/* PUT /v1/mode answered 200: [0] global, [1] a sandbox's */
	uint64_t mode_switches[2];
};

void egd_metrics_verdict(struct egd_metrics *m, enum egd_op op, const struct eg_decision *d,
			 uint64_t ns);
void egd_metrics_http(struct egd_metrics *m, unsigned status);
struct eg_stream_cuts;
void egd_metrics_streams(struct egd_metrics *m, const struct eg_stream_cuts *s);
void egd_metrics_mode_switched(struct egd_metrics *m, bool sandbox);
/* The whole exposition (Prometheus text format 0.0.4). */
void egd_metrics_write(struct egd *d, FILE *out);

#endif
