// SPDX-License-Identifier: Apache-2.0
/* The fleet's worker-side state (fleetd/worker.h): open and close, the
 * installs that go through it, the acks' dirty marks, the log and the
 * store's revisions. How a verified document changes it is
 * apply_selection.c and apply_keyset.c (the rules themselves are
 * core/fleet_apply.c); the selections in force are selections.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "core/fd_io.h"
#include "core/fleet_apply.h"
#include "core/ids.h"
#include "execgate/text.h"
#include "fleet/etcd.h"
#include "fleetd/worker_impl.h"

uint64_t eg_fw_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* An etcd key in a log line: attacker-controlled bytes, cut to 400. The
 * log callback escapes the whole line (fleetd/worker.h), so a byte such
 * as a newline is written \x0a there, once. */
const char *eg_fw_key_text(const char *key, char *buf, size_t size)
{
	snprintf(buf, size, "%.400s", key);
	return buf;
}

void eg_fw_log(struct eg_fleet_worker *d, int prio, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (d->log)
		d->log(prio, line, d->ctx);
}

bool eg_fw_store_seen(struct eg_fleet_worker *d, uint64_t cluster, int64_t before, int64_t revision,
		      const char *where)
{
	char why[200];

	if (cluster && d->cluster_id && cluster != d->cluster_id)
		snprintf(why, sizeof(why), "cluster id %016llx became %016llx",
			 (unsigned long long)d->cluster_id, (unsigned long long)cluster);
	else if (revision < before)
		snprintf(why, sizeof(why), "revision went back from %lld to %lld",
			 (long long)before, (long long)revision);
	else
		why[0] = '\0';
	if (cluster)
		d->cluster_id = cluster;
	if (!why[0])
		return false;
	/* A restore from a snapshot, or another cluster: revisions judged
	 * before mean nothing now. What is in force stays (ordered by its
	 * signed content); everything is read and judged again, its refusals
	 * counted again. */
	d->store_rewinds++;
	d->last_rewind_at = (int64_t)time(NULL);
	snprintf(d->last_rewind, sizeof(d->last_rewind), "%s (%s)", why, where);
	d->applied_rev = 0;
	d->read_rev = 0;
	d->store_rev = revision;
	d->keyset_judged = false;
	d->keyset_rev = 0;
	d->keyset_ahead_rev = 0;
	eg_fw_log(d, 4, "fleet: the store went back: %s: reading everything again", d->last_rewind);
	return true;
}

