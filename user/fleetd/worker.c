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

static size_t slot_of(const uint8_t sandbox[EG_ID_BYTES], size_t cap)
{
	uint64_t h;

	memcpy(&h, sandbox + 8, sizeof(h));
	h ^= h >> 29;
	h *= 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 17) & (cap - 1);
}

static void index_put(uint32_t *idx, size_t cap, const uint8_t sandbox[EG_ID_BYTES], size_t i)
{
	size_t j = slot_of(sandbox, cap);

	while (idx[j])
		j = (j + 1) & (cap - 1);
	idx[j] = (uint32_t)(i + 1);
}

/* The index again over sels (cap: its new size, a power of two). */
static int reindex(struct eg_fleet_worker *d, size_t cap)
{
	uint32_t *idx = cap == d->idx_cap ? d->idx : calloc(cap, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	memset(idx, 0, cap * sizeof(*idx));
	for (size_t i = 0; i < d->n_sels; i++)
		index_put(idx, cap, d->sels[i].sandbox, i);
	if (idx != d->idx)
		free(d->idx);
	d->idx = idx;
	d->idx_cap = cap;
	return 0;
}

struct eg_fw_sel *eg_fw_find(struct eg_fleet_worker *d, const uint8_t sandbox[EG_ID_BYTES])
{
	if (!d->idx_cap)
		return NULL;
	for (size_t j = slot_of(sandbox, d->idx_cap); d->idx[j]; j = (j + 1) & (d->idx_cap - 1))
		if (!memcmp(d->sels[d->idx[j] - 1].sandbox, sandbox, EG_ID_BYTES))
			return &d->sels[d->idx[j] - 1];
	return NULL;
}

/* A new entry for a selection that has just verified (never for a refused
 * document: those cost no memory). NULL when out of memory. */
static struct eg_fw_sel *insert(struct eg_fleet_worker *d, const uint8_t sandbox[EG_ID_BYTES])
{
	struct eg_fw_sel *s;

	if (d->n_sels == d->cap_sels) {
		size_t cap = d->cap_sels ? d->cap_sels * 2 : 64;
		struct eg_fw_sel *n = realloc(d->sels, cap * sizeof(*n));

		if (!n)
			return NULL;
		d->sels = n;
		d->cap_sels = cap;
	}
	if ((d->n_sels + 1) * 2 > d->idx_cap && reindex(d, d->idx_cap ? d->idx_cap * 2 : 128))
		return NULL;
	s = &d->sels[d->n_sels];
	memset(s, 0, sizeof(*s));
	memcpy(s->sandbox, sandbox, EG_ID_BYTES);
	index_put(d->idx, d->idx_cap, sandbox, d->n_sels);
	d->n_sels++;
	return s;
}

/* Forgets the selection in force s (its key was withdrawn), on disk too. */
static void drop(struct eg_fleet_worker *d, struct eg_fw_sel *s)
{
	char dir[512 + 32], path[512 + 80], u[EG_UUID_TEXT_LEN];
	size_t i = (size_t)(s - d->sels);

	sel_dir(d, dir, sizeof(dir));
	eg_uuid_to_text(s->sandbox, u);
	snprintf(path, sizeof(path), "%s/%s", dir, u);
	if (unlink(path) && errno != ENOENT)
		eg_fw_log(d, 3, "fleet: sandbox %s: removing %s failed: %s", u, path,
			  strerror(errno));
	d->sels[i] = d->sels[--d->n_sels];
	reindex(d, d->idx_cap); /* in place: cannot fail */
	d->dropped++;
}

struct key_find {
	char kid[EG_KID_TEXT_LEN];
	uint8_t pk[32];
	bool found;
};

static int key_find_cb(const char *kid, const uint8_t pk[32], void *ctx)
{
	struct key_find *k = ctx;

	if (strcmp(kid, k->kid))
		return 0;
	memcpy(k->pk, pk, 32);
	k->found = true;
	return 1;
}

/* Decode, then verify against the worker's key set: only the key the
 * selection names is looked up (no copy of the set, no point checks), so
 * a refused document costs a decode and a scan of at most 64 key ids. */
static enum eg_sel_err verify_sel(struct eg_fleet_worker *d, const uint8_t *raw, size_t len,
				  struct eg_selection *out)
{
	struct eg_selection sel;
	struct key_find k = {.found = false};
	enum eg_sel_err e = eg_sel_decode(raw, len, &sel);

	if (e != EG_SEL_OK)
		return e;
	eg_key_id_format(sel.key_id, k.kid);
	d->be->keys_list(d->be_ctx, key_find_cb, &k);
	if (!k.found)
		return EG_SEL_UNKNOWN_KEY;
	return eg_sel_verify(raw, len, k.pk, out);
}

/* <state_dir>/fleet/selections/<uuid>: "<mod_revision> <text>\n", written
 * crash-safe, so that a restart knows the selection in force and refuses
 * an older replay. */
static int store_selection(struct eg_fleet_worker *d, const struct eg_fw_sel *s)
{
	char dir[512 + 32], path[512 + 80], u[EG_UUID_TEXT_LEN], line[400], text[EG_SEL_TEXT_MAX];
	int n;

	sel_dir(d, dir, sizeof(dir));
	eg_uuid_to_text(s->sandbox, u);
	snprintf(path, sizeof(path), "%s/%s", dir, u);
	eg_sel_to_text(s->raw, s->raw_len, text);
	n = snprintf(line, sizeof(line), "%lld %s\n", (long long)s->sel_rev, text);
	return eg_write_file_atomic(path, line, (size_t)n, 0600);
}

/* The stored selections are this daemon's own state (0600 under
 * state_dir, like the keys): decoded strictly and verified again against
 * the keys in force. One whose key is no longer in the set (withdrawn
 * while the daemon was down, or before a crash let it drop the file) is
 * dropped, its record left as it is (docs/fleet.md, "Withdrawal"); any
 * other failure stops the start: a restart must not accept an older
 * replay because its record of the newer one is unreadable. */
static int load_selections(struct eg_fleet_worker *d, char *err, size_t err_size)
{
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
		uint8_t id[EG_ID_BYTES], raw[EG_SEL_MAX_LEN];
		char line[400], text[EG_SEL_TEXT_MAX];
		enum eg_sel_err serr = EG_SEL_BAD_TEXT;
		struct eg_fw_sel *s;
		struct eg_selection sel;
		size_t raw_len = 0;
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
		     eg_sel_text_to_bin(text, strlen(text), raw, &raw_len) == EG_SEL_OK &&
		     eg_sel_decode(raw, raw_len, &sel) == EG_SEL_OK &&
		     !memcmp(sel.sandbox, id, EG_ID_BYTES);
		if (fp)
			fclose(fp);
		if (ok)
			serr = verify_sel(d, raw, raw_len, &sel);
		if (ok && serr == EG_SEL_UNKNOWN_KEY) {
			char kid[EG_KID_TEXT_LEN];

			eg_key_id_format(sel.key_id, kid);
			if (unlink(path)) {
				snprintf(err, err_size, "fleet: %s: %s", path, strerror(errno));
				closedir(dh);
				return -EIO;
			}
			d->dropped++;
			eg_fw_log(d, 4,
				  "fleet: sandbox %s: stored selection dropped: its key %s is not "
				  "in the key set any more (its record stays as it is)",
				  de->d_name, kid);
			continue;
		}
		if (!ok || serr != EG_SEL_OK) {
			/* Not trusted, and not silently dropped. */
			snprintf(err, err_size,
				 "fleet: %s: not a stored selection%s%s (remove it only if the "
				 "sandbox's selection is known)",
				 path, ok ? ": " : "", ok ? eg_sel_err_name(serr) : "");
			closedir(dh);
			return -EINVAL;
		}
		s = eg_fw_find(d, id);
		if (!s)
			s = insert(d, id);
		if (!s) {
			closedir(dh);
			snprintf(err, err_size, "fleet: %s", strerror(ENOMEM));
			return -ENOMEM;
		}
		s->has_sel = true;
		s->sel = sel;
		memcpy(s->raw, raw, raw_len);
		s->raw_len = raw_len;
		s->sel_rev = rev;
	}
	closedir(dh);
	return 0;
}

