// SPDX-License-Identifier: Apache-2.0
/* A key-set document read from etcd (fleetd/worker.h,
 * eg_fleet_worker_apply_keyset): judged by core/fleet_apply.c, applied to
 * the worker's key set, the selections in force verified again, and the
 * version applied kept on disk. */
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

/* <state_dir>/fleet/keyset: "<version> <expires_at>\n" of the key set
 * applied last. The version is the floor a restart keeps (with
 * <state_dir>/keyset.version, which the library keeps); expires_at says
 * when the applied set goes stale. */
static void keyset_path(const struct eg_fleet_worker *d, char *out, size_t size)
{
	snprintf(out, size, "%s/fleet/keyset", d->state_dir);
}

void eg_fw_load_keyset_state(struct eg_fleet_worker *d)
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

static int add_key(const char *kid, const uint8_t pk[32], void *ctx)
{
	(void)kid;
	eg_keyset_add(ctx, pk, NULL);
	return 0;
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
		enum eg_sel_err e = eg_fw_verify_sel(d, s->raw, s->raw_len, &sel);

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
			  u, (unsigned long long)s->sel.id.generation, s->sel.id.activation,
			  eg_sel_err_name(e), kid);
		eg_fw_drop(d, s); /* the last entry moves to i */
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
	if (!eg_fw_refusal_loggable(d))
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
			  (unsigned long long)doc->expires_at, eg_fw_key_text(key, k, sizeof(k)),
			  (long long)rev);
	else
		eg_fw_log(d, 4, "fleet: key set refused: %s: key %s mod_revision %lld", name,
			  eg_fw_key_text(key, k, sizeof(k)), (long long)rev);
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
	fresh =
	    may_count && rev > f->applied_rev && rev != f->keyset_rev && rev != f->keyset_ahead_rev;
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
	f->keyset_rev = rev;
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
