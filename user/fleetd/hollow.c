// SPDX-License-Identifier: Apache-2.0
/* The hollow backend (fleetd/hollow.h): records, keys and modes in memory,
 * the library's install rule and epoch rule on them. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/epoch_rule.h"
#include "core/fleet_apply.h"
#include "core/fleet_gate.h"
#include "core/identity.h"
#include "core/ids.h"
#include "core/keyset.h"
#include "core/selection.h"
#include "fleetd/hollow.h"

struct hollow_rec {
	struct eg_runtime_record rec;
	char mode[8]; /* its own mode: "enforce", "audit", "" inherit */
};

struct eg_fleet_hollow {
	pthread_mutex_t lock;
	uint8_t self[EG_ID_BYTES];
	char state_dir[512];
	struct eg_keyset keys;
	uint64_t keys_version;
	char global_mode[8];
	struct hollow_rec *recs;
	size_t n, cap;
	struct eg_fleet_hollow_counts counts;
};

static struct hollow_rec *find(struct eg_fleet_hollow *h, const uint8_t sandbox[EG_ID_BYTES])
{
	for (size_t i = 0; i < h->n; i++)
		if (!memcmp(h->recs[i].rec.sandbox, sandbox, EG_ID_BYTES))
			return &h->recs[i];
	return NULL;
}

int eg_fleet_hollow_new(const uint8_t *worker_id, const char *state_dir, const char *keys_dir,
			struct eg_fleet_hollow **out, char *err, size_t err_size)
{
	struct eg_fleet_hollow *h = calloc(1, sizeof(*h));
	char bad[512] = "";
	enum eg_key_err kerr;