/* <state_dir>/fleet/keyset: "<version> <expires_at>\n" of the key set
 * applied last. The version is the floor a restart keeps (with
 * <state_dir>/keyset.version, which the library keeps); expires_at says
 * when the applied set goes stale. */
static void keyset_path(const struct eg_fleet_worker *d, char *out, size_t size)
{
	snprintf(out, size, "%s/fleet/keyset", d->state_dir);
}

static void load_keyset_state(struct eg_fleet_worker *d)
{
	char path[600], line[64];
	unsigned long long v, exp;
	FILE *fp;

	keyset_path(d, path, sizeof(path));
	fp = fopen(path, "re");
	if (!fp)
		return;
	if (fgets(line, sizeof(line), fp) && sscanf(line, "%llu %llu", &v, &exp) == 2) {
		if (v > d->keyset_floor)
			d->keyset_floor = v;
		if (v == d->keyset_version)
			d->keyset_expires_at = exp;
	}
	fclose(fp);
}

static void store_keyset_state(struct eg_fleet_worker *d)
{
	char path[600], line[64];
	int n, rc;

	keyset_path(d, path, sizeof(path));
	n = snprintf(line, sizeof(line), "%llu %llu\n", (unsigned long long)d->keyset_version,
		     (unsigned long long)d->keyset_expires_at);
	rc = eg_write_file_atomic(path, line, (size_t)n, 0600);
	if (rc)
		eg_fw_log(d, 3,
			  "fleet: %s: %s: a restart knows the version from keyset.version only",
			  path, strerror(-rc));
}

