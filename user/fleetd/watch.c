// SPDX-License-Identifier: Apache-2.0
/* The fleet's three threads (fleetd/worker.h). The watcher reads this
 * worker's selections and the key set in full (start-up, after a key set
 * applied, a compaction or a store that went back), then watches both from
 * the read's revision + 1; a broken stream resumes from the applied
 * revision + 1 on whatever endpoint answers, with a jittered backoff
 * (fleet/backoff.h), once a probe showed that the store did not go back. The reconciler reads both
 * in full every etcd_reconcile_interval seconds beside the watch. The acker writes
 * <prefix>/acks/<self>/<sandbox> whenever a sandbox's state changed. Each has its own etcd handle,
 * so a slow or absent etcd never holds a PUT, and never an admission. */
#include <errno.h>
#include <malloc.h>
#include <string.h>
#include <time.h>
#include <sodium.h>
#include "fleet/backoff.h"
#include "fleet/etcd.h"
#include "fleetd/worker_impl.h"

#define BACKOFF_MIN_MS	100
#define BACKOFF_MAX_MS	5000
#define ETCD_TIMEOUT_MS 2000
/* How often the acker compares each written ack with the truth
 * (fleetd/ack.c, eg_fw_ack_recheck): the bound on how long an ack may lag
 * a change made by another process. */
#define ACK_RECHECK_NS (1000ull * 1000 * 1000)

void eg_fw_heard(struct eg_fleet_worker *d, struct eg_etcd *e, int64_t revision)
{
	struct eg_fleet_worker *f = d;

	pthread_mutex_lock(&f->lock);
	if (revision > f->store_rev)
		f->store_rev = revision;
	f->last_update_ns = eg_fw_mono_ns();
	f->connected = true;
	/* each handle counts the keys it skipped: status shows the sum */
	for (size_t i = 0; i < sizeof(f->skipped_by) / sizeof(f->skipped_by[0]); i++)
		if (!f->skipped_by[i].e || f->skipped_by[i].e == e) {
			f->skipped_by[i].e = e;
			f->skipped_by[i].n = eg_etcd_skipped_keys(e);
			break;
		}
	f->skipped_keys = 0;
	for (size_t i = 0; i < sizeof(f->skipped_by) / sizeof(f->skipped_by[0]); i++)
		f->skipped_keys += f->skipped_by[i].n;
	snprintf(f->endpoint, sizeof(f->endpoint), "%s", eg_etcd_endpoint(e));
	pthread_mutex_unlock(&f->lock);
}

static int64_t store_rev(struct eg_fleet_worker *d)
{
	int64_t r;

	pthread_mutex_lock(&d->lock);
	r = d->store_rev;
	pthread_mutex_unlock(&d->lock);
	return r;
}

static void set_applied(struct eg_fleet_worker *d, int64_t revision)
{
	pthread_mutex_lock(&d->lock);
	if (revision > d->applied_rev)
		d->applied_rev = revision;
	pthread_mutex_unlock(&d->lock);
}

static void lost(struct eg_fleet_worker *d, const char *what, const char *err)
{
	struct eg_fleet_worker *f = d;
	bool was, first;

	pthread_mutex_lock(&f->lock);
	was = f->connected;
	first = !f->watch_errors;
	f->connected = false;
	f->watch_errors++;
	pthread_mutex_unlock(&f->lock);
	/* A warning once per outage, the first one at start-up included (an
	 * etcd that is never reached, a refused certificate or password);
	 * each retry after it at info. */
	eg_fw_log(d, was || first ? 4 : 6,
		  "fleet: %s: %s (admission goes on from local state; retrying)", what, err);
}

/* Sleeps ms, or less when stopping. */
static void nap(struct eg_fleet_worker *d, unsigned ms)
{
	while (ms && !d->stopping) {
		unsigned step = ms < 100 ? ms : 100;
		struct timespec ts = {0, (long)step * 1000000L};

		nanosleep(&ts, NULL);
		ms -= step;
	}
}

static void apply_kv(struct eg_fleet_worker *d, const struct eg_etcd_kv *kv, bool deleted,
		     bool count)
{
	struct eg_fleet_worker *f = d;

	if (deleted) {
		eg_fleet_worker_deleted(d, kv->key, kv->mod_revision);
		return;
	}
	if (!strcmp(kv->key, f->key_keyset))
		eg_fw_apply_keyset(d, kv->key, kv->value, kv->value_len, kv->mod_revision, count);
	else
		eg_fw_apply_selection(d, kv->key, kv->value, kv->value_len, kv->mod_revision,
				      count);
}

