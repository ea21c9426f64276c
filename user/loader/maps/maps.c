// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "loader/maps/maps.h"
#include "loader/maps/pins.h"
#include "loader/process/task_start.h"

const char *const eg_map_names[EG_MAP__COUNT] = {
    [EG_MAP_RECORDS] = "eg_records",
    [EG_MAP_ENDPOINTS] = "eg_endpoints",
    [EG_MAP_PATH_FILTER] = "eg_path_filter",
    [EG_MAP_GRANTS] = "eg_grants",
    [EG_MAP_COUNTERS] = "eg_counters",
    [EG_MAP_EVENTS] = "eg_events",
    [EG_MAP_SK_TAGS] = "eg_sk_tags",
    [EG_MAP_VSOCK_ENDPOINTS] = "eg_vsock_endpoints",
    [EG_MAP_INODE_ENDPOINTS] = "eg_inode_endpoints",
    [EG_MAP_LISTENER_TAGS] = "eg_listener_tags",
    [EG_MAP_PATH_HINT] = "eg_path_hint",
    [EG_MAP_INET_ENDPOINTS] = "eg_inet_endpoints",
    [EG_MAP_SERVICE_GRANTS] = "eg_service_grants",
    [EG_MAP_INET_TAGS] = "eg_inet_tags",
    [EG_MAP_INET_NETNS] = "eg_inet_netns",
    [EG_MAP_INET_HINT] = "eg_inet_hint",
    [EG_MAP_MODE] = "eg_mode",
    [EG_MAP_WOULD_DENY] = "eg_would_deny",
    [EG_MAP_CLOCK] = "eg_clock",
    [EG_MAP_ADMIT_CACHE] = "eg_admit_cache",
    [EG_MAP_ADMIT_GEN] = "eg_admit_gen",
};

#define ADMIT_GEN_BYTES ((size_t)EG_ADMIT_STRIPES * sizeof(__u64))

void eg_maps_close(struct eg_maps *m)
{
	if (m->admit_gen)
		munmap(m->admit_gen, ADMIT_GEN_BYTES);
	m->admit_gen = NULL;
	for (int i = 0; i < EG_MAP__COUNT; i++) {
		if (m->fd[i] >= 0)
			close(m->fd[i]);
		m->fd[i] = -1;
	}
}

int eg_maps_open(struct eg_maps *m, const char *pin_dir, char *err, size_t err_size)
{
	char path[EG_PIN_PATH_MAX];
	void *gen;
	int rc;

	m->admit_gen = NULL;
	for (int i = 0; i < EG_MAP__COUNT; i++)
		m->fd[i] = -1;
	for (int i = 0; i < EG_MAP__COUNT; i++) {
		rc = eg_pin_path(path, sizeof(path), pin_dir, eg_map_names[i]);
		if (rc)
			goto fail;
		m->fd[i] = bpf_obj_get(path);
		if (m->fd[i] < 0) {
			rc = -errno;
			if (rc == -ENOENT)
				snprintf(err, err_size,
					 "pin dir %s: not loaded (no %s; run execgate load)",
					 pin_dir, eg_map_names[i]);
			else
				snprintf(err, err_size, "map %s: %s", path, strerror(-rc));
			goto fail;
		}
	}
	/* The writers' side of the cache's generation words: an atomic add
	 * on the mapping, no syscall, no lost step between two writers. */
	gen = mmap(NULL, ADMIT_GEN_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED,
		   m->fd[EG_MAP_ADMIT_GEN], 0);
	if (gen == MAP_FAILED) {
		rc = -errno;
		snprintf(err, err_size, "map %s/%s: mapping it: %s", pin_dir,
			 eg_map_names[EG_MAP_ADMIT_GEN], strerror(-rc));
		goto fail;
	}
	m->admit_gen = gen;
	/* This process's identities (installs, admits) then come from the
	 * task iterator this pin dir's load pinned, not from a load of its own. */
	eg_task_start_use_pins(pin_dir);
	return 0;
fail:
	eg_maps_close(m);
	return rc;
}

static int ret_errno(int rc)
{
	return rc ? -errno : 0;
}

__u32 eg_map_kernel_id(int fd)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

int eg_record_read(const struct eg_maps *m, const __u8 sandbox[EG_ID_BYTES],
		   struct eg_exec_record *out)
{
	return ret_errno(
	    bpf_map_lookup_elem_flags(m->fd[EG_MAP_RECORDS], sandbox, out, BPF_F_LOCK));
}

void eg_admit_invalidate(const struct eg_maps *m, const __u8 sandbox[EG_ID_BYTES])
{
	__atomic_fetch_add(&m->admit_gen[eg_admit_stripe(sandbox)], 1, __ATOMIC_SEQ_CST);
}

/* Any record write can deny (state, epoch, generation, bridge), and it is
 * rare: every one moves the word. */
