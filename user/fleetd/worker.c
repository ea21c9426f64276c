// SPDX-License-Identifier: Apache-2.0
/* The fleet's worker-side state and how a verified document changes it
 * (fleetd/worker.h). The rules themselves are core/fleet_apply.c; this file
 * reads and writes what they decide: the stored selections, the worker's
 * records and keys, the log and the counters. */
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
static const char *key_text(const char *key, char *buf, size_t size)
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

static void sel_dir(const struct eg_fleet_worker *d, char *out, size_t size)
{
	snprintf(out, size, "%s/fleet/selections", d->state_dir);
}

static struct eg_fw_sel *find(struct eg_fleet_worker *f, const uint8_t sandbox[EG_ID_BYTES],
			      bool create)
{
	struct eg_fw_sel *s;

	for (size_t i = 0; i < f->n_sels; i++)
		if (!memcmp(f->sels[i].sandbox, sandbox, EG_ID_BYTES))
			return &f->sels[i];
	if (!create)
		return NULL;
	if (f->n_sels == f->cap_sels) {
		size_t cap = f->cap_sels ? f->cap_sels * 2 : 64;
		struct eg_fw_sel *n = realloc(f->sels, cap * sizeof(*n));

		if (!n)
			return NULL;
		f->sels = n;
		f->cap_sels = cap;
	}
	s = &f->sels[f->n_sels++];
	memset(s, 0, sizeof(*s));
	memcpy(s->sandbox, sandbox, EG_ID_BYTES);
	return s;
}

/* <state_dir>/fleet/selections/<uuid>: "<mod_revision> <text>\n", written
 * crash-safe, so that a restart knows the selection in force and refuses
 * an older replay. */
static int store_selection(struct eg_fleet_worker *d, const struct eg_fw_sel *s, const char *text)
{
	char dir[512 + 32], path[512 + 80], u[EG_UUID_TEXT_LEN], line[400];
	int n;

	sel_dir(d, dir, sizeof(dir));
	eg_uuid_to_text(s->sandbox, u);
	snprintf(path, sizeof(path), "%s/%s", dir, u);
	n = snprintf(line, sizeof(line), "%lld %s\n", (long long)s->sel_rev, text);
	return eg_write_file_atomic(path, line, (size_t)n, 0600);
}

/* The stored selections are this daemon's own state (0600 under
 * state_dir, like the keys): decoded strictly, not verified again (the key
 * that signed one may have been withdrawn since; it was applied). */