/* Reads the key set, then the selections (so that they verify under the
 * newest keys), applies both; *from gets the revision to watch from.
 * count: refusals are counted (false beside a running watch, which counts
 * them itself). */
static int reconcile(struct eg_fleet_worker *d, struct eg_etcd *e, bool count, int64_t since,
		     int64_t *from, char *err, size_t err_size)
{
	struct eg_fleet_worker *f = d;
	struct eg_etcd_range ks = {0}, sels = {0};
	uint64_t rewinds;
	int64_t before;
	size_t n_keys;
	int rc;

	pthread_mutex_lock(&f->lock);
	rewinds = f->store_rewinds;
	pthread_mutex_unlock(&f->lock);
	before = store_rev(d);
	rc = eg_etcd_get(e, f->key_keyset, false, &ks, err, err_size);
	if (rc)
		return rc;
	/* A store whose revision or cluster id went back (a restore): the
	 * counting floor is reset here, so everything below is judged, and
	 * counted, afresh. */
	pthread_mutex_lock(&f->lock);
	eg_fw_store_seen(d, ks.cluster_id, before, ks.revision, "full read");
	pthread_mutex_unlock(&f->lock);
	eg_fw_heard(d, e, ks.revision);
	for (size_t i = 0; i < ks.n; i++)
		apply_kv(d, &ks.kvs[i], false, count);
	before = store_rev(d);
	/* since > 0: only the selections written from that revision on; the
	 * key set is one key, read whole */
	rc = eg_etcd_get_since(e, f->prefix_workers, true, since, &sels, err, err_size);
	if (rc) {
		eg_etcd_range_free(&ks);
		return rc;
	}
	pthread_mutex_lock(&f->lock);
	if (eg_fw_store_seen(d, sels.cluster_id, before, sels.revision, "full read")) {
		/* went back between the two reads: start again */
		pthread_mutex_unlock(&f->lock);
		eg_etcd_range_free(&ks);
		eg_etcd_range_free(&sels);
		snprintf(err, err_size, "the store went back during a full read");
		return -EAGAIN;
	}
	pthread_mutex_unlock(&f->lock);
	eg_fw_heard(d, e, sels.revision);
	for (size_t i = 0; i < sels.n && !f->stopping; i++)
		apply_kv(d, &sels.kvs[i], false, count);
	/* The older of the two reads: a change between them is watched
	 * again, and counted once (its revision is then below applied). */
	*from = (ks.revision < sels.revision ? ks.revision : sels.revision) + 1;
	/* Only the watcher's reads move the applied revision: the periodic
	 * read beside the watch counts nothing, so the watch must still
	 * count what it delivers below that read's revision. */
	if (count)
		set_applied(d, *from - 1);
	n_keys = sels.n;
	eg_etcd_range_free(&ks);
	eg_etcd_range_free(&sels);
	/* A full read holds every key of the prefix at once, junk included
	 * (at most EG_ETCD_MAX_KVS): give that memory back, or each thread's
	 * malloc arena keeps the largest read for good. */
	malloc_trim(0);
	pthread_mutex_lock(&f->lock);
	f->reconciles++; /* done: its memory is given back */
	if (f->store_rewinds == rewinds)
		f->read_rev = *from - 1;
	{
		bool was = f->prefix_keys > EG_FW_MAX_PREFIX_KEYS;

		/* a full read counts them; a read of what changed since only
		 * raises the count (it does not see what stayed) */
		if (!since || n_keys > f->prefix_keys)
			f->prefix_keys = n_keys;
		if (f->prefix_keys > EG_FW_MAX_PREFIX_KEYS && !was)
			eg_fw_log(d, 4,
				  "fleet: %s holds %zu keys, above the %u a worker tracks: no "
				  "periodic read until a full read finds fewer (remove the keys "
				  "that are no selection)",
				  f->prefix_workers, f->prefix_keys, EG_FW_MAX_PREFIX_KEYS);
	}
	pthread_mutex_unlock(&f->lock);
	return 0;
}

struct watch_ctx {
	struct eg_fleet_worker *d;
	struct eg_etcd *e;
	int64_t applied;
	uint64_t ahead_at; /* of the last read ahead (eg_fw_keys_ahead) */
};

