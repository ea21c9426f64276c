// SPDX-License-Identifier: Apache-2.0
/* GET /metrics: Prometheus text exposition format 0.0.4. Every family has
 * HELP and TYPE lines; counters end in _total; `promtool check metrics`
 * accepts the output (tests/daemon). */
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <execgate/admin.h>
#include "daemon/daemon.h"
#include "daemon/events.h"
#include "daemon/metrics.h"
#include "fleetd/worker.h"
#include "execgate/text.h"

/* Upper bounds in seconds. A fresh admission is ~60 us of Ed25519 verify; a
 * cached one a few us: the buckets resolve both. */
static const double lat_bounds[EGD_LAT_BUCKETS] = {
    5e-6, 10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 10e-3, 100e-3, 1.0,
};

static const unsigned http_codes[EGD_HTTP_CODES] = {200, 201, 400, 403, 404, 405,
						    409, 413, 500, 503, 431};

static const char *const op_names[EGD_OP__COUNT] = {"admit", "check"};
static const char *const stream_kinds[2] = {"unix", "tcp"};

#define BUMP(p, n) atomic_fetch_add_explicit((_Atomic uint64_t *)(p), (n), memory_order_relaxed)
#define LOAD(p)	   atomic_load_explicit((_Atomic uint64_t *)(p), memory_order_relaxed)

void egd_metrics_verdict(struct egd_metrics *m, enum egd_op op, const struct eg_decision *d,
			 uint64_t ns)
{
	double s = (double)ns / 1e9;
	unsigned b = 0;

	if ((unsigned)d->verdict < 3 && (unsigned)d->reason < EG_REASON__COUNT)
		BUMP(&m->verdicts[op][d->verdict][d->reason], 1);
	while (b < EGD_LAT_BUCKETS && s > lat_bounds[b])
		b++;
	BUMP(&m->lat_bucket[op][b], 1);
	BUMP(&m->lat_sum_ns[op], ns);
}

void egd_metrics_mode_switched(struct egd_metrics *m, bool sandbox)
{
	BUMP(&m->mode_switches[sandbox ? 1 : 0], 1);
}

void egd_metrics_http(struct egd_metrics *m, unsigned status)
{
	unsigned i;

	for (i = 0; i < EGD_HTTP_CODES; i++)
		if (http_codes[i] == status)
			break;
	BUMP(&m->http[i], 1);
}

void egd_metrics_streams(struct egd_metrics *m, const struct eg_stream_cuts *s)
{
	BUMP(&m->streams_cut[0], s->unix_cut);
	BUMP(&m->streams_cut[1], s->tcp_cut);
	BUMP(&m->streams_unreachable[0], s->unix_unreachable);
	BUMP(&m->streams_unreachable[1], s->tcp_unreachable);
	BUMP(&m->streams_would_cut, s->would_cut);
	BUMP(&m->stream_revocation_errors[0], s->unix_error != 0);
	BUMP(&m->stream_revocation_errors[1], s->tcp_error != 0);
}

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A counter family by stream kind ("unix", "tcp"). */
static void by_kind(FILE *out, const char *name, const char *help, const uint64_t v[2])
{
	family(out, name, "counter", help);
	for (int k = 0; k < 2; k++)
		fprintf(out, "%s{kind=\"%s\"} %llu\n", name, stream_kinds[k],
			(unsigned long long)LOAD(&v[k]));
}

/* The connection families: one unlabelled sample each. */
static const struct {
	const char *name, *type, *help;
	size_t off; /* in struct egd_metrics */
} connection_rows[] = {
    {"execgate_connections_open", "gauge", "Client connections open now.",
     offsetof(struct egd_metrics, connections_open)},
    {"execgate_connections_total", "counter", "Client connections accepted.",
     offsetof(struct egd_metrics, connections_total)},
    {"execgate_connections_unprivileged", "gauge",
     "Client connections open now from callers without a role (403 on every request).",
     offsetof(struct egd_metrics, connections_unprivileged)},
    {"execgate_connections_refused_total", "counter",
     "Connections from callers without a role closed at once: beyond their share "
     "(max_connections / 8).",
     offsetof(struct egd_metrics, connections_refused)},
    {"execgate_connections_admit", "gauge",
     "Client connections open now from admit_group (at most max_connections - "
     "admin_reserve).",
     offsetof(struct egd_metrics, connections_admit)},
    {"execgate_connections_admit_refused_total", "counter",
     "Connections from admit_group closed at once: beyond max_connections - "
     "admin_reserve, which stay for root and admin_group.",
     offsetof(struct egd_metrics, connections_admit_refused)},
};