bool eg_fw_keyset_stale(const struct eg_fleet_worker *d, int64_t now)
{
	return d->keyset_expires_at && (uint64_t)now >= d->keyset_expires_at;
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
	load_keyset_state(d);
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

static int add_key(const char *kid, const uint8_t pk[32], void *ctx)
{
	(void)kid;
	eg_keyset_add(ctx, pk, NULL);
	return 0;
}

/* Whether one more refusal may be logged: at most REFUSAL_LOG_BURST a
 * second, so that a writer who puts 150 000 junk keys costs the log a
 * line a second, not 150 000 (the counters stay exact). Under lock. */
#define REFUSAL_LOG_BURST 20
static bool refusal_loggable(struct eg_fleet_worker *d)
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

/* Counted and logged only when this write was not judged before in this
 * store (fresh): a full read meets every refused key again. */
static void refuse_sel(struct eg_fleet_worker *d, unsigned reason, const char *name,
		       const char *key, int64_t rev, bool fresh)
{
	char k[1700];

	if (!fresh)
		return;
	d->refused_sel[reason]++;
	if (refusal_loggable(d))
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
	/* Called under both locks; the state lock is let go for the retire
	 * and its stream cut (apply_lock still keeps sels in place). */
	pthread_mutex_unlock(&d->lock);
	rc = d->be->retire_report(d->be_ctx, sandbox, &after, &streams, err, sizeof(err));
	pthread_mutex_lock(&d->lock);
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
static bool enforce(struct eg_fleet_worker *d, struct eg_fw_sel *s)
{
	struct eg_fleet_local local;

	eg_fw_local_of(d, s->sandbox, &local);
	if (eg_fleet_decide(d->self, &s->sel, &local) != EG_FLEET_RETIRE)
		return false;
	s->retiring = true;
	retire(d, s->sandbox,
	       memcmp(s->sel.worker, d->self, EG_ID_BYTES)
		   ? "the selection names another worker"
		   : "the selection names another execution");
	s->retiring = false;
	return true;
}

/* Read without the lock (written under it): a junk key costs no lock. */
static uint64_t keys_generation(struct eg_fleet_worker *d)
{
	return __atomic_load_n(&d->keys_gen, __ATOMIC_ACQUIRE);
}

/* Every check of a selection that needs no state but the keys in force:
 * the etcd key, the signature, the sandbox, the audience. EG_SEL_OK, or
 * the refusal (an enum eg_sel_err or EG_FW_SEL_*) and *name. */
static unsigned judge_selection(struct eg_fleet_worker *d, const char *key, const char *value,
				size_t len, uint8_t id[EG_ID_BYTES], char u[EG_UUID_TEXT_LEN],
				uint8_t raw[EG_SEL_MAX_LEN], size_t *raw_len,
				struct eg_selection *sel, const char **name)
{
	size_t plen = strlen(d->prefix_workers);
	enum eg_sel_err serr;

	/* The key must be exactly <prefix>/workers/<self>/selections/<uuid>,
	 * the UUID in its canonical lower-case form. */
	*name = "bad-etcd-key";
	if (strncmp(key, d->prefix_workers, plen) || eg_uuid_from_text(key + plen, id))
		return EG_FW_SEL_BAD_KEY;
	eg_uuid_to_text(id, u);
	if (strcmp(key + plen, u))
		return EG_FW_SEL_BAD_KEY;
	serr = eg_sel_text_to_bin(value, len, raw, raw_len);
	if (serr == EG_SEL_OK)
		serr = verify_sel(d, raw, *raw_len, sel);
	*name = eg_sel_err_name(serr);
	if (serr != EG_SEL_OK)
		return serr;
	*name = "wrong-sandbox";
	if (memcmp(sel->sandbox, id, EG_ID_BYTES))
		return EG_FW_SEL_SANDBOX;
	/* The store cannot order a cut (docs/fleet.md, "Audience"): a v2 is
	 * acted on only by the worker it is addressed to, and a v1, which
	 * has no audience, only when it names this worker. A genuine
	 * selection copied from another worker's prefix changes nothing. */
	switch (eg_fleet_audience(d->self, sel)) {
	case EG_FLEET_ADDRESSED:
		break;
	case EG_FLEET_WRONG_AUDIENCE:
		*name = "wrong-audience";
		return EG_FW_SEL_AUDIENCE;
	case EG_FLEET_NO_AUDIENCE:
		*name = "no-audience";
		return EG_FW_SEL_NO_AUD;
	}
	*name = NULL;
	return EG_SEL_OK;
}

void eg_fleet_worker_apply_selection(struct eg_fleet_worker *d, const char *key, const char *value,
				     size_t len, int64_t rev)
{
	eg_fw_apply_selection(d, key, value, len, rev, true);
}

void eg_fw_apply_selection(struct eg_fleet_worker *d, const char *key, const char *value,
			   size_t len, int64_t rev, bool may_count)
{
	struct eg_fleet_worker *f = d;
	size_t raw_len = 0;
	char u[EG_UUID_TEXT_LEN], w[EG_UUID_TEXT_LEN];
	uint8_t id[EG_ID_BYTES], raw[EG_SEL_MAX_LEN];
	struct eg_fw_sel *s;
	struct eg_selection sel;
	enum eg_fleet_order order;
	const char *name = NULL;
	uint64_t keys_gen;
	unsigned reason;
	bool fresh;
	int rc;

	/* Judged without the lock first: a refused document (any number of
	 * junk keys, read by a full read beside the watch) never holds the
	 * locks the PUT handler and the readers need; one that is not
	 * counted takes them not at all. */
	keys_gen = keys_generation(d);
	reason = judge_selection(d, key, value, len, id, u, raw, &raw_len, &sel, &name);
	if (reason != EG_SEL_OK && !may_count)
		return;
	pthread_mutex_lock(&f->apply_lock);
	pthread_mutex_lock(&f->lock);
	/* Every write is judged on its signed content, never on its
	 * mod_revision (a restored store reuses revisions); the revision only
	 * says whether this write was judged (and counted) before. */
	fresh = may_count && rev > f->applied_rev;
	if (reason == EG_SEL_OK && f->keys_gen != keys_gen) {
		/* a key set applied meanwhile: verify again under it */
		enum eg_sel_err e = verify_sel(d, raw, raw_len, &sel);

		if (e != EG_SEL_OK) {
			reason = e;
			name = eg_sel_err_name(e);
		}
	}
	if (reason != EG_SEL_OK) {
		/* unknown-key included: judged again at every full read (the
		 * key set that brings its key may be a moment behind), and
		 * counted once, at the write */
		refuse_sel(d, reason, name, key, rev, fresh);
		goto out;
	}
	s = eg_fw_find(f, id);
	order = eg_fleet_order(s != NULL, s ? &s->sel : NULL, &sel);
	if (order == EG_FLEET_OLDER) {
		refuse_sel(d, EG_FW_SEL_OLDER, "older", key, rev, fresh);
		goto out;
	}
	if (order == EG_FLEET_NEWER) {
		struct eg_fw_sel next;

		memset(&next, 0, sizeof(next));
		memcpy(next.sandbox, id, EG_ID_BYTES);
		next.has_sel = true;
		next.sel = sel;
		memcpy(next.raw, raw, raw_len);
		next.raw_len = raw_len;
		next.sel_rev = rev;
		rc = store_selection(d, &next);
		if (rc)
			/* Applied anyway (the newer selection is the safer
			 * one to enforce), but a restart would not know it. */
			eg_fw_log(d, 3,
				  "fleet: sandbox %s: storing the selection failed: %s: a restart "
				  "may accept an older one",
				  u, strerror(-rc));
		if (!s)
			s = insert(f, id);
		if (!s) {
			eg_fw_log(d, 3, "fleet: sandbox %s: %s", u, strerror(ENOMEM));
			goto out;
		}
		s->has_sel = true;
		s->sel = sel;
		memcpy(s->raw, raw, raw_len);
		s->raw_len = raw_len;
		s->sel_rev = rev;
		eg_uuid_to_text(sel.worker, w);
		eg_fw_log(d, 6,
			  "fleet: selection applied: sandbox=%s worker=%s generation=%llu "
			  "activation=%u mod_revision=%lld",
			  u, w, (unsigned long long)sel.generation, sel.activation, (long long)rev);
	}
	/* NEWER or SAME: enforced again either way, so that a daemon killed
	 * between storing a selection and retiring the record it replaces
	 * retires that record (and acks it) at its first read after the
	 * restart. */
	if (enforce(d, s) || order == EG_FLEET_NEWER || fresh) {
		s->ack_dirty = true;
		pthread_cond_signal(&f->wake);
	}
out:
	pthread_mutex_unlock(&f->lock);
	pthread_mutex_unlock(&f->apply_lock);
}

/* A key set changed the keys in force: every selection in force verifies
 * again; one whose key was withdrawn stops counting (docs/fleet.md,
 * "Withdrawal"). Under lock. */
static void reverify(struct eg_fleet_worker *d)
{
	for (size_t i = 0; i < d->n_sels;) {
		struct eg_fw_sel *s = &d->sels[i];
		struct eg_selection sel;
		char u[EG_UUID_TEXT_LEN], kid[EG_KID_TEXT_LEN];
		enum eg_sel_err e = verify_sel(d, s->raw, s->raw_len, &sel);

		if (e == EG_SEL_OK) {
			i++;
			continue;
		}
		eg_uuid_to_text(s->sandbox, u);
		eg_key_id_format(s->sel.key_id, kid);
		eg_fw_log(d, 4,
			  "fleet: sandbox %s: selection generation %llu activation %u dropped: %s "
			  "(key %s); its record stays as it is, the next genuine selection "
			  "applies",
			  u, (unsigned long long)s->sel.generation, s->sel.activation,
			  eg_sel_err_name(e), kid);
		drop(d, s); /* the last entry moves to i */
	}
}

struct keys_ctx {
	struct eg_keyset ks;
};

static void refuse_ksd(struct eg_fleet_worker *d, unsigned reason, const char *name,
		       const struct eg_keyset_doc *doc, const char *key, int64_t rev, bool fresh)
{
	char k[1700];

	if (!fresh)
		return;
	d->refused_ksd[reason]++;
	if (!refusal_loggable(d))
		return;
	if (doc)
		eg_fw_log(d, 4,
			  "fleet: key set refused: %s (version %llu, applied %llu, floor %llu, "
			  "expires_at %llu): key %s mod_revision %lld",
			  name, (unsigned long long)doc->keyset_version,
			  (unsigned long long)d->keyset_version,
			  (unsigned long long)(d->keyset_floor > d->keyset_min_version
						   ? d->keyset_floor
						   : d->keyset_min_version),
			  (unsigned long long)doc->expires_at, key_text(key, k, sizeof(k)),
			  (long long)rev);
	else
		eg_fw_log(d, 4, "fleet: key set refused: %s: key %s mod_revision %lld", name,
			  key_text(key, k, sizeof(k)), (long long)rev);
}

void eg_fleet_worker_apply_keyset(struct eg_fleet_worker *d, const char *key, const char *value,
				  size_t len, int64_t rev)
{
	eg_fw_apply_keyset(d, key, value, len, rev, true);
}

void eg_fw_apply_keyset(struct eg_fleet_worker *d, const char *key, const char *value, size_t len,
			int64_t rev, bool may_count)
{
	struct eg_fleet_worker *f = d;
	uint8_t withdrawn[EG_KEYSET_MAX][EG_KEY_ID_LEN], raw[EG_KSD_MAX_LEN];
	uint8_t pks[EG_KEYSET_MAX][32];
	char err[EG_ERR_MAX] = "", kid[EG_KID_TEXT_LEN];
	struct eg_keyset_doc *doc = NULL;
	struct keys_ctx *cur = NULL;
	enum eg_ksd_decision dec;
	size_t raw_len = 0, n_withdrawn = 0;
	enum eg_ksd_err kerr;
	uint64_t floor;
	bool first, fresh;
	int rc;

	pthread_mutex_lock(&f->apply_lock);
	pthread_mutex_lock(&f->lock);
	if (strcmp(key, f->key_keyset))
		goto out;
	/* Ordered by its signed version and expiry alone; the revision says
	 * only whether this write was judged (and counted) before. */
	fresh = may_count && rev > f->applied_rev;
	first = !f->keyset_judged;
	f->keyset_judged = true;
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
		refuse_ksd(d, kerr, eg_ksd_err_name(kerr), NULL, key, rev, fresh);
		goto out;
	}
	eg_keyset_init(&cur->ks);
	d->be->keys_list(d->be_ctx, add_key, &cur->ks);
	floor = f->keyset_floor > f->keyset_min_version ? f->keyset_floor : f->keyset_min_version;
	dec = eg_ksd_decide_at(f->keyset_version, floor, (uint64_t)time(NULL), &cur->ks, doc,
			       withdrawn, &n_withdrawn);
	if (dec == EG_KSD_REFUSE_EQUAL && first) {
		/* The set applied before a restart (or a rewind), read again:
		 * not a replay. */
		if (!f->keyset_expires_at && doc->expires_at) {
			f->keyset_expires_at = doc->expires_at;
			store_keyset_state(d);
		}
		eg_fw_log(d, 6, "fleet: key set version %llu: applied already",
			  (unsigned long long)doc->keyset_version);
		goto out;
	}
	switch (dec) {
	case EG_KSD_APPLY:
		break;
	case EG_KSD_REFUSE_EQUAL:
		refuse_ksd(d, EG_FW_KSD_EQUAL, "refuse-equal", doc, key, rev, fresh);
		goto out;
	case EG_KSD_REFUSE_OLDER:
		refuse_ksd(d, EG_FW_KSD_OLDER, "refuse-older", doc, key, rev, fresh);
		goto out;
	case EG_KSD_REFUSE_EXPIRED:
		refuse_ksd(d, EG_FW_KSD_EXPIRED, "refuse-expired", doc, key, rev, fresh);
		goto out;
	case EG_KSD_REFUSE_FLOOR:
		refuse_ksd(d, EG_FW_KSD_FLOOR, "refuse-floor", doc, key, rev, fresh);
		goto out;
	}
	for (size_t i = 0; i < doc->n; i++)
		memcpy(pks[i], doc->keys[i].pk, 32);
	rc = d->be->keys_replace(d->be_ctx, (const uint8_t(*)[32])pks, doc->n, doc->keyset_version,
				 err, sizeof(err));
	if (rc) {
		f->refused_ksd[EG_FW_KSD_APPLY]++;
		eg_fw_log(d, 3, "fleet: key set version %llu: applying it failed: %s",
			  (unsigned long long)doc->keyset_version, err);
		if (rc != -ESTALE)
			goto out;
		/* The disk holds a newer version than memory believed. */
		d->be->keys_version(d->be_ctx, &f->keyset_version, NULL, 0);
		goto out;
	}
	f->keyset_version = doc->keyset_version;
	__atomic_store_n(&f->keys_gen, f->keys_gen + 1, __ATOMIC_RELEASE);
	f->keyset_expires_at = doc->expires_at;
	if (f->keyset_version > f->keyset_floor)
		f->keyset_floor = f->keyset_version;
	store_keyset_state(d);
	/* Withdrawal reaches everything signed: the selections in force
	 * verify again under the new keys. Then read again: selections
	 * refused unknown-key may verify now. */
	reverify(d);
	f->full_read_due = 1;
	eg_fw_log(d, 5,
		  "fleet: key set version %llu applied: %zu keys, %zu withdrawn, token cache "
		  "flushed, expires_at %llu (mod_revision %lld)",
		  (unsigned long long)doc->keyset_version, doc->n, n_withdrawn,
		  (unsigned long long)doc->expires_at, (long long)rev);
	for (size_t i = 0; i < n_withdrawn; i++) {
		eg_key_id_format(withdrawn[i], kid);
		eg_fw_log(d, 5, "fleet: key %s withdrawn", kid);
	}
out:
	pthread_mutex_unlock(&f->lock);
	pthread_mutex_unlock(&f->apply_lock);
	if (doc)
		sodium_memzero(doc, sizeof(*doc));
	free(doc);
	free(cur);
}

void eg_fw_enforce_all(struct eg_fleet_worker *d)
{
	pthread_mutex_lock(&d->apply_lock);
	pthread_mutex_lock(&d->lock);
	for (size_t i = 0; i < d->n_sels; i++)
		if (enforce(d, &d->sels[i])) {
			d->sels[i].ack_dirty = true;
			pthread_cond_signal(&d->wake);
		}
	pthread_mutex_unlock(&d->lock);
	pthread_mutex_unlock(&d->apply_lock);
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

	eg_fw_local_of(d, s->sandbox, &local);
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