static int on_events(const struct eg_etcd_event *ev, size_t n, int64_t revision, void *ctx)
{
	struct watch_ctx *w = ctx;
	int64_t last = 0;

	eg_fw_heard(w->d, w->e, revision);
	eg_fw_keys_ahead(w->d, w->e, ev, n, &w->ahead_at);
	for (size_t i = 0; i < n; i++) {
		apply_kv(w->d, &ev[i].kv, ev[i].type == EG_ETCD_DELETE, true);
		if (ev[i].kv.mod_revision > last)
			last = ev[i].kv.mod_revision;
	}
	/* A batch with events: applied up to its last event (etcd may split
	 * a long catch-up, so the header's revision can be ahead of events
	 * still to come). Without events (a progress notification), up to
	 * the header's. */
	last = n ? last : revision;
	if (last > w->applied)
		w->applied = last;
	set_applied(w->d, w->applied);
	return 0;
}

/* After a broken stream: has the store gone back (restored from a
 * snapshot, or another cluster)? A watch resumed from the applied revision
 * + 1 on such a store would wait silently for revisions it already
 * reused. One read of the key-set key answers with the store's revision
 * and cluster id. */
static bool rewound(struct eg_fleet_worker *d, struct eg_etcd *e)
{
	struct eg_etcd_range r = {0};
	char err[EG_ERR_MAX];
	int64_t before = store_rev(d);
	bool back;

	if (eg_etcd_get(e, d->key_keyset, false, &r, err, sizeof(err)))
		return false;
	pthread_mutex_lock(&d->lock);
	back = eg_fw_store_seen(d, r.cluster_id, before, r.revision, "after a broken watch");
	pthread_mutex_unlock(&d->lock);
	eg_fw_heard(d, e, r.revision);
	eg_etcd_range_free(&r);
	return back;
}

/* A handle of this worker's: its three threads share one token. */
static int open_etcd(struct eg_fleet_worker *d, struct eg_etcd **e, char *err, size_t err_size)
{
	int rc = eg_etcd_open_auth(d->endpoints, ETCD_TIMEOUT_MS, d->etcd_auth, e, err, err_size);

	if (!rc)
		rc = eg_etcd_set_session(*e, d->etcd_session, err, err_size);
	if (rc) {
		eg_etcd_close(*e);
		*e = NULL;
	}
	return rc;
}

static void *watcher(void *arg)
{
	struct eg_fleet_worker *d = arg;
	struct eg_fleet_worker *f = d;
	const struct eg_etcd_watch_spec specs[2] = {{f->prefix_workers, true},
						    {f->key_keyset, false}};
	char err[EG_ERR_MAX];
	unsigned backoff = BACKOFF_MIN_MS;
	struct eg_etcd *e = NULL;
	bool first = true;

	if (open_etcd(d, &e, err, sizeof(err))) {
		eg_fw_log(d, 3, "fleet: %s: the watcher does not run", err);
		return NULL;
	}
	eg_etcd_set_abort(e, &f->stopping);
	while (!f->stopping) {
		struct watch_ctx w = {d, e, 0, 0};
		int64_t from, compact = 0;
		int rc;

		rc = reconcile(d, e, true, 0, &from, err, sizeof(err));
		if (rc) {
			lost(d, "reading the prefix", err);
			nap(d, eg_backoff_jittered(backoff, randombytes_random()));
			backoff = eg_backoff_next(backoff, BACKOFF_MAX_MS);
			continue;
		}
		if (first) {
			/* Acks after start-up reconciliation, for every
			 * selection in force. */
			eg_fleet_worker_touch_all(d);
			eg_fw_log(d, 6, "fleet: reconciled at revision %lld, watching %s and %s",
				  (long long)(from - 1), f->prefix_workers, f->key_keyset);
			first = false;
		}
		backoff = BACKOFF_MIN_MS;
		w.applied = from - 1;
		while (!f->stopping) {
			rc = eg_etcd_watch(e, specs, 2, w.applied + 1, on_events, &w, &f->interrupt,
					   &compact, err, sizeof(err));
			if (rc == 0) {
				/* interrupted: stop, or a reconcile is due */
				f->interrupt = 0;
				break;
			}
			if (rc == -ECANCELED) {
				pthread_mutex_lock(&f->lock);
				f->compactions++;
				pthread_mutex_unlock(&f->lock);
				eg_fw_log(
				    d, 5,
				    "fleet: watch from revision %lld canceled, compacted up to "
				    "%lld: reading everything again",
				    (long long)(w.applied + 1), (long long)compact);
				break;
			}
			lost(d, "watch", err);
			nap(d, eg_backoff_jittered(backoff, randombytes_random()));
			backoff = eg_backoff_next(backoff, BACKOFF_MAX_MS);
			if (!f->stopping && rewound(d, e))
				break; /* read everything again */
		}
	}
	eg_etcd_close(e);
	return NULL;
}