/* A family of one unlabelled sample. */
static void one(FILE *out, const char *name, const char *type, const char *help,
		unsigned long long v)
{
	family(out, name, type, help);
	fprintf(out, "%s %llu\n", name, v);
}

static void write_admissions(struct egd_metrics *m, FILE *out)
{
	family(out, "execgate_admissions_total", "counter",
	       "Verdicts answered over the API, by operation, verdict and reason.");
	for (int op = 0; op < EGD_OP__COUNT; op++)
		for (int v = 0; v < 3; v++)
			for (int r = 0; r < EG_REASON__COUNT; r++) {
				uint64_t n = LOAD(&m->verdicts[op][v][r]);

				if (!n)
					continue;
				fprintf(out,
					"execgate_admissions_total{op=\"%s\",verdict=\"%s\","
					"reason=\"%s\"} %llu\n",
					op_names[op], eg_verdict_name((enum eg_verdict)v),
					eg_reason_name((enum eg_reason)r), (unsigned long long)n);
			}
	family(out, "execgate_admission_duration_seconds", "histogram",
	       "Time the daemon spent on one admit or check (decode, verify or cache hit, "
	       "compare, grant).");
	for (int op = 0; op < EGD_OP__COUNT; op++) {
		uint64_t cum = 0;

		for (int b = 0; b <= EGD_LAT_BUCKETS; b++) {
			cum += LOAD(&m->lat_bucket[op][b]);
			if (b < EGD_LAT_BUCKETS)
				fprintf(out,
					"execgate_admission_duration_seconds_bucket{op=\"%s\","
					"le=\"%g\"} %llu\n",
					op_names[op], lat_bounds[b], (unsigned long long)cum);
			else
				fprintf(out,
					"execgate_admission_duration_seconds_bucket{op=\"%s\","
					"le=\"+Inf\"} %llu\n",
					op_names[op], (unsigned long long)cum);
		}
		fprintf(out, "execgate_admission_duration_seconds_sum{op=\"%s\"} %.9f\n",
			op_names[op], (double)LOAD(&m->lat_sum_ns[op]) / 1e9);
		fprintf(out, "execgate_admission_duration_seconds_count{op=\"%s\"} %llu\n",
			op_names[op], (unsigned long long)cum);
	}
}

static void would_deny_line(const char *reason, const char *hook, unsigned long long n, void *ctx)
{
	fprintf(ctx, "execgate_would_deny_total{reason=\"%s\",hook=\"%s\"} %llu\n", reason, hook,
		n);
}

/* The modes (docs/design.md, "Modes"): the global one, the sandboxes in
 * each, the switches, and what audit let through. */
static void write_modes(struct egd *d, FILE *out)
{
	char mode[8], err[EG_ERR_MAX];
	unsigned switches = 0, enforce = 0, audit = 0;

	if (eg_mode_get(d->cfg.pin_dir, mode, &switches, &enforce, &audit, err, sizeof(err)))
		return; /* not loaded: no mode to report */
	family(out, "execgate_mode", "gauge", "The global mode: 1 for the one in effect.");
	fprintf(out, "execgate_mode{mode=\"enforce\"} %d\n", !strcmp(mode, "enforce"));
	fprintf(out, "execgate_mode{mode=\"audit\"} %d\n", !strcmp(mode, "audit"));
	family(out, "execgate_sandboxes_by_mode", "gauge",
	       "Sandboxes whose decisions are made in each mode (their own, else the global).");
	fprintf(out, "execgate_sandboxes_by_mode{mode=\"enforce\"} %u\n", enforce);
	fprintf(out, "execgate_sandboxes_by_mode{mode=\"audit\"} %u\n", audit);
	family(out, "execgate_mode_switches_total", "counter",
	       "Switches of the global mode since the maps were made (any caller).");
	fprintf(out, "execgate_mode_switches_total %u\n", switches);
	family(out, "execgate_api_mode_switches_total", "counter",
	       "PUT /v1/mode switches answered, by scope.");
	fprintf(out, "execgate_api_mode_switches_total{scope=\"global\"} %llu\n",
		(unsigned long long)d->metrics.mode_switches[0]);
	fprintf(out, "execgate_api_mode_switches_total{scope=\"sandbox\"} %llu\n",
		(unsigned long long)d->metrics.mode_switches[1]);
	family(out, "execgate_would_deny_total", "counter",
	       "Denials audit mode let through, by kernel reason and hook (eg_would_deny).");
	eg_mode_would_deny(d->cfg.pin_dir, would_deny_line, out, err, sizeof(err));
}