	*out = NULL;
	if (!h) {
		snprintf(err, err_size, "hollow: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	pthread_mutex_init(&h->lock, NULL);
	memcpy(h->self, worker_id, EG_ID_BYTES);
	snprintf(h->state_dir, sizeof(h->state_dir), "%s", state_dir);
	snprintf(h->global_mode, sizeof(h->global_mode), "enforce");
	eg_keyset_init(&h->keys);
	if (keys_dir) {
		kerr = eg_keyset_load_path(&h->keys, keys_dir, bad, sizeof(bad));
		if (kerr != EG_KEY_OK) {
			snprintf(err, err_size, "hollow: keys %s: %s", bad[0] ? bad : keys_dir,
				 eg_key_err_name(kerr));
			eg_fleet_hollow_free(h);
			return -EINVAL;
		}
	}
	*out = h;
	return 0;
}

void eg_fleet_hollow_free(struct eg_fleet_hollow *h)
{
	if (!h)
		return;
	pthread_mutex_destroy(&h->lock);
	free(h->recs);
	free(h);
}

int eg_fleet_hollow_set_global_mode(struct eg_fleet_hollow *h, const char *mode)
{
	if (strcmp(mode, "enforce") && strcmp(mode, "audit"))
		return -EINVAL;
	pthread_mutex_lock(&h->lock);
	snprintf(h->global_mode, sizeof(h->global_mode), "%s", mode);
	pthread_mutex_unlock(&h->lock);
	return 0;
}

void eg_fleet_hollow_counts(struct eg_fleet_hollow *h, struct eg_fleet_hollow_counts *c)
{
	pthread_mutex_lock(&h->lock);
	*c = h->counts;
	c->records = h->n;
	pthread_mutex_unlock(&h->lock);
}

bool eg_fleet_hollow_admits(struct eg_fleet_hollow *h, const uint8_t sandbox[EG_ID_BYTES],
			    uint64_t generation, uint32_t activation)
{
	struct hollow_rec *r;
	bool yes;

	pthread_mutex_lock(&h->lock);
	r = find(h, sandbox);
	yes = r && !r->rec.retired && r->rec.generation == generation &&
	      r->rec.activation == activation;
	pthread_mutex_unlock(&h->lock);
	return yes;
}

static int hb_keys_version(void *be, uint64_t *version, char *err, size_t err_size)
{
	struct eg_fleet_hollow *h = be;

	(void)err;
	(void)err_size;
	pthread_mutex_lock(&h->lock);
	*version = h->keys_version;
	pthread_mutex_unlock(&h->lock);
	return 0;
}

static int hb_keys_list(void *be, int (*fn)(const char *kid, const uint8_t pk[32], void *ctx),
			void *ctx)
{
	struct eg_fleet_hollow *h = be;
	char kid[EG_KID_TEXT_LEN];
	int rc = 0;

	pthread_mutex_lock(&h->lock);
	for (size_t i = 0; i < h->keys.n && !rc; i++) {
		eg_key_id_format(h->keys.keys[i].kid, kid);
		rc = fn(kid, h->keys.keys[i].pk, ctx);
	}
	pthread_mutex_unlock(&h->lock);
	return rc;
}

/* The library's checks: 1 to EG_KEYSET_MAX keys, each a valid key, the
 * version above the applied one (-ESTALE otherwise, as there). */
static int hb_keys_replace(void *be, const uint8_t (*pks)[32], size_t n, uint64_t version,
			   char *err, size_t err_size)
{
	struct eg_fleet_hollow *h = be;
	struct eg_keyset next;
	enum eg_key_err kerr;
	int rc = 0;

	if (!n || n > EG_KEYSET_MAX) {
		snprintf(err, err_size, "key set: %zu keys (1 to %d)", n, EG_KEYSET_MAX);
		return -EINVAL;
	}
	eg_keyset_init(&next);
	for (size_t i = 0; i < n; i++) {
		kerr = eg_keyset_add(&next, pks[i], NULL);
		if (kerr != EG_KEY_OK) {
			snprintf(err, err_size, "key set: key %zu: %s", i, eg_key_err_name(kerr));
			return -EINVAL;
		}
	}
	pthread_mutex_lock(&h->lock);
	if (version <= h->keys_version) {
		snprintf(err, err_size, "key set version %llu: not above %llu",
			 (unsigned long long)version, (unsigned long long)h->keys_version);
		rc = -ESTALE;
	} else {
		h->keys = next;
		h->keys_version = version;
		h->counts.key_sets++;
	}
	pthread_mutex_unlock(&h->lock);
	return rc;
}

static const enum eg_install_outcome outcome_of[] = {
    [EG_EPOCH_NEW] = EG_INSTALLED_NEW,
    [EG_EPOCH_REPLACED] = EG_INSTALLED_REPLACED,
    [EG_EPOCH_REACTIVATED] = EG_INSTALLED_REACTIVATED,
    [EG_EPOCH_ACTIVATION] = EG_INSTALLED_ACTIVATION,
    [EG_EPOCH_UNCHANGED] = EG_INSTALLED_UNCHANGED,
};
static const char *const outcome_name[] = {"new", "replaced", "reactivated", "activation",
					   "unchanged"};

static int hb_install_mode(void *be, const struct eg_install_spec *spec, const char *mode,
			   struct eg_install_report *rep, char *err, size_t err_size)
{
	struct eg_fleet_hollow *h = be;
	struct eg_epoch_installed in;
	struct eg_epoch_asked asked = {.generation = spec->generation,
				       .activation = spec->activation};
	enum eg_epoch_outcome o;
	struct eg_identity id;
	struct hollow_rec *r;
	uint64_t epoch = 0;
	int rc;

	if (mode && strcmp(mode, "enforce") && strcmp(mode, "audit") && strcmp(mode, "inherit")) {
		snprintf(err, err_size, "mode %s: not enforce, audit or inherit", mode);
		return -EINVAL;
	}
	memset(rep, 0, sizeof(*rep));
	pthread_mutex_lock(&h->lock);
	rc = eg_fleet_gate_check(h->state_dir, h->self, true, &h->keys, spec, err, err_size);
	if (rc)
		goto refused;
	r = find(h, spec->sandbox);
	if (r) {
		in.generation = r->rec.generation;
		in.activation = r->rec.activation;
		in.retired = r->rec.retired;
		in.epoch = r->rec.epoch;
		asked.same_execution = !memcmp(r->rec.worker, spec->worker, EG_ID_BYTES) &&
				       !memcmp(r->rec.pod_uid, spec->pod_uid, EG_ID_BYTES) &&
				       r->rec.substrate == spec->substrate &&
				       r->rec.bridge.tgid == (uint32_t)spec->bridge_pid &&
				       r->rec.vmm.tgid == (uint32_t)spec->vmm_pid;
	}
	o = eg_epoch_rule(r ? &in : NULL, &asked, &epoch);
	if (eg_epoch_refused(o)) {
		snprintf(err, err_size, "generation %llu attempt %u: refused as stale",
			 (unsigned long long)spec->generation, spec->activation);
		rc = -ESTALE;
		goto refused;
	}
	if (!r) {
		if (h->n == h->cap) {
			size_t cap = h->cap ? h->cap * 2 : 16;
			struct hollow_rec *n = realloc(h->recs, cap * sizeof(*n));

			if (!n) {
				rc = -ENOMEM;
				snprintf(err, err_size, "hollow: %s", strerror(ENOMEM));
				goto refused;
			}
			h->recs = n;
			h->cap = cap;
		}
		r = &h->recs[h->n++];
		memset(r, 0, sizeof(*r));
	} else {
		rep->had_before = true;
		rep->before = r->rec;
	}
	eg_identity_from_spec(&id, spec);
	eg_identity_to_runtime(&r->rec, &id);
	r->rec.epoch = epoch;
	r->rec.retired = false;
	r->rec.bridge.tgid = (uint32_t)spec->bridge_pid;
	r->rec.vmm.tgid = (uint32_t)spec->vmm_pid;
	if (mode)
		snprintf(r->mode, sizeof(r->mode), "%s", strcmp(mode, "inherit") ? mode : "");
	rep->outcome = outcome_of[o];
	rep->outcome_name = outcome_name[rep->outcome];
	rep->after = r->rec;
	h->counts.installs++;
	pthread_mutex_unlock(&h->lock);
	return 0;
refused:
	h->counts.refused++;
	pthread_mutex_unlock(&h->lock);
	return rc;
}

static int hb_record(void *be, const uint8_t sandbox[EG_ID_BYTES], struct eg_runtime_record *out,
		     char *err, size_t err_size)
{
	struct eg_fleet_hollow *h = be;
	struct hollow_rec *r;
	int rc = 0;

	pthread_mutex_lock(&h->lock);
	r = find(h, sandbox);
	if (r)
		*out = r->rec;
	pthread_mutex_unlock(&h->lock);
	if (!r) {
		snprintf(err, err_size, "no runtime record");
		rc = -ENOENT;
	}
	return rc;
}

/* As eg_worker_retire_report: idempotent, the epoch moves at the retire
 * (the old execution's streams and grants die with it); no stream to cut. */
static int hb_retire_report(void *be, const uint8_t sandbox[EG_ID_BYTES],
			    struct eg_runtime_record *after, struct eg_stream_cuts *streams,
			    char *err, size_t err_size)
{
	struct eg_fleet_hollow *h = be;
	struct hollow_rec *r;

	if (streams)
		memset(streams, 0, sizeof(*streams));
	pthread_mutex_lock(&h->lock);
	r = find(h, sandbox);
	if (r && !r->rec.retired) {
		r->rec.retired = true;
		r->rec.epoch++;
		h->counts.retires++;
	}
	if (r)
		*after = r->rec;
	pthread_mutex_unlock(&h->lock);
	if (!r) {
		snprintf(err, err_size, "no runtime record");
		return -ENOENT;
	}
	return 0;
}

static int hb_mode(void *be, const uint8_t sandbox[EG_ID_BYTES], char *mode, size_t mode_size,
		   char *err, size_t err_size)
{
	struct eg_fleet_hollow *h = be;
	struct hollow_rec *r;

	(void)err;
	(void)err_size;
	pthread_mutex_lock(&h->lock);
	r = find(h, sandbox);
	snprintf(mode, mode_size, "%s", r && r->mode[0] ? r->mode : h->global_mode);
	pthread_mutex_unlock(&h->lock);
	return 0;
}

const struct eg_fleet_backend eg_fleet_backend_hollow = {
    .name = "hollow",
    .keys_version = hb_keys_version,
    .keys_list = hb_keys_list,
    .keys_replace = hb_keys_replace,
    .install_mode = hb_install_mode,
    .record = hb_record,
    .retire_report = hb_retire_report,
    .mode = hb_mode,
};