int eg_fleet_worker_open(const struct eg_fleet_worker_config *cfg, struct eg_fleet_worker **out,
			 char *err, size_t err_size)
{
	struct eg_fleet_worker *d = calloc(1, sizeof(*d));
	char bad[512] = "", dir[512 + 32];
	enum eg_key_err kerr;
	int rc;

	*out = NULL;
	if (!d) {
		snprintf(err, err_size, "fleet: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	pthread_mutex_init(&d->apply_lock, NULL);
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->wake, NULL);
	d->be = cfg->backend ? cfg->backend : &eg_fleet_backend_worker;
	d->be_ctx = cfg->backend ? cfg->backend_ctx : cfg->worker;
	snprintf(d->state_dir, sizeof(d->state_dir), "%s", cfg->state_dir);
	snprintf(d->prefix, sizeof(d->prefix), "%s", cfg->prefix);
	snprintf(d->endpoints, sizeof(d->endpoints), "%s", cfg->endpoints);
	d->etcd_auth = cfg->etcd_auth;
	d->etcd_session = eg_etcd_session_new();
	if (!d->etcd_session) {
		snprintf(err, err_size, "fleet: %s", strerror(ENOMEM));
		rc = -ENOMEM;
		goto fail;
	}
	memcpy(d->self, cfg->worker_id, EG_ID_BYTES);
	eg_uuid_to_text(d->self, d->self_text);
	d->reconcile_interval = cfg->reconcile_interval ? cfg->reconcile_interval : 60;
	d->log = cfg->log;
	d->streams = cfg->streams;
	d->ctx = cfg->ctx;
	snprintf(d->prefix_workers, sizeof(d->prefix_workers), "%s/workers/%s/selections/",
		 d->prefix, d->self_text);
	snprintf(d->key_keyset, sizeof(d->key_keyset), "%s/keyset", d->prefix);
	eg_keyset_init(&d->roots);
	kerr = eg_keyset_load_path(&d->roots, cfg->root_keys, bad, sizeof(bad));
	if (kerr != EG_KEY_OK) {
		snprintf(err, err_size, "root_keys %s: %s: %s", bad[0] ? bad : cfg->root_keys,
			 eg_key_err_name(kerr), eg_key_err_detail(kerr));
		rc = -EINVAL;
		goto fail;
	}
	if (!d->roots.n) {
		snprintf(err, err_size, "root_keys %s: no root public key (*.pub)", cfg->root_keys);
		rc = -EINVAL;
		goto fail;
	}
	rc = d->be->keys_version(d->be_ctx, &d->keyset_version, err, err_size);
	if (rc)
		goto fail;
	d->keyset_min_version = cfg->keyset_min_version;
	d->keyset_floor = d->keyset_version;
	eg_fw_load_keyset_state(d);
	snprintf(dir, sizeof(dir), "%s/fleet", d->state_dir);
	if (mkdir(dir, 0700) && errno != EEXIST) {
		rc = -errno;
		snprintf(err, err_size, "fleet: %s: %s", dir, strerror(-rc));
		goto fail;
	}
	eg_fw_sel_dir(d, dir, sizeof(dir));
	if (mkdir(dir, 0700) && errno != EEXIST) {
		rc = -errno;
		snprintf(err, err_size, "fleet: %s: %s", dir, strerror(-rc));
		goto fail;
	}
	rc = eg_fw_load_selections(d, err, err_size);
	if (rc)
		goto fail;
	*out = d;
	return 0;
fail:
	eg_fleet_worker_close(d);
	return rc;
}

void eg_fleet_worker_close(struct eg_fleet_worker *d)
{
	if (!d)
		return;
	eg_fleet_worker_stop(d);
	eg_etcd_session_put(d->etcd_session);
	free(d->sels);
	free(d->idx);
	pthread_mutex_destroy(&d->lock);
	pthread_mutex_destroy(&d->apply_lock);
	pthread_cond_destroy(&d->wake);
	free(d);
}

int eg_fleet_worker_install(struct eg_fleet_worker *d, const struct eg_install_spec *spec,
			    const char *mode, struct eg_install_report *rep, char *err,
			    size_t err_size)
{
	int rc;

	/* The install rule reads the selections the watcher stores under
	 * apply_lock (lib/fleet_gate.c): check and install are one step
	 * against it. The state lock is not held, so status and /metrics
	 * answer while this install cuts streams. */
	pthread_mutex_lock(&d->apply_lock);
	rc = d->be->install_mode(d->be_ctx, spec, mode, rep, err, err_size);
	pthread_mutex_unlock(&d->apply_lock);
	if (!rc)
		eg_fleet_worker_touch(d, spec->sandbox);
	return rc;
}

void eg_fleet_worker_touch(struct eg_fleet_worker *d, const uint8_t sandbox[EG_ID_BYTES])
{
	struct eg_fleet_worker *f = d;
	struct eg_fw_sel *s;

	pthread_mutex_lock(&f->lock);
	s = eg_fw_find(f, sandbox);
	if (s && s->has_sel) {
		s->ack_dirty = true;
		pthread_cond_signal(&f->wake);
	}
	pthread_mutex_unlock(&f->lock);
}

void eg_fleet_worker_touch_all(struct eg_fleet_worker *d)
{
	struct eg_fleet_worker *f = d;

	pthread_mutex_lock(&f->lock);
	for (size_t i = 0; i < f->n_sels; i++)
		f->sels[i].ack_dirty = f->sels[i].has_sel;
	pthread_cond_signal(&f->wake);
	pthread_mutex_unlock(&f->lock);
}

void eg_fw_local_of(struct eg_fleet_worker *d, const uint8_t sandbox[EG_ID_BYTES],
		    struct eg_fleet_local *l)
{
	struct eg_runtime_record rec;
	char err[EG_ERR_MAX];

	memset(l, 0, sizeof(*l));
	/* the record alone: this runs at every selection read and every ack,
	 * and counting endpoints and grants walks whole maps */
	if (d->be->record(d->be_ctx, sandbox, &rec, err, sizeof(err)))
		return;
	l->has_record = true;
	l->retired = rec.retired;
	memcpy(l->worker, rec.worker, EG_ID_BYTES);
	memcpy(l->pod_uid, rec.pod_uid, EG_ID_BYTES);
	l->generation = rec.generation;
	l->activation = rec.activation;
	l->epoch = rec.epoch;
}

/* Whether one more refusal may be logged: at most REFUSAL_LOG_BURST a
 * second, so that a writer who puts 150 000 junk keys costs the log a
 * line a second, not 150 000 (the counters stay exact). Under lock. */
#define REFUSAL_LOG_BURST 20
bool eg_fw_refusal_loggable(struct eg_fleet_worker *d)
{
	uint64_t sec = eg_fw_mono_ns() / 1000000000ull;

	if (sec != d->log_second) {
		if (d->log_suppressed)
			eg_fw_log(d, 4, "fleet: %llu more refused documents not logged (counted)",
				  (unsigned long long)d->log_suppressed);
		d->log_second = sec;
		d->log_in_second = 0;
		d->log_suppressed = 0;
	}
	if (d->log_in_second < REFUSAL_LOG_BURST) {
		d->log_in_second++;
		return true;
	}
	d->log_suppressed++;
	return false;
}

void eg_fleet_worker_deleted(struct eg_fleet_worker *d, const char *key, int64_t rev)
{
	char k[1700];

	/* Withholding is all a store can do: a deleted document changes
	 * nothing here, the selection or key set in force stays. Notice, not
	 * warning: the control plane deletes the old worker's copy after every
	 * fenced move (docs/fleet.md, "Database size"). */
	eg_fw_log(d, 5,
		  "fleet: key %s deleted at mod_revision %lld: ignored, what was applied stays",
		  eg_fw_key_text(key, k, sizeof(k)), (long long)rev);
	(void)d;
}

int eg_fw_ack_json(struct eg_fleet_worker *d, const struct eg_fw_sel *s, char **out)
{
	char self[EG_UUID_TEXT_LEN], sb[EG_UUID_TEXT_LEN], w[EG_UUID_TEXT_LEN];
	struct eg_fleet_local local;
	enum eg_fleet_state st;
	json_t *o, *sel;

	eg_fw_local_of(d, s->sandbox, &local);
	st = eg_fleet_ack_state(d->self, s->has_sel, &s->sel, &local);
	eg_uuid_to_text(d->self, self);
	eg_uuid_to_text(s->sandbox, sb);
	eg_uuid_to_text(s->sel.id.worker, w);
	sel = json_pack("{s:s,s:I,s:I,s:I}", "worker", w, "generation",
			(json_int_t)s->sel.id.generation, "activation",
			(json_int_t)s->sel.id.activation, "revision", (json_int_t)s->sel_rev);
	o = json_pack("{s:i,s:s,s:s,s:o,s:s}", "schema_version", 2, "worker", self, "sandbox", sb,
		      "selection", sel, "state", eg_fleet_state_name(st));
	if (!o)
		return -ENOMEM;
	if (local.has_record) {
		json_object_set_new(o, "generation", json_integer((json_int_t)local.generation));
		json_object_set_new(o, "activation", json_integer((json_int_t)local.activation));
		json_object_set_new(o, "epoch", json_integer((json_int_t)local.epoch));
	} else {
		json_object_set_new(o, "generation", json_null());
		json_object_set_new(o, "activation", json_null());
		json_object_set_new(o, "epoch", json_null());
	}
	json_object_set_new(o, "revision", json_integer((json_int_t)d->applied_rev));
	json_object_set_new(o, "acked_at", json_integer((json_int_t)time(NULL)));
	*out = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return *out ? 0 : -ENOMEM;
}