static int put_ack(struct eg_fleet_worker *d, struct eg_etcd *e, const uint8_t sandbox[EG_ID_BYTES])
{
	struct eg_fleet_worker *f = d;
	char key[600], u[EG_UUID_TEXT_LEN], err[EG_ERR_MAX], *json = NULL;
	uint8_t fp[EG_FW_ACK_FP_LEN];
	struct eg_fw_sel *s = NULL;
	int rc;

	pthread_mutex_lock(&f->lock);
	s = eg_fw_find(f, sandbox);
	if (s && s->retiring) {
		/* written once the retire and its cut are over: the watcher
		 * marks it dirty then */
		pthread_mutex_unlock(&f->lock);
		return 0;
	}
	rc = s ? eg_fw_ack_signed(d, s, &json, fp) : -ENOENT;
	pthread_mutex_unlock(&f->lock);
	eg_uuid_to_text(sandbox, u);
	if (rc) {
		if (rc != -ENOENT)
			eg_fw_log(d, 4, "fleet: sandbox %s: ack not written: %s", u, strerror(-rc));
		return rc;
	}
	snprintf(key, sizeof(key), "%s/acks/%s/%s", d->prefix, d->self_text, u);
	rc = eg_etcd_put(e, key, json, strlen(json), NULL, err, sizeof(err));
	free(json);
	pthread_mutex_lock(&f->lock);
	if (rc) {
		f->ack_errors++;
	} else {
		f->acks_written++;
		/* what this ack said, for eg_fw_ack_recheck (the entry may have
		 * moved: sels grows by realloc) */
		for (size_t i = 0; i < f->n_sels; i++)
			if (!memcmp(f->sels[i].sandbox, sandbox, EG_ID_BYTES)) {
				memcpy(f->sels[i].ack_fp, fp, sizeof(fp));
				f->sels[i].ack_written = true;
			}
	}
	pthread_mutex_unlock(&f->lock);
	if (rc)
		lost(d, "writing an ack", err);
	return rc;
}

static void *acker(void *arg)
{
	struct eg_fleet_worker *d = arg;
	struct eg_fleet_worker *f = d;
	uint64_t next_recheck = eg_fw_mono_ns() + ACK_RECHECK_NS;
	unsigned backoff = BACKOFF_MIN_MS;
	char err[EG_ERR_MAX];
	struct eg_etcd *e = NULL;

	if (open_etcd(d, &e, err, sizeof(err))) {
		eg_fw_log(d, 3, "fleet: %s: no acks are written", err);
		return NULL;
	}
	pthread_mutex_lock(&f->lock);
	while (!f->stopping) {
		uint8_t id[EG_ID_BYTES];
		bool found = false;
		struct timespec ts;

		for (size_t i = 0; i < f->n_sels && !found; i++)
			if (f->sels[i].ack_dirty) {
				f->sels[i].ack_dirty = false;
				memcpy(id, f->sels[i].sandbox, EG_ID_BYTES);
				found = true;
			}
		if (!found) {
			if (eg_fw_mono_ns() >= next_recheck) {
				pthread_mutex_unlock(&f->lock);
				eg_fw_ack_recheck(d);
				next_recheck = eg_fw_mono_ns() + ACK_RECHECK_NS;
				pthread_mutex_lock(&f->lock);
				continue;
			}
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 1;
			pthread_cond_timedwait(&f->wake, &f->lock, &ts);
			continue;
		}
		pthread_mutex_unlock(&f->lock);
		if (put_ack(d, e, id) == 0) {
			backoff = BACKOFF_MIN_MS;
		} else {
			eg_fleet_worker_touch(d, id); /* again, later */
			nap(d, eg_backoff_jittered(backoff, randombytes_random()));
			backoff = eg_backoff_next(backoff, BACKOFF_MAX_MS);
		}
		pthread_mutex_lock(&f->lock);
	}
	pthread_mutex_unlock(&f->lock);
	eg_etcd_close(e);
	return NULL;
}

