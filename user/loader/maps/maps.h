/* SPDX-License-Identifier: Apache-2.0 */
/* File descriptors of the pinned maps, opened by name from the pin dir, and
 * locked reads/writes of their values (BPF_F_LOCK: see abi.h). */
#ifndef EXECGATE_LOADER_MAPS_H
#define EXECGATE_LOADER_MAPS_H

#include <stddef.h>
#include "abi/abi.h"

enum eg_map_id {
	EG_MAP_RECORDS,
	EG_MAP_ENDPOINTS,
	EG_MAP_PATH_FILTER,
	EG_MAP_GRANTS,
	EG_MAP_COUNTERS,
	EG_MAP_EVENTS,
	EG_MAP_SK_TAGS,
	EG_MAP_VSOCK_ENDPOINTS,
	EG_MAP_INODE_ENDPOINTS,
	EG_MAP_LISTENER_TAGS,
	EG_MAP_PATH_HINT,
	/* TCP / ServicePort tier (abi.h, TCP section) */
	EG_MAP_INET_ENDPOINTS,
	EG_MAP_SERVICE_GRANTS,
	EG_MAP_INET_TAGS,
	EG_MAP_INET_NETNS,
	EG_MAP_INET_HINT,
	/* modes (abi.h, Modes) */
	EG_MAP_MODE,
	EG_MAP_WOULD_DENY,
	/* the grant clock's boot offset (abi.h, struct eg_clock_word) */
	EG_MAP_CLOCK,
	/* the admission cache (abi.h, "The admission cache") */
	EG_MAP_ADMIT_CACHE,
	EG_MAP_ADMIT_GEN,
	EG_MAP__COUNT,
};

/* Pin names, == the map names in bpf/execgate_maps.bpf.h. */
extern const char *const eg_map_names[EG_MAP__COUNT];

struct eg_maps {
	int fd[EG_MAP__COUNT];
	__u64 *admit_gen; /* eg_admit_gen, mapped: EG_ADMIT_STRIPES words */
};

/* Opens every pin. -ENOENT (err: "not loaded") when the pin dir holds no
 * maps; on error nothing stays open. */
int eg_maps_open(struct eg_maps *m, const char *pin_dir, char *err, size_t err_size);
void eg_maps_close(struct eg_maps *m);

/* 0, -ENOENT, or another negative errno. */
int eg_record_read(const struct eg_maps *m, const __u8 sandbox[EG_ID_BYTES],
		   struct eg_exec_record *out);
int eg_record_write(const struct eg_maps *m, const struct eg_exec_record *rec);
int eg_endpoint_read(const struct eg_maps *m, enum eg_map_id map, const void *key,
		     struct eg_endpoint *out);
int eg_endpoint_write(const struct eg_maps *m, enum eg_map_id map, const void *key,
		      const struct eg_endpoint *ep);
int eg_grant_read(const struct eg_maps *m, const struct eg_grant_key *key, struct eg_grant *out);
int eg_grant_write(const struct eg_maps *m, const struct eg_grant *g);
/* The admission's grant write (user/lib/admit.c): one map update, no read
 * and no step of the admission cache's word. It writes a grant backed by a
 * capability just verified against the record read under the sandbox's
 * stripe lock, so it never takes from the process what a cached allow
 * gives it: its epoch is the current one (an install in between moved the
 * word and sweeps the grant), and an earlier expiry than the grant it
 * overwrites only means an older, still valid token was admitted last.
 * Revocations write their tombstones with eg_grant_write(), which steps. */
int eg_grant_admit_write(const struct eg_maps *m, const struct eg_grant *g);

/* Moves the admission cache's generation word of sandbox's stripe (abi.h,
 * "The admission cache"): every cached allow of that sandbox (and of the
 * sandboxes sharing its stripe) is a miss from now on. Call after the
 * change that can deny is written. eg_record_write(), eg_endpoint_write()
 * and eg_grant_write() call it themselves where the write can deny. */
void eg_admit_invalidate(const struct eg_maps *m, const __u8 sandbox[EG_ID_BYTES]);
/* The last step of a sweep's delete, once the entry is tombstoned: deletes
 * key from map fd and counts it in *removed. 0, or the delete's negative
 * errno; a key deleted meanwhile (ENOENT) is not an error. */
int eg_map_delete_counted(int fd, const void *key, unsigned *removed);

/* Sum of the per-CPU counters, indexed by enum eg_kreason. */
int eg_counters_read(const struct eg_maps *m, __u64 out[EG_K_REASON_COUNT]);

/* The global mode word (enum eg_mode; 0 when never written) and its
 * switch: one 8-byte update (abi.h, struct eg_mode_word). */
int eg_mode_read(const struct eg_maps *m, struct eg_mode_word *w);
int eg_mode_write(const struct eg_maps *m, const struct eg_mode_word *w);

/* Would-deny counts summed over the CPUs: out[hook][reason]. */
int eg_would_deny_read(const struct eg_maps *m, __u64 out[EG_HOOK_SLOTS][EG_COUNTER_SLOTS]);

/* The kernel's id of map fd (what a program's map_ids list), 0 when its
 * info cannot be read. */
__u32 eg_map_kernel_id(int fd);

/* Every element of hash map fd (BPF_MAP_TYPE_HASH; -EINVAL for another
 * type), bucket by bucket (BPF_MAP_LOOKUP_BATCH; elem_flags 0 or
 * BPF_F_LOCK, for values with a bpf_spin_lock): fn sees each element at
 * most once, as it was when its bucket was read. One inserted or deleted
 * during the walk may or may not be seen. A non-zero
 * return of fn stops the walk and is returned; else 0 or a negative errno. */
typedef int (*eg_map_walk_fn)(const void *key, const void *value, void *arg);
int eg_map_walk(int fd, __u64 elem_flags, eg_map_walk_fn fn, void *arg);

/* Entries in a hash map and its capacity. The entries are counted by
 * eg_map_walk(): under churn, within the inserts and deletes made during
 * the count, and never above the capacity. Plain and LRU hash maps; a map
 * of another type has 0. 0, or a negative errno with neither output
 * written (-EINVAL for an fd that is not a map). */
int eg_map_fill(int fd, unsigned *entries, unsigned *max_entries);

#endif
