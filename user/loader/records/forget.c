// SPDX-License-Identifier: Apache-2.0
/* forget: removes a retired sandbox from the maps, and the read side that
 * lists and counts what points at a record (list / show).
 *
 * Order keeps every intermediate state fail-closed: endpoints go before the
 * record, so no endpoint ever points at a missing record while it still
 * resolves (a registered endpoint without a record denies; an endpoint that
 * is gone is simply unregistered, which is what forget means). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include "core/ids.h"
#include "loader/revokers/cut_intent.h"
#include "loader/endpoints/path_filter.h"
#include "loader/records/runtime.h"

/* The endpoint maps and their key sizes. */
static const struct {
	enum eg_map_id map;
	size_t key_size;
} endpoint_maps[] = {
    {EG_MAP_ENDPOINTS, sizeof(struct eg_path_key)},
    {EG_MAP_VSOCK_ENDPOINTS, sizeof(struct eg_vsock_key)},
    {EG_MAP_INODE_ENDPOINTS, sizeof(struct eg_inode_key)},
    {EG_MAP_INET_ENDPOINTS, sizeof(struct eg_inet_key)},
};

static int filter_drop(struct eg_runtime *rt, const struct eg_path_key *key)
{
	int fd = rt->maps.fd[EG_MAP_PATH_FILTER];
	struct eg_path_filter_key fk;
	__u32 count = 0;

	eg_path_filter_key_make(key, &fk);
	if (bpf_map_lookup_elem(fd, &fk, &count))
		return errno == ENOENT ? 0 : -errno;
	/* The hint bit stays set: a stale bit costs one filter lookup, never
	 * a wrong verdict (abi.h). */
	if (count > 1) {
		count--;
		return bpf_map_update_elem(fd, &fk, &count, BPF_EXIST) ? -errno : 0;
	}
	return bpf_map_delete_elem(fd, &fk) && errno != ENOENT ? -errno : 0;
}

union endpoint_key {
	struct eg_path_key path;
	struct eg_vsock_key vsock;
	struct eg_inode_key inode;
	struct eg_inet_key inet;
};

#define FORGET_MAX_KEYS 256 /* far above the 3 x 16 one install can register */

/* Counts the endpoints of sandbox in every endpoint map and, with fn, calls
 * it on each once the walk is over (deleting under the cursor would make
 * get_next_key start over). */
static int endpoints_walk(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES],
			  int (*fn)(struct eg_runtime *, enum eg_map_id, const void *key),
			  unsigned *count)
{
	static __thread union endpoint_key keys[FORGET_MAX_KEYS];
	static __thread enum eg_map_id maps[FORGET_MAX_KEYS];
	union endpoint_key key, next;
	struct eg_endpoint ep;
	size_t n = 0;
	int rc;

	*count = 0;
	for (size_t m = 0; m < sizeof(endpoint_maps) / sizeof(endpoint_maps[0]); m++) {
		enum eg_map_id map = endpoint_maps[m].map;
		int fd = rt->maps.fd[map];
		bool have = false;

		if (fd < 0)
			continue;
		while (!bpf_map_get_next_key(fd, have ? &key : NULL, &next)) {
			key = next;
			have = true;
			if (eg_endpoint_read(&rt->maps, map, &key, &ep) ||
			    memcmp(ep.sandbox, sandbox, EG_ID_BYTES))
				continue;
			(*count)++;
			if (fn && n < FORGET_MAX_KEYS) {
				memset(&keys[n], 0, sizeof(keys[n]));
				memcpy(&keys[n], &key, endpoint_maps[m].key_size);
				maps[n++] = map;
			}
		}
	}
	if (fn && *count > n)
		return -E2BIG;
	for (size_t i = 0; fn && i < n; i++) {
		rc = fn(rt, maps[i], &keys[i]);
		if (rc)
			return rc;
	}
	return 0;
}

