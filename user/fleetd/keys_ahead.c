/* SPDX-License-Identifier: Apache-2.0 */
/* The key set read ahead of its watch stream (fleetd/worker_impl.h,
 * eg_fw_keys_ahead), for a batch that holds a selection of a key the
 * worker does not hold. */
#include <string.h>
#include "fleet/etcd.h"
#include "fleetd/worker_impl.h"

void eg_fw_apply_keyset_ahead(struct eg_fleet_worker *d, const char *key, const char *value,
			      size_t len, int64_t rev)
{
	eg_fw_apply_keyset(d, key, value, len, rev, true);
	pthread_mutex_lock(&d->lock);
	d->keyset_ahead_rev = rev;
	pthread_mutex_unlock(&d->lock);
}

/* At most one read ahead of the key-set stream a second that brings no
 * new key set: a writer of this worker's prefix who fills it with
 * selections of unknown keys gets one read of one key a second, and the
 * refusals (as before). A read that applied a key set costs no turn. */
#define KEYS_AHEAD_EVERY_NS (1000ull * 1000 * 1000)

/* The key set and the selections come on two streams, each in revision
 * order, not in order with each other: a selection signed by a key that a
 * key set put just before it brings can arrive first, and would be
 * refused unknown-key (then applied by the full read the key set starts:
 * a refusal logged and counted for a selection the control plane
 * published correctly). When a batch holds a selection whose key the
 * worker does not hold, the key-set key is read first (a read answers at
 * the store's newest revision, so at least the batch's) and judged as the
 * stream would judge it; its delivery on the stream is then judged as
 * read already. */
void eg_fw_keys_ahead(struct eg_fleet_worker *d, struct eg_etcd *e, const struct eg_etcd_event *ev,
		      size_t n, uint64_t *ahead_at)
{
	struct eg_etcd_range r = {0};
	char err[EG_ERR_MAX];
	uint64_t now, gen;
	size_t i;

	for (i = 0; i < n; i++)
		if (ev[i].type == EG_ETCD_PUT && strcmp(ev[i].kv.key, d->key_keyset) &&
		    eg_fw_sel_key_unknown(d, ev[i].kv.value, ev[i].kv.value_len))
			break;
	now = eg_fw_mono_ns();
	if (i == n || (*ahead_at && now - *ahead_at < KEYS_AHEAD_EVERY_NS))
		return;
	*ahead_at = now;
	gen = __atomic_load_n(&d->keys_gen, __ATOMIC_ACQUIRE);
	/* no answer: the batch is judged as it is, as before */
	if (eg_etcd_get(e, d->key_keyset, false, &r, err, sizeof(err)))
		return;
	eg_fw_heard(d, e, r.revision);
	for (i = 0; i < r.n; i++)
		eg_fw_apply_keyset_ahead(d, r.kvs[i].key, r.kvs[i].value, r.kvs[i].value_len,
					 r.kvs[i].mod_revision);
	eg_etcd_range_free(&r);
	if (__atomic_load_n(&d->keys_gen, __ATOMIC_ACQUIRE) != gen)
		*ahead_at = 0;
}