int eg_record_write(const struct eg_maps *m, const struct eg_exec_record *rec)
{
	int rc =
	    ret_errno(bpf_map_update_elem(m->fd[EG_MAP_RECORDS], rec->sandbox, rec, BPF_F_LOCK));

	eg_admit_invalidate(m, rec->sandbox); /* a failed write may have landed */
	return rc;
}

int eg_endpoint_read(const struct eg_maps *m, enum eg_map_id map, const void *key,
		     struct eg_endpoint *out)
{
	return ret_errno(bpf_map_lookup_elem_flags(m->fd[map], key, out, BPF_F_LOCK));
}

/* Re-pointing an endpoint denies what its old sandbox was allowed there. */
int eg_endpoint_write(const struct eg_maps *m, enum eg_map_id map, const void *key,
		      const struct eg_endpoint *ep)
{
	struct eg_endpoint old;
	bool had = !eg_endpoint_read(m, map, key, &old);
	int rc = ret_errno(bpf_map_update_elem(m->fd[map], key, ep, BPF_F_LOCK));

	if (had && (old.role != ep->role || memcmp(old.sandbox, ep->sandbox, EG_ID_BYTES)))
		eg_admit_invalidate(m, old.sandbox);
	return rc;
}

int eg_grant_read(const struct eg_maps *m, const struct eg_grant_key *key, struct eg_grant *out)
{
	return ret_errno(bpf_map_lookup_elem_flags(m->fd[EG_MAP_GRANTS], key, out, BPF_F_LOCK));
}

/* A grant written over one it does not merely extend (another epoch or
 * generation, an earlier expiry: a revocation's tombstone is one) denies
 * what the old one allowed. A write that extends it keeps the cache's
 * entries: they end at the old expiry and are made again. Admissions
 * write with eg_grant_admit_write(), which reads nothing. */
int eg_grant_write(const struct eg_maps *m, const struct eg_grant *g)
{
	struct eg_grant old;
	bool had = !eg_grant_read(m, &g->key, &old);
	int rc = ret_errno(bpf_map_update_elem(m->fd[EG_MAP_GRANTS], &g->key, g, BPF_F_LOCK));

	if (had && (old.epoch != g->epoch || old.generation != g->generation ||
		    g->expiry_ns < old.expiry_ns))
		eg_admit_invalidate(m, g->key.sandbox);
	return rc;
}

int eg_grant_admit_write(const struct eg_maps *m, const struct eg_grant *g)
{
	return ret_errno(bpf_map_update_elem(m->fd[EG_MAP_GRANTS], &g->key, g, BPF_F_LOCK));
}

int eg_counters_read(const struct eg_maps *m, __u64 out[EG_K_REASON_COUNT])
{
	int ncpu = libbpf_num_possible_cpus();
	struct eg_cpu_counters slot;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	if (ncpu > EG_COUNTER_CPUS)
		return -E2BIG;
	memset(out, 0, EG_K_REASON_COUNT * sizeof(out[0]));
	for (__u32 cpu = 0; cpu < (__u32)ncpu; cpu++) {
		if (bpf_map_lookup_elem(m->fd[EG_MAP_COUNTERS], &cpu, &slot))
			return -errno;
		for (int r = 0; r < EG_K_REASON_COUNT; r++)
			out[r] += slot.n[r];
	}
	return 0;
}

int eg_mode_read(const struct eg_maps *m, struct eg_mode_word *w)
{
	__u32 zero = 0;

	return ret_errno(bpf_map_lookup_elem(m->fd[EG_MAP_MODE], &zero, w));
}

int eg_mode_write(const struct eg_maps *m, const struct eg_mode_word *w)
{
	__u32 zero = 0;

	return ret_errno(bpf_map_update_elem(m->fd[EG_MAP_MODE], &zero, w, BPF_ANY));
}

int eg_would_deny_read(const struct eg_maps *m, __u64 out[EG_HOOK_SLOTS][EG_COUNTER_SLOTS])
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *vals;
	int rc = 0;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	memset(out, 0, sizeof(__u64) * EG_HOOK_SLOTS * EG_COUNTER_SLOTS);
	for (__u32 h = 0; h < EG_HOOK_SLOTS && !rc; h++)
		for (__u32 r = 0; r < EG_COUNTER_SLOTS; r++) {
			__u32 key = EG_WOULD_DENY_KEY(h, r);

			if (bpf_map_lookup_elem(m->fd[EG_MAP_WOULD_DENY], &key, vals)) {
				rc = -errno;
				break;
			}
			for (int c = 0; c < ncpu; c++)
				out[h][r] += vals[c];
		}
	free(vals);
	return rc;
}

/* The buffers of one lookup_batch call: 64 KiB of keys and values, which
 * for the record map (16 + 176 bytes an element) is 341 records a call, for
 * the tag map (8 + 40) 1 365 tags. Every CLI call and the daemon's cut
 * check walk the records, so this is allocated each time: small. */
