// SPDX-License-Identifier: Apache-2.0
/* The worker's acks signed with its node key (docs/fleet.md, "Acks"): the
 * key loaded once at open, the effective mode read for each ack, the
 * signed form made by user/fleet/ack.c, so that the fence's reader and this
 * writer share one codec; and the recheck that keeps an ack true when the
 * record or the mode changed behind the daemon's back. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sodium.h>
#include "core/fleet_apply.h"
#include "core/ids.h"
#include "core/key_file.h"
#include "fleet/ack.h"
#include "fleetd/worker_impl.h"

/* Loaded at the first ack, not at open: an ack no one can verify is worth
 * nothing to a fence, so until it loads no ack is written (logged,
 * retried with the acker's backoff). */
static int node_key_load(struct eg_fleet_worker *d, char *err, size_t err_size)
{
	uint8_t seed[crypto_sign_SEEDBYTES], pk[crypto_sign_PUBLICKEYBYTES];
	char path[sizeof(d->state_dir) + 16];
	enum eg_key_err kerr;

	/* execgated creates it before the fleet starts (eg_node_key_init,
	 * bound to worker_id there) */
	snprintf(path, sizeof(path), "%s/node.seed", d->state_dir);
	kerr = eg_key_file_load(path, EG_KEY_ALG_ED25519, EG_KEY_KIND_SECRET, seed, sizeof(seed),
				NULL);
	if (kerr != EG_KEY_OK) {
		snprintf(err, err_size, "fleet: node key %s: %s: acks cannot be signed", path,
			 eg_key_err_name(kerr));
		return -EINVAL;
	}
	crypto_sign_seed_keypair(pk, d->node_sk, seed);
	sodium_memzero(seed, sizeof(seed));
	d->have_node_key = true;
	return 0;
}

/* The sandbox's effective mode as o's "mode": its own, else the global
 * one, what the hooks read. An error leaves the ack unwritten (retried):
 * an ack never guesses the mode. */
static int ack_mode(struct eg_fleet_worker *d, const uint8_t sandbox[EG_ID_BYTES], json_t *o)
{
	char mode[16], err[EG_ERR_MAX];
	int rc;

	rc = d->be->mode(d->be_ctx, sandbox, mode, sizeof(mode), err, sizeof(err));
	if (rc)
		return rc;
	if (strcmp(mode, "enforce") && strcmp(mode, "audit"))
		return -EPROTO;
	return json_object_set_new(o, "mode", json_string(mode)) ? -ENOMEM : 0;
}

/* What the ack says but revision and acked_at (which move without the
 * sandbox changing), as an object in the contract's member order, and
 * its fingerprint: an ack is written again when that changes. */
static json_t *ack_truth(struct eg_fleet_worker *d, const struct eg_fw_sel *s,
			 uint8_t fp[EG_FW_ACK_FP_LEN], int *rc)
{
	char self[EG_UUID_TEXT_LEN], sb[EG_UUID_TEXT_LEN], w[EG_UUID_TEXT_LEN], *text;
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
	o = json_pack("{s:i,s:s,s:s,s:o,s:s}", "schema_version", EG_ACK_SCHEMA_VERSION, "worker",
		      self, "sandbox", sb, "selection", sel, "state", eg_fleet_state_name(st));
	*rc = -ENOMEM;
	if (!o)
		return NULL;
	if (local.has_record) {
		json_object_set_new(o, "generation", json_integer((json_int_t)local.generation));
		json_object_set_new(o, "activation", json_integer((json_int_t)local.activation));
		json_object_set_new(o, "epoch", json_integer((json_int_t)local.epoch));
	} else {
		json_object_set_new(o, "generation", json_null());
		json_object_set_new(o, "activation", json_null());
		json_object_set_new(o, "epoch", json_null());
	}
	*rc = ack_mode(d, s->sandbox, o);
	text = *rc ? NULL : json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (!*rc && !text)
		*rc = -ENOMEM;
	if (*rc) {
		json_decref(o);
		return NULL;
	}
	crypto_generichash(fp, EG_FW_ACK_FP_LEN, (const uint8_t *)text, strlen(text), NULL, 0);
	free(text);
	return o;
}

int eg_fw_ack_signed(struct eg_fleet_worker *d, const struct eg_fw_sel *s, char **out,
		     uint8_t fp[EG_FW_ACK_FP_LEN])
{
	char *plain, err[EG_ERR_MAX];
	json_t *o;
	int rc;

	*out = NULL;
	if (!d->have_node_key) {
		rc = node_key_load(d, err, sizeof(err));
		if (rc) {
			eg_fw_log(d, 3, "%s", err);
			return rc;
		}
	}
	o = ack_truth(d, s, fp, &rc);
	if (!o)
		return rc;
	json_object_set_new(o, "revision", json_integer((json_int_t)d->applied_rev));
	json_object_set_new(o, "acked_at", json_integer((json_int_t)time(NULL)));
	plain = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (!plain)
		return -ENOMEM;
	rc = eg_ack_sign(plain, strlen(plain), d->node_sk, out);
	free(plain);
	return rc;
}

void eg_fw_ack_recheck(struct eg_fleet_worker *d)
{
	uint8_t fp[EG_FW_ACK_FP_LEN];
	bool any = false;
	json_t *o;
	int rc;

	/* A change made outside this daemon (`execgate install`, `execgate
	 * mode` on the same state) reaches no code path here: compare what
	 * each ack would say now with what was written, one sandbox per lock
	 * hold so that a PUT never waits for the whole scan. */
	for (size_t i = 0;; i++) {
		struct eg_fw_sel *s;

		pthread_mutex_lock(&d->lock);
		if (i >= d->n_sels || d->stopping) {
			if (any)
				pthread_cond_signal(&d->wake);
			pthread_mutex_unlock(&d->lock);
			return;
		}
		s = &d->sels[i];
		if (s->has_sel && s->ack_written && !s->ack_dirty && !s->retiring) {
			o = ack_truth(d, s, fp, &rc);
			json_decref(o);
			if (o && memcmp(fp, s->ack_fp, sizeof(fp))) {
				s->ack_dirty = true;
				any = true;
			}
		}
		pthread_mutex_unlock(&d->lock);
	}
}