static int endpoint_delete(struct eg_runtime *rt, enum eg_map_id map, const void *key)
{
	if (bpf_map_delete_elem(rt->maps.fd[map], key) && errno != ENOENT)
		return -errno;
	return map == EG_MAP_ENDPOINTS ? filter_drop(rt, key) : 0;
}

int eg_endpoints_count(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES], unsigned *count)
{
	return endpoints_walk(rt, sandbox, NULL, count);
}

int eg_service_addrs_of(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES],
			struct eg_inet_key *out, size_t max, size_t *n)
{
	int fd = rt->maps.fd[EG_MAP_INET_ENDPOINTS];
	struct eg_inet_key key, next;
	struct eg_endpoint ep;
	bool have = false;

	*n = 0;
	if (fd < 0)
		return 0; /* no TCP tier: no addresses */
	while (!bpf_map_get_next_key(fd, have ? &key : NULL, &next)) {
		key = next;
		have = true;
		if (eg_endpoint_read(&rt->maps, EG_MAP_INET_ENDPOINTS, &key, &ep) ||
		    ep.role != EG_ROLE_SERVICE || memcmp(ep.sandbox, sandbox, EG_ID_BYTES))
			continue;
		if (*n == max)
			return -E2BIG;
		out[(*n)++] = key;
	}
	return errno == ENOENT ? 0 : -errno;
}

int eg_forget(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES], unsigned *endpoints,
	      char *err, size_t err_size)
{
	return eg_forget_report(rt, sandbox, endpoints, NULL, err, err_size);
}

int eg_forget_report(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES], unsigned *endpoints,
		     struct eg_revoke_report *streams, char *err, size_t err_size)
{
	struct eg_revoke_report local;
	struct eg_exec_record rec;
	char s[EG_UUID_TEXT_LEN];
	unsigned grants;
	int rc;

	eg_uuid_format(sandbox, s);
	*endpoints = 0;
	if (!streams)
		streams = &local;
	memset(streams, 0, sizeof(*streams));
	rc = eg_record_read(&rt->maps, sandbox, &rec);
	if (rc) {
		snprintf(err, err_size, "sandbox %s: %s", s,
			 rc == -ENOENT ? "no runtime record" : strerror(-rc));
		return rc;
	}
	if (rec.state != EG_RECORD_RETIRED) {
		snprintf(err, err_size,
			 "sandbox %s: record is active (generation %llu): retire it first", s,
			 (unsigned long long)rec.generation);
		return -EBUSY;
	}
	/* A retire killed before its cut left the intent in the record:
	 * deleting the record would lose it, with the streams still open
	 * (and a later install would start again at epoch 1, the epoch some
	 * of them carry). Cut first; on failure nothing is deleted. */
	if (rec.cut_pending) {
		rc = eg_cut_finish(rt, &rec, streams);
		if (rc) {
			snprintf(err, err_size,
				 "sandbox %s: finishing the interrupted stream cut: %s: not "
				 "forgotten",
				 s, streams->err[0] ? streams->err : strerror(-rc));
			return rc;
		}
	}
	rc = endpoints_walk(rt, sandbox, endpoint_delete, endpoints);
	eg_admit_invalidate(&rt->maps, sandbox); /* retire did already; a delete denies too */
	if (rc) {
		snprintf(err, err_size, "sandbox %s: deleting endpoints: %s", s, strerror(-rc));
		return rc;
	}
	/* Retirement already killed every grant; these are leftovers. */
	eg_grants_gc(rt, sandbox, &grants);
	rc = bpf_map_delete_elem(rt->maps.fd[EG_MAP_RECORDS], sandbox) && errno != ENOENT ? -errno
											  : 0;
	eg_admit_invalidate(&rt->maps, sandbox);
	if (rc) {
		snprintf(err, err_size, "sandbox %s: deleting the record: %s", s, strerror(-rc));
		return rc;
	}
	return 0;
}