#define EG_WALK_BYTES (64u << 10)

static int grow(void **keys, void **vals, __u32 chunk, const struct bpf_map_info *info)
{
	void *k = realloc(*keys, (size_t)chunk * info->key_size), *v;

	if (!k)
		return -ENOMEM;
	*keys = k;
	v = realloc(*vals, (size_t)chunk * info->value_size);
	if (!v)
		return -ENOMEM;
	*vals = v;
	return 0;
}

/* eg_map_walk, with the map's info already read. */
static int walk(int fd, const struct bpf_map_info *info, __u64 elem_flags, eg_map_walk_fn fn,
		void *arg)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = elem_flags);
	__u32 chunk = EG_WALK_BYTES / (info->key_size + info->value_size), n, batch = 0;
	void *keys = NULL, *vals = NULL;
	bool first = true;
	int rc;

	if (info->type != BPF_MAP_TYPE_HASH && info->type != BPF_MAP_TYPE_LRU_HASH)
		return -EINVAL; /* a per-CPU value would not fit the buffers */
	if (chunk > info->max_entries)
		chunk = info->max_entries;
	if (!chunk)
		chunk = 1;
	/* Not get_next_key: given a key deleted since the previous call, that
	 * starts over from the first bucket, and a walk of a map whose entries
	 * come and go met some of them twice or more (a 65 536-entry tag map
	 * holding 60 000 was counted as 115 873). A batch goes by bucket index
	 * (a u32 for a hash map) and copies each bucket at once. */
	rc = grow(&keys, &vals, chunk, info);
	while (!rc) {
		n = chunk;
		rc = bpf_map_lookup_batch(fd, first ? NULL : &batch, &batch, keys, vals, &n, &opts);
		if (rc == -ENOSPC && chunk < info->max_entries) {
			/* one bucket holds more elements than a chunk */
			chunk = chunk * 2 < info->max_entries ? chunk * 2 : info->max_entries;
			rc = grow(&keys, &vals, chunk, info);
			continue;
		}
		if (rc && rc != -ENOENT)
			break;
		for (__u32 i = 0; i < n; i++) {
			int stop = fn((const char *)keys + (size_t)i * info->key_size,
				      (const char *)vals + (size_t)i * info->value_size, arg);

			if (stop) {
				rc = stop;
				goto cleanup;
			}
		}
		if (rc == -ENOENT) {
			rc = 0; /* that was the last bucket */
			break;
		}
		first = false;
	}
cleanup:
	free(keys);
	free(vals);
	return rc;
}

/* Whether fd is a BPF map, from its fdinfo: the kernel answers
 * BPF_OBJ_GET_INFO_BY_FD for any BPF object, and on some kernels a
 * program's info read as a map's names a hash map of garbage sizes. A pin
 * replaced by another object must read as an error, the same on every
 * kernel. Without /proc, as no check. */
static bool fd_is_map(int fd)
{
	char path[64], buf[512];
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return true;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return true;
	buf[n] = 0;
	return strstr(buf, "\nmap_type:") != NULL;
}

/* The map's info, or -EINVAL when fd is another BPF object: what a map
 * call on one gets. */
static int map_info(int fd, struct bpf_map_info *info)
{
	__u32 len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	if (bpf_obj_get_info_by_fd(fd, info, &len))
		return -errno;
	return fd_is_map(fd) ? 0 : -EINVAL;
}

int eg_map_walk(int fd, __u64 elem_flags, eg_map_walk_fn fn, void *arg)
{
	struct bpf_map_info info;
	int rc = map_info(fd, &info);

	return rc ? rc : walk(fd, &info, elem_flags, fn, arg);
}

static int count_one(const void *key, const void *value, void *arg)
{
	(void)key;
	(void)value;
	++*(unsigned long long *)arg;
	return 0;
}

int eg_map_fill(int fd, unsigned *entries, unsigned *max_entries)
{
	struct bpf_map_info info;
	unsigned long long total = 0;
	int rc = map_info(fd, &info);

	if (rc)
		return rc;
	if (info.type == BPF_MAP_TYPE_HASH || info.type == BPF_MAP_TYPE_LRU_HASH) {
		rc = walk(fd, &info, 0, count_one, &total);
		if (rc)
			return rc; /* *entries stays as it was: never a made-up 0 */
	}
	/* Churn during the walk can add a bucket's new element after another's
	 * was counted and deleted; never report more than the map can hold. */
	*entries = total > info.max_entries ? info.max_entries : (unsigned)total;
	*max_entries = info.max_entries;
	return 0;
}

int eg_map_delete_counted(int fd, const void *key, unsigned *removed)
{
	if (bpf_map_delete_elem(fd, key))
		return errno == ENOENT ? 0 : -errno;
	(*removed)++;
	return 0;
}
