// SPDX-License-Identifier: Apache-2.0
/* What the fleet's worker side shows (fleetd/worker.h): GET /v1/status's
 * "fleet" member and the execgate_fleet_* families of /metrics, both read
 * under the state's lock. */
#include <stdio.h>
#include <time.h>
#include "fleet/etcd.h"
#include "fleetd/worker_impl.h"

static const char *sel_reason(unsigned i)
{
	if (i < EG_SEL__COUNT)
		return eg_sel_err_name(i);
	return i == EG_FW_SEL_BAD_KEY	 ? "bad-etcd-key"
	       : i == EG_FW_SEL_SANDBOX	 ? "wrong-sandbox"
	       : i == EG_FW_SEL_AUDIENCE ? "wrong-audience"
	       : i == EG_FW_SEL_NO_AUD	 ? "no-audience"
					 : "older";
}

static const char *ksd_reason(unsigned i)
{
	if (i < EG_KSD__COUNT)
		return eg_ksd_err_name(i);
	return i == EG_FW_KSD_EQUAL	? "refuse-equal"
	       : i == EG_FW_KSD_OLDER	? "refuse-older"
	       : i == EG_FW_KSD_EXPIRED ? "refuse-expired"
	       : i == EG_FW_KSD_FLOOR	? "refuse-floor"
					: "apply-failed";
}

/* Sandboxes with a selection in force: only those have an entry. */
static size_t in_force(const struct eg_fleet_worker *f)
{
	return f->n_sels;
}

/* Why the worker is not ready to act on the fleet, NULL when it is: no
 * key set applied yet, or the applied one is past its signed expiry. */
static const char *not_ready(const struct eg_fleet_worker *f)
{
	if (!f->keyset_version)
		return "no-keyset";
	if (eg_fw_keyset_stale(f, (int64_t)time(NULL)))
		return "keyset-stale";
	return NULL;
}

static int64_t since_update(const struct eg_fleet_worker *f)
{
	return f->last_update_ns ? (int64_t)((eg_fw_mono_ns() - f->last_update_ns) / 1000000000ull)
				 : -1;
}

json_t *eg_fleet_worker_status(struct eg_fleet_worker *d)
{
	struct eg_fleet_worker *f = d;
	json_t *o, *rs, *rk, *refused;
	const char *nr;
	int64_t since;
	uint64_t logins;

	/* the session has its own lock: read outside the state's */
	logins = eg_etcd_session_logins(d->etcd_session);
	pthread_mutex_lock(&f->lock);
	rs = json_object();
	rk = json_object();
	for (unsigned i = 1; i < EG_FW_SEL_REASONS; i++)
		json_object_set_new(rs, sel_reason(i), json_integer((json_int_t)f->refused_sel[i]));
	for (unsigned i = 1; i < EG_FW_KSD_REASONS; i++)
		json_object_set_new(rk, ksd_reason(i), json_integer((json_int_t)f->refused_ksd[i]));
	refused = json_pack("{s:o,s:o}", "selection", rs, "keyset", rk);
	since = since_update(f);
	nr = not_ready(f);
	o = json_pack(
	    "{s:s,s:s,s:b,s:s?,s:I,s:I,s:I,s:o,s:I,s:I,s:I,s:I,s:I,s:o}", "prefix", d->prefix,
	    "endpoints", d->endpoints, "connected", f->connected, "endpoint",
	    f->endpoint[0] ? f->endpoint : NULL, "applied_revision", (json_int_t)f->applied_rev,
	    "store_revision", (json_int_t)f->store_rev, "lag",
	    (json_int_t)(f->store_rev > f->applied_rev ? f->store_rev - f->applied_rev : 0),
	    "seconds_since_update", since < 0 ? json_null() : json_integer(since), "keyset_version",
	    (json_int_t)f->keyset_version, "selections", (json_int_t)in_force(f), "reconciles",
	    (json_int_t)f->reconciles, "compactions", (json_int_t)f->compactions, "acks_written",
	    (json_int_t)f->acks_written, "refused", refused);
	if (o) {
		json_object_set_new(o, "ready", json_boolean(!nr));
		json_object_set_new(o, "not_ready", nr ? json_string(nr) : json_null());
		json_object_set_new(o, "keyset_expires_at",
				    f->keyset_expires_at
					? json_integer((json_int_t)f->keyset_expires_at)
					: json_null());
		json_object_set_new(o, "keyset_stale",
				    json_boolean(eg_fw_keyset_stale(f, (int64_t)time(NULL))));
		json_object_set_new(o, "keyset_min_version",
				    json_integer((json_int_t)f->keyset_min_version));
		json_object_set_new(o, "skipped_keys", json_integer((json_int_t)f->skipped_keys));
		json_object_set_new(o, "selections_dropped", json_integer((json_int_t)f->dropped));
		json_object_set_new(o, "store_rewinds", json_integer((json_int_t)f->store_rewinds));
		json_object_set_new(o, "etcd_logins", json_integer((json_int_t)logins));
		json_object_set_new(o, "prefix_keys", json_integer((json_int_t)f->prefix_keys));
		json_object_set_new(o, "prefix_keys_limit", json_integer(EG_FW_MAX_PREFIX_KEYS));
		json_object_set_new(o, "periodic_reads_skipped",
				    json_integer((json_int_t)f->periodic_skipped));
		json_object_set_new(o, "last_rewind",
				    f->store_rewinds ? json_pack("{s:I,s:s}", "at",
								 (json_int_t)f->last_rewind_at,
								 "what", f->last_rewind)
						     : json_null());
	}
	pthread_mutex_unlock(&f->lock);
	return o;
}