/* The periodic full read, every etcd_reconcile_interval seconds, on a
 * handle and thread of its own while the watch goes on: a read of a
 * prefix that a writer filled with 150 000 junk keys takes seconds, and a
 * genuine move must not wait for it. Safe beside the watch because every
 * document is judged on its signed content: a value read here that the
 * watch has since replaced by a newer one is refused as older, and not
 * counted (its revision is at or below the applied one). A store that
 * went back makes the watcher read everything again itself. */
static void *reconciler(void *arg)
{
	struct eg_fleet_worker *d = arg;
	struct eg_etcd *e = NULL;
	char err[EG_ERR_MAX];

	if (open_etcd(d, &e, err, sizeof(err))) {
		eg_fw_log(d, 3, "fleet: %s: no periodic full read", err);
		return NULL;
	}
	eg_etcd_set_abort(e, &d->stopping);
	while (!d->stopping) {
		int64_t from, since;
		uint64_t rewinds;
		bool full;
		int rc;

		/* every etcd_reconcile_interval seconds, or at once when a key
		 * set applied (selections refused unknown-key may verify now) */
		for (unsigned ms = 0;
		     ms < d->reconcile_interval * 1000u && !d->stopping && !d->full_read_due;
		     ms += 100)
			nap(d, 100);
		if (d->stopping)
			break;
		pthread_mutex_lock(&d->lock);
		full = d->full_read_due;
		d->full_read_due = 0;
		rewinds = d->store_rewinds;
		if (!full && d->prefix_keys > EG_FW_MAX_PREFIX_KEYS) {
			/* A writer filled the prefix: a periodic read would make
			 * etcd scan it all every interval (seconds of its CPU at
			 * 150 000 keys, slowing every worker's moves). The watch
			 * goes on; a key set, a compaction, a store that went
			 * back or a restart still read it all. */
			d->periodic_skipped++;
			pthread_mutex_unlock(&d->lock);
			eg_fw_enforce_all(d);
			continue;
		}
		/* Periodically, only what was written since the last read:
		 * whatever the watch may have missed has a later revision, and
		 * etcd filters the rest (150 000 junk keys cost it a scan, not
		 * a transfer). A key set applied reads everything, to judge
		 * again what was refused unknown-key. */
		since = full || !d->read_rev ? 0 : d->read_rev + 1;
		pthread_mutex_unlock(&d->lock);
		rc = reconcile(d, e, false, since, &from, err, sizeof(err));
		if (rc)
			lost(d, "reading the prefix", err);
		/* what is in force is enforced again (a record changed behind
		 * the fleet's back), as a full read would */
		eg_fw_enforce_all(d);
		pthread_mutex_lock(&d->lock);
		if (d->store_rewinds != rewinds)
			d->interrupt = 1; /* the watcher starts again from a full read */
		pthread_mutex_unlock(&d->lock);
	}
	eg_etcd_close(e);
	return NULL;
}

int eg_fleet_worker_start(struct eg_fleet_worker *d, char *err, size_t err_size)
{
	struct eg_fleet_worker *f = d;
	int rc;

	rc = pthread_create(&f->watcher, NULL, watcher, d);
	if (!rc) {
		rc = pthread_create(&f->acker, NULL, acker, d);
		if (rc) {
			f->stopping = 1;
			f->interrupt = 1;
			pthread_join(f->watcher, NULL);
		}
	}
	if (!rc) {
		rc = pthread_create(&f->reconciler, NULL, reconciler, d);
		if (rc) {
			pthread_mutex_lock(&f->lock);
			f->stopping = 1;
			f->interrupt = 1;
			pthread_cond_broadcast(&f->wake);
			pthread_mutex_unlock(&f->lock);
			pthread_join(f->watcher, NULL);
			pthread_join(f->acker, NULL);
		}
	}
	if (rc) {
		snprintf(err, err_size, "fleet: threads: %s", strerror(rc));
		return -rc;
	}
	f->started = true;
	return 0;
}

void eg_fleet_worker_stop(struct eg_fleet_worker *d)
{
	struct eg_fleet_worker *f = d;

	if (!f->started)
		return;
	pthread_mutex_lock(&f->lock);
	f->stopping = 1;
	f->interrupt = 1;
	pthread_cond_broadcast(&f->wake);
	pthread_mutex_unlock(&f->lock);
	pthread_join(f->watcher, NULL);
	pthread_join(f->acker, NULL);
	pthread_join(f->reconciler, NULL);
	f->started = false;
}