static int load_selections(struct eg_fleet_worker *d, char *err, size_t err_size)
{
	struct eg_fleet_worker *f = d;
	char dir[512 + 32], path[512 + 300];
	struct dirent *de;
	DIR *dh;

	sel_dir(d, dir, sizeof(dir));
	dh = opendir(dir);
	if (!dh) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, err_size, "fleet: %s: %s", dir, strerror(errno));
		return -errno;
	}
	while ((de = readdir(dh))) {
		uint8_t id[EG_ID_BYTES], raw[EG_SEL_LEN];
		char line[400], text[EG_SEL_TEXT_MAX];
		struct eg_fw_sel *s;
		struct eg_selection sel;
		long long rev;
		FILE *fp;
		bool ok;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		ok = !eg_uuid_from_text(de->d_name, id);
		fp = ok ? fopen(path, "re") : NULL;
		ok = fp && fgets(line, sizeof(line), fp) &&
		     sscanf(line, "%lld %255s", &rev, text) == 2 && rev > 0 &&
		     eg_sel_text_to_bin(text, strlen(text), raw) == EG_SEL_OK &&
		     eg_sel_decode(raw, sizeof(raw), &sel) == EG_SEL_OK &&
		     !memcmp(sel.sandbox, id, EG_ID_BYTES);
		if (fp)
			fclose(fp);
		if (!ok) {
			/* Not trusted, and not silently dropped: a restart
			 * must not accept an older replay because its record
			 * of the newer one is unreadable. */
			snprintf(err, err_size,
				 "fleet: %s: not a stored selection (remove it only if the "
				 "sandbox's selection is known)",
				 path);
			closedir(dh);
			return -EINVAL;
		}
		s = find(f, id, true);
		if (!s) {
			closedir(dh);
			snprintf(err, err_size, "fleet: %s", strerror(ENOMEM));
			return -ENOMEM;
		}
		s->has_sel = true;
		s->sel = sel;
		s->sel_rev = rev;
		s->seen_rev = rev;
	}
	closedir(dh);
	return 0;
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
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->wake, NULL);
	d->worker = cfg->worker;
	snprintf(d->state_dir, sizeof(d->state_dir), "%s", cfg->state_dir);
	snprintf(d->prefix, sizeof(d->prefix), "%s", cfg->prefix);
	snprintf(d->endpoints, sizeof(d->endpoints), "%s", cfg->endpoints);
	d->etcd_auth = cfg->etcd_auth;
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
	rc = eg_worker_keys_version(d->worker, &d->keyset_version, err, err_size);
	if (rc)
		goto fail;
	snprintf(dir, sizeof(dir), "%s/fleet", d->state_dir);
	if (mkdir(dir, 0700) && errno != EEXIST) {
		rc = -errno;
		snprintf(err, err_size, "fleet: %s: %s", dir, strerror(-rc));
		goto fail;
	}
	sel_dir(d, dir, sizeof(dir));
	if (mkdir(dir, 0700) && errno != EEXIST) {
		rc = -errno;
		snprintf(err, err_size, "fleet: %s: %s", dir, strerror(-rc));
		goto fail;
	}
	rc = load_selections(d, err, err_size);
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
	free(d->sels);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->wake);
	free(d);
}

pthread_mutex_t *eg_fleet_worker_lock(struct eg_fleet_worker *d)
{
	return &d->lock;
}

const char *eg_fleet_worker_put_refusal(struct eg_fleet_worker *d,
					const struct eg_install_spec *spec)
{
	struct eg_fw_sel *s = find(d, spec->sandbox, false);

	return eg_fleet_put_refusal(d->self, s && s->has_sel, s ? &s->sel : NULL, spec->worker,
				    spec->generation, spec->activation, spec->pod_uid);
}