static void gauge(FILE *out, const char *name, const char *help, long long v)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n%s %lld\n", name, help, name, name, v);
}

static void counter(FILE *out, const char *name, const char *help, uint64_t v)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name, name,
		(unsigned long long)v);
}

void eg_fleet_worker_metrics(struct eg_fleet_worker *d, FILE *out)
{
	struct eg_fleet_worker *f = d;
	const char *r = "execgate_fleet_refused_documents_total";
	uint64_t logins = eg_etcd_session_logins(d->etcd_session);

	pthread_mutex_lock(&f->lock);
	gauge(out, "execgate_fleet_applied_revision", "the etcd revision this worker has applied",
	      f->applied_rev);
	gauge(out, "execgate_fleet_store_revision", "the newest etcd revision the worker has seen",
	      f->store_rev);
	gauge(out, "execgate_fleet_lag_revisions", "store revision minus applied revision",
	      f->store_rev > f->applied_rev ? f->store_rev - f->applied_rev : 0);
	gauge(out, "execgate_fleet_seconds_since_update",
	      "seconds since etcd last answered the watcher (-1: never)", since_update(f));
	fprintf(out, "# HELP execgate_fleet_connected 1 while the watcher is connected to etcd, "
		     "labelled with the endpoint that answered last\n"
		     "# TYPE execgate_fleet_connected gauge\n"
		     "execgate_fleet_connected{endpoint=\"");
	for (const char *p = f->endpoint; *p; p++)
		if (*p != '"' && *p != '\\' && *p >= ' ')
			fputc(*p, out);
	fprintf(out, "\"} %d\n", f->connected ? 1 : 0);
	gauge(out, "execgate_fleet_keyset_version", "the key-set version applied",
	      (long long)f->keyset_version);
	gauge(out, "execgate_fleet_selections", "sandboxes with a selection in force",
	      (long long)in_force(f));
	gauge(out, "execgate_fleet_ready",
	      "1 when a key set is applied and not past its signed expiry", not_ready(f) ? 0 : 1);
	gauge(out, "execgate_fleet_keyset_stale",
	      "1 while the applied key set is past its signed expiry",
	      eg_fw_keyset_stale(f, (int64_t)time(NULL)) ? 1 : 0);
	gauge(out, "execgate_fleet_keyset_expires_at",
	      "the applied key set's signed expiry, unix seconds (0: none, a v1)",
	      (long long)f->keyset_expires_at);
	counter(out, "execgate_fleet_skipped_keys_total",
		"etcd keys that could not be decoded (a NUL byte), skipped alone", f->skipped_keys);
	counter(out, "execgate_fleet_selections_dropped_total",
		"selections in force dropped because their key was withdrawn", f->dropped);
	gauge(out, "execgate_fleet_prefix_keys",
	      "keys under the worker's selections prefix at the last full read",
	      (long long)f->prefix_keys);
	counter(out, "execgate_fleet_periodic_reads_skipped_total",
		"periodic reads not made because the prefix holds more keys than the limit",
		f->periodic_skipped);
	counter(out, "execgate_fleet_store_rewinds_total",
		"times the store's revision or cluster id went back (a restore): everything "
		"read and judged again",
		f->store_rewinds);
	counter(out, "execgate_fleet_reconciles_total", "full reads of the worker's prefix",
		f->reconciles);
	counter(out, "execgate_fleet_compactions_total",
		"watches canceled by a compaction, then read again", f->compactions);
	counter(out, "execgate_fleet_acks_written_total", "acks written to etcd", f->acks_written);
	counter(out, "execgate_fleet_ack_errors_total", "ack writes that failed (retried)",
		f->ack_errors);
	counter(out, "execgate_fleet_retired_total", "records the watcher retired", f->retired);
	counter(out, "execgate_fleet_etcd_logins_total",
		"tokens etcd gave this worker (one serves its three etcd handles)", logins);
	fprintf(out,
		"# HELP %s documents read from etcd and refused, by document and reason\n"
		"# TYPE %s counter\n",
		r, r);
	for (unsigned i = 1; i < EG_FW_SEL_REASONS; i++)
		fprintf(out, "%s{document=\"selection\",reason=\"%s\"} %llu\n", r, sel_reason(i),
			(unsigned long long)f->refused_sel[i]);
	for (unsigned i = 1; i < EG_FW_KSD_REASONS; i++)
		fprintf(out, "%s{document=\"keyset\",reason=\"%s\"} %llu\n", r, ksd_reason(i),
			(unsigned long long)f->refused_ksd[i]);
	pthread_mutex_unlock(&f->lock);
}
