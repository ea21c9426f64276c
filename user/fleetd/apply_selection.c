// SPDX-License-Identifier: Apache-2.0
/* A selection read from etcd (fleetd/worker.h,
 * eg_fleet_worker_apply_selection): judged by core/fleet_apply.c, stored,
 * and enforced on the worker's records (a record it does not name is
 * retired). */
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

/* Counted and logged only when this write was not judged before in this
 * store (fresh): a full read meets every refused key again. */
static void refuse_sel(struct eg_fleet_worker *d, unsigned reason, const char *name,
		       const char *key, int64_t rev, bool fresh)
{
	char k[1700];

	if (!fresh)
		return;
	d->refused_sel[reason]++;
	if (eg_fw_refusal_loggable(d))
		eg_fw_log(d, 4, "fleet: selection refused: %s: key %s mod_revision %lld", name,
			  eg_fw_key_text(key, k, sizeof(k)), (long long)rev);
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
	       memcmp(s->sel.id.worker, d->self, EG_ID_BYTES)
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
		serr = eg_fw_verify_sel(d, raw, *raw_len, sel);
	*name = eg_sel_err_name(serr);
	if (serr != EG_SEL_OK)
		return serr;
	*name = "wrong-sandbox";
	if (memcmp(sel->id.sandbox, id, EG_ID_BYTES))
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
		enum eg_sel_err e = eg_fw_verify_sel(d, raw, raw_len, &sel);

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
		rc = eg_fw_store_selection(d, &next);
		if (rc)
			/* Applied anyway (the newer selection is the safer
			 * one to enforce), but a restart would not know it. */
			eg_fw_log(d, 3,
				  "fleet: sandbox %s: storing the selection failed: %s: a restart "
				  "may accept an older one",
				  u, strerror(-rc));
		if (!s)
			s = eg_fw_insert(f, id);
		if (!s) {
			eg_fw_log(d, 3, "fleet: sandbox %s: %s", u, strerror(ENOMEM));
			goto out;
		}
		s->has_sel = true;
		s->sel = sel;
		memcpy(s->raw, raw, raw_len);
		s->raw_len = raw_len;
		s->sel_rev = rev;
		eg_uuid_to_text(sel.id.worker, w);
		eg_fw_log(d, 6,
			  "fleet: selection applied: sandbox=%s worker=%s generation=%llu "
			  "activation=%u mod_revision=%lld",
			  u, w, (unsigned long long)sel.id.generation, sel.id.activation,
			  (long long)rev);
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