void eg_fleet_worker_touch(struct eg_fleet_worker *d, const uint8_t sandbox[EG_ID_BYTES])
{
	struct eg_fleet_worker *f = d;
	struct eg_fw_sel *s;

	pthread_mutex_lock(&f->lock);
	s = find(f, sandbox, false);
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

static void local_of(struct eg_fleet_worker *d, const uint8_t sandbox[EG_ID_BYTES],
		     struct eg_fleet_local *l)
{
	struct eg_runtime_record rec;
	char err[EG_ERR_MAX];

	memset(l, 0, sizeof(*l));
	/* the record alone: this runs at every selection read and every ack,
	 * and counting endpoints and grants walks whole maps */
	if (eg_worker_record(d->worker, sandbox, &rec, err, sizeof(err)))
		return;
	l->has_record = true;
	l->retired = rec.retired;
	memcpy(l->worker, rec.worker, EG_ID_BYTES);
	memcpy(l->pod_uid, rec.pod_uid, EG_ID_BYTES);
	l->generation = rec.generation;
	l->activation = rec.activation;
	l->epoch = rec.epoch;
}

static int add_key(const char *kid, const uint8_t pk[32], void *ctx)
{
	(void)kid;
	eg_keyset_add(ctx, pk, NULL);
	return 0;
}

static void refuse_sel(struct eg_fleet_worker *d, unsigned reason, const char *name,
		       const char *key, int64_t rev)
{
	char k[1700];

	d->refused_sel[reason]++;
	eg_fw_log(d, 4, "fleet: selection refused: %s: key %s mod_revision %lld", name,
		  key_text(key, k, sizeof(k)), (long long)rev);
}

static void retire(struct eg_fleet_worker *d, const uint8_t sandbox[EG_ID_BYTES], const char *why)
{
	struct eg_runtime_record after;
	struct eg_stream_cuts streams;
	char err[EG_ERR_MAX] = "", u[EG_UUID_TEXT_LEN];
	int rc;

	eg_uuid_to_text(sandbox, u);
	memset(&streams, 0, sizeof(streams));
	rc = eg_worker_retire_report(d->worker, sandbox, &after, &streams, err, sizeof(err));
	if (rc) {
		eg_fw_log(d, 3, "fleet: sandbox %s: retire (%s) failed: %s", u, why, err);
		return;
	}
	d->retired++;
	if (d->streams)
		d->streams(&streams, d->ctx);
	if (streams.error)
		eg_fw_log(d, 3, "fleet: sandbox %s: stream revocation failed: %s", u,
			  streams.error_text);
	eg_fw_log(d, 5,
		  "fleet: retired sandbox=%s (%s) epoch=%llu streams_cut=%u streams_unreachable=%u "
		  "streams_would_cut=%u",
		  u, why, (unsigned long long)after.epoch, streams.unix_cut + streams.tcp_cut,
		  streams.unix_unreachable + streams.tcp_unreachable, streams.would_cut);
}

/* Retires the local record when the selection in force does not name it;
 * true when it did. Idempotent: a retired or matching record is left. */
static bool enforce(struct eg_fleet_worker *d, const struct eg_fw_sel *s)
{
	struct eg_fleet_local local;

	local_of(d, s->sandbox, &local);
	if (eg_fleet_decide(d->self, &s->sel, &local) != EG_FLEET_RETIRE)
		return false;
	retire(d, s->sandbox,
	       memcmp(s->sel.worker, d->self, EG_ID_BYTES)
		   ? "the selection names another worker"
		   : "the selection names another execution");
	return true;
}

void eg_fleet_worker_apply_selection(struct eg_fleet_worker *d, const char *key, const char *value,
				     size_t len, int64_t rev)
{
	struct eg_fleet_worker *f = d;
	size_t plen = strlen(f->prefix_workers);
	char u[EG_UUID_TEXT_LEN], text[EG_SEL_TEXT_MAX];
	uint8_t id[EG_ID_BYTES], raw[EG_SEL_LEN];
	struct eg_fw_sel *s;
	struct eg_selection sel;
	struct eg_keyset *ks;
	enum eg_sel_err serr;
	enum eg_fleet_order order;
	int64_t prev_seen;
	int rc;

	pthread_mutex_lock(&f->lock);
	/* The key must be exactly <prefix>/workers/<self>/selections/<uuid>,
	 * the UUID in its canonical lower-case form. */
	if (strncmp(key, f->prefix_workers, plen) || eg_uuid_from_text(key + plen, id)) {
		refuse_sel(d, EG_FW_SEL_BAD_KEY, "bad-etcd-key", key, rev);
		goto out;
	}
	eg_uuid_to_text(id, u);
	if (strcmp(key + plen, u)) {
		refuse_sel(d, EG_FW_SEL_BAD_KEY, "bad-etcd-key", key, rev);
		goto out;
	}
	s = find(f, id, true);
	if (!s) {
		eg_fw_log(d, 3, "fleet: sandbox %s: %s", u, strerror(ENOMEM));
		goto out;
	}
	/* Each write of a key is judged once: a reconcile reading the same
	 * write again neither applies nor counts it twice. */
	if (rev <= s->seen_rev) {
		/* Judged before, but enforced again: a daemon killed between
		 * storing a selection and retiring the record it replaces
		 * loads that selection as judged, and this is where its
		 * record is retired (and acked) after the restart. */
		if (s->has_sel && enforce(d, s)) {
			s->ack_dirty = true;
			pthread_cond_signal(&f->wake);
		}
		goto out;
	}
	prev_seen = s->seen_rev;
	s->seen_rev = rev;
	serr = eg_sel_text_to_bin(value, len, raw);
	ks = calloc(1, sizeof(*ks));
	if (!ks) {
		eg_fw_log(d, 3, "fleet: sandbox %s: %s", u, strerror(ENOMEM));
		goto out;
	}
	if (serr == EG_SEL_OK) {
		eg_keyset_init(ks);
		eg_worker_keys_list(d->worker, add_key, ks);
		serr = eg_sel_verify_keyset(raw, sizeof(raw), ks, &sel);
	}
	free(ks);
	if (serr == EG_SEL_UNKNOWN_KEY) {
		/* Signed by a key this worker does not hold yet: the key set
		 * that brings it may be a moment behind on its own stream.
		 * Judged again at the next read, refused and counted once. */
		s->seen_rev = prev_seen;
		if (s->unknown_rev != rev)
			refuse_sel(d, serr, eg_sel_err_name(serr), key, rev);
		s->unknown_rev = rev;
		goto out;
	}
	if (serr != EG_SEL_OK) {
		refuse_sel(d, serr, eg_sel_err_name(serr), key, rev);
		goto out;
	}
	if (memcmp(sel.sandbox, id, EG_ID_BYTES)) {
		refuse_sel(d, EG_FW_SEL_SANDBOX, "wrong-sandbox", key, rev);
		goto out;
	}
	order = eg_fleet_order(s->has_sel, &s->sel, &sel);
	if (order == EG_FLEET_OLDER) {
		refuse_sel(d, EG_FW_SEL_OLDER, "older", key, rev);
		goto out;
	}
	if (order == EG_FLEET_NEWER) {
		struct eg_fw_sel next = *s;

		next.has_sel = true;
		next.sel = sel;
		next.sel_rev = rev;
		eg_sel_to_text(raw, text);
		rc = store_selection(d, &next, text);
		if (rc)
			/* Applied anyway (the newer selection is the safer
			 * one to enforce), but a restart would not know it. */
			eg_fw_log(d, 3,
				  "fleet: sandbox %s: storing the selection failed: %s: a restart "
				  "may accept an older one",
				  u, strerror(-rc));
		*s = next;
		eg_uuid_to_text(sel.worker, text);
		eg_fw_log(d, 6,
			  "fleet: selection applied: sandbox=%s worker=%s generation=%llu "
			  "activation=%u mod_revision=%lld",
			  u, text, (unsigned long long)sel.generation, sel.activation,
			  (long long)rev);
	}
	enforce(d, s);
	s->ack_dirty = true;
	pthread_cond_signal(&f->wake);
out:
	pthread_mutex_unlock(&f->lock);
}

struct keys_ctx {
	struct eg_keyset ks;
};

void eg_fleet_worker_apply_keyset(struct eg_fleet_worker *d, const char *key, const char *value,
				  size_t len, int64_t rev)
{
	struct eg_fleet_worker *f = d;
	uint8_t withdrawn[EG_KEYSET_MAX][EG_KEY_ID_LEN], raw[EG_KSD_MAX_LEN];
	uint8_t pks[EG_KEYSET_MAX][32];
	char k[1700], err[EG_ERR_MAX] = "", kid[EG_KID_TEXT_LEN];
	struct eg_keyset_doc *doc = NULL;
	struct keys_ctx *cur = NULL;
	enum eg_ksd_decision dec;
	size_t raw_len = 0, n_withdrawn = 0;
	enum eg_ksd_err kerr;
	bool first;
	int rc;

	pthread_mutex_lock(&f->lock);
	if (strcmp(key, f->key_keyset) || rev <= f->keyset_seen_rev)
		goto out;
	first = f->keyset_seen_rev == 0;
	f->keyset_seen_rev = rev;
	doc = calloc(1, sizeof(*doc));
	cur = calloc(1, sizeof(*cur));
	if (!doc || !cur) {
		eg_fw_log(d, 3, "fleet: key set: %s", strerror(ENOMEM));
		goto out;
	}
	kerr = eg_ksd_text_to_bin(value, len, raw, &raw_len);
	if (kerr == EG_KSD_OK)
		kerr = eg_ksd_verify_roots(raw, raw_len, &f->roots, doc);
	if (kerr != EG_KSD_OK) {
		f->refused_ksd[kerr]++;
		eg_fw_log(d, 4, "fleet: key set refused: %s: key %s mod_revision %lld",
			  eg_ksd_err_name(kerr), key_text(key, k, sizeof(k)), (long long)rev);
		goto out;
	}
	eg_keyset_init(&cur->ks);
	eg_worker_keys_list(d->worker, add_key, &cur->ks);
	dec = eg_ksd_decide(f->keyset_version, &cur->ks, doc, withdrawn, &n_withdrawn);
	if (dec == EG_KSD_REFUSE_EQUAL && first) {
		/* The set applied before a restart, read again: not a
		 * replay. */
		eg_fw_log(d, 6, "fleet: key set version %llu: applied already",
			  (unsigned long long)doc->keyset_version);
		goto out;
	}
	if (dec != EG_KSD_APPLY) {
		f->refused_ksd[dec == EG_KSD_REFUSE_EQUAL ? EG_FW_KSD_EQUAL : EG_FW_KSD_OLDER]++;
		eg_fw_log(d, 4,
			  "fleet: key set refused: %s (version %llu, applied %llu): key %s "
			  "mod_revision %lld",
			  eg_ksd_decision_name(dec), (unsigned long long)doc->keyset_version,
			  (unsigned long long)f->keyset_version, key_text(key, k, sizeof(k)),
			  (long long)rev);
		goto out;
	}
	for (size_t i = 0; i < doc->n; i++)
		memcpy(pks[i], doc->keys[i].pk, 32);
	rc = eg_worker_keys_replace(d->worker, (const uint8_t(*)[32])pks, doc->n,
				    doc->keyset_version, err, sizeof(err));
	if (rc) {
		f->refused_ksd[EG_FW_KSD_APPLY]++;
		eg_fw_log(d, 3, "fleet: key set version %llu: applying it failed: %s",
			  (unsigned long long)doc->keyset_version, err);
		if (rc != -ESTALE)
			goto out;
		/* The disk holds a newer version than memory believed. */
		eg_worker_keys_version(d->worker, &f->keyset_version, NULL, 0);
		goto out;
	}
	f->keyset_version = doc->keyset_version;
	/* Selections refused unknown-key may verify now: read again. */
	f->interrupt = 1;
	eg_fw_log(d, 5,
		  "fleet: key set version %llu applied: %zu keys, %zu withdrawn, token cache "
		  "flushed (mod_revision %lld)",
		  (unsigned long long)doc->keyset_version, doc->n, n_withdrawn, (long long)rev);
	for (size_t i = 0; i < n_withdrawn; i++) {
		eg_key_id_format(withdrawn[i], kid);
		eg_fw_log(d, 5, "fleet: key %s withdrawn", kid);
	}
out:
	pthread_mutex_unlock(&f->lock);
	if (doc)
		sodium_memzero(doc, sizeof(*doc));
	free(doc);
	free(cur);
}

void eg_fleet_worker_deleted(struct eg_fleet_worker *d, const char *key, int64_t rev)
{
	char k[1700];

	/* Withholding is all a store can do: a deleted document changes
	 * nothing here, the selection or key set in force stays. */
	eg_fw_log(d, 4,
		  "fleet: key %s deleted at mod_revision %lld: ignored, what was applied stays",
		  key_text(key, k, sizeof(k)), (long long)rev);
	(void)d;
}

int eg_fw_ack_json(struct eg_fleet_worker *d, const struct eg_fw_sel *s, char **out)
{
	char self[EG_UUID_TEXT_LEN], sb[EG_UUID_TEXT_LEN], w[EG_UUID_TEXT_LEN];
	struct eg_fleet_local local;
	enum eg_fleet_state st;
	json_t *o, *sel;

	local_of(d, s->sandbox, &local);
	st = eg_fleet_ack_state(d->self, s->has_sel, &s->sel, &local);
	eg_uuid_to_text(d->self, self);
	eg_uuid_to_text(s->sandbox, sb);
	eg_uuid_to_text(s->sel.worker, w);
	sel = json_pack("{s:s,s:I,s:I,s:I}", "worker", w, "generation",
			(json_int_t)s->sel.generation, "activation", (json_int_t)s->sel.activation,
			"revision", (json_int_t)s->sel_rev);
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