static void write_kernel(struct egd *d, FILE *out)
{
	uint64_t c[EG_KREASON_MAX] = {0};
	struct eg_map_fill fill[16];
	int reasons = eg_worker_counters(d->worker, c, EG_KREASON_MAX);
	size_t n;

	if (reasons >= 0) {
		family(out, "execgate_kernel_verdicts_total", "counter",
		       "Verdicts of the BPF programs, by kernel reason (eg_counters).");
		for (uint32_t k = 0; k < (uint32_t)reasons && k < EG_KREASON_MAX; k++)
			if (k != EG_KREASON_EVENT_DROPPED)
				fprintf(out, "execgate_kernel_verdicts_total{reason=\"%s\"} %llu\n",
					eg_kreason_name(k), (unsigned long long)c[k]);
		family(out, "execgate_ringbuf_dropped_events_total", "counter",
		       "Denial events the kernel could not put in the eg_events ring buffer.");
		fprintf(out, "execgate_ringbuf_dropped_events_total %llu\n",
			(unsigned long long)c[EG_KREASON_EVENT_DROPPED]);
	}
	n = eg_worker_map_fill(d->worker, fill, sizeof(fill) / sizeof(fill[0]));
	family(out, "execgate_map_entries", "gauge", "Entries in each pinned hash map.");
	for (size_t i = 0; i < n; i++)
		fprintf(out, "execgate_map_entries{map=\"%s\"} %u\n", fill[i].name,
			fill[i].entries);
	family(out, "execgate_map_max_entries", "gauge", "Capacity of each pinned hash map.");
	for (size_t i = 0; i < n; i++)
		fprintf(out, "execgate_map_max_entries{map=\"%s\"} %u\n", fill[i].name,
			fill[i].max_entries);
}

static void write_cache(struct egd *d, FILE *out)
{
	struct eg_worker_stats st;

	eg_worker_stats(d->worker, &st);
	family(out, "execgate_token_cache_hits_total", "counter",
	       "Signature checks served by the verified-token cache.");
	fprintf(out, "execgate_token_cache_hits_total %llu\n", (unsigned long long)st.cache_hits);
	family(out, "execgate_token_cache_misses_total", "counter",
	       "Signature checks the verified-token cache could not serve.");
	fprintf(out, "execgate_token_cache_misses_total %llu\n",
		(unsigned long long)st.cache_misses);
	family(out, "execgate_token_cache_entries", "gauge", "Tokens in the verified-token cache.");
	fprintf(out, "execgate_token_cache_entries %zu\n", st.cache_entries);
	family(out, "execgate_token_cache_capacity", "gauge",
	       "Capacity of the verified-token cache.");
	fprintf(out, "execgate_token_cache_capacity %zu\n", st.cache_capacity);
	family(out, "execgate_keys", "gauge", "Verification keys held.");
	fprintf(out, "execgate_keys %zu\n", st.keys);
}

/* The key set held, by its digest (docs/api.md, "Key-set digest"), and how
 * often the periodic check found the directory drifted from it. */
static void write_key_set(struct egd *d, FILE *out)
{
	char digest[EG_KEYS_DIGEST_TEXT_LEN];

	eg_worker_keys_digest(d->worker, digest);
	family(
	    out, "execgate_key_set_info", "gauge",
	    "The verification key set held, by its digest (BLAKE2b-256 of the sorted key list).");
	fprintf(out, "execgate_key_set_info{digest=\"%s\"} 1\n", digest);
	one(out, "execgate_key_set_drift_total", "counter",
	    "Times the periodic check found the key directory holding other keys than memory "
	    "(a change no watch reported), and reloaded it.",
	    (unsigned long long)LOAD(&d->metrics.key_drifts));
}

void egd_metrics_write(struct egd *d, FILE *out)
{
	struct egd_metrics *m = &d->metrics;
	struct egd_events_stats es;

	family(out, "execgate_info", "gauge", "Build and worker of this daemon.");
	fprintf(out, "execgate_info{version=\"%s\",worker_id=\"%s\"} 1\n", eg_version(),
		d->cfg.worker_id_text);
	write_admissions(m, out);
	write_cache(d, out);
	write_kernel(d, out);
	write_modes(d, out);

	family(out, "execgate_http_responses_total", "counter", "HTTP answers by status code.");
	for (unsigned i = 0; i <= EGD_HTTP_CODES; i++) {
		uint64_t n = LOAD(&m->http[i]);

		if (i < EGD_HTTP_CODES)
			fprintf(out, "execgate_http_responses_total{code=\"%u\"} %llu\n",
				http_codes[i], (unsigned long long)n);
		else
			fprintf(out, "execgate_http_responses_total{code=\"other\"} %llu\n",
				(unsigned long long)n);
	}
	for (size_t i = 0; i < sizeof(connection_rows) / sizeof(connection_rows[0]); i++)
		one(out, connection_rows[i].name, connection_rows[i].type, connection_rows[i].help,
		    LOAD((const char *)m + connection_rows[i].off));
	family(out, "execgate_key_reloads_total", "counter",
	       "Key-set reloads (SIGHUP, key directory changes), by result.");
	fprintf(out, "execgate_key_reloads_total{result=\"ok\"} %llu\n",
		(unsigned long long)LOAD(&m->key_reloads));
	fprintf(out, "execgate_key_reloads_total{result=\"error\"} %llu\n",
		(unsigned long long)LOAD(&m->key_reload_errors));
	write_key_set(d, out);

	by_kind(out, "execgate_streams_cut_total",
		"Established streams of a replaced or retired epoch that install or retire shut "
		"down, by kind.",
		m->streams_cut);
	one(out, "execgate_streams_would_cut_total", "counter",
	    "Stale streams of a replaced or retired epoch that install or retire found and "
	    "left running because the sandbox decided in audit (Unix and TCP).",
	    (unsigned long long)LOAD(&m->streams_would_cut));
	by_kind(out, "execgate_streams_unreachable_total",
		"Stale streams install or retire found but could not reach (the holder exited "
		"or refused pidfd_getfd), by kind.",
		m->streams_unreachable);
	by_kind(out, "execgate_stream_revocation_errors_total",
		"Installs and retires whose revocation of that kind failed (a step such as "
		"setns or pidfd_getfd refused, or a stale stream left running), by kind.",
		m->stream_revocation_errors);

	egd_events_stats(d->events, &es);
	family(out, "execgate_event_readers", "gauge", "Clients reading GET /v1/events now.");
	fprintf(out, "execgate_event_readers %zu\n", es.readers);
	family(out, "execgate_event_streams_refused_total", "counter",
	       "GET /v1/events answered 503: beyond max_event_streams_per_uid, or beyond "
	       "max_event_streams for callers other than root and admin_group.");
	fprintf(out, "execgate_event_streams_refused_total %llu\n", (unsigned long long)es.refused);
	family(out, "execgate_events_total", "counter", "Denial events read from the ring buffer.");
	fprintf(out, "execgate_events_total %llu\n", (unsigned long long)es.events);
	family(out, "execgate_event_stream_skipped_total", "counter",
	       "Events slow readers of GET /v1/events missed (the daemon keeps the newest "
	       "4096 lines).");
	fprintf(out, "execgate_event_stream_skipped_total %llu\n", (unsigned long long)es.skipped);
	if (d->fleet)
		eg_fleet_worker_metrics(d->fleet, out);
}
