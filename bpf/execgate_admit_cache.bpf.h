/* SPDX-License-Identifier: GPL-2.0-only */
/* The admission cache of the connect hooks (abi.h, "The admission cache";
 * docs/design.md §20): an allow the full checks made, remembered per
 * (address, process) and used again by one lookup while the generation
 * word of its sandbox's stripe has not moved. The address is a Unix path
 * (cgroup connect_unix; LSM socket_connect where the kernel has no
 * connect_unix) or a VSOCK (CID, port) (LSM socket_connect).
 *
 * Why a hit is exactly as strong as the checks it stands for:
 *   - the entry names the whole address, its kind and the whole caller
 *     identity, and all are compared; a path's hash in the key only
 *     spreads the buckets;
 *   - the program read the stripe's word (with a full barrier) before it
 *     read any state its allow rested on, and the loader moves the word
 *     after every change that can deny (abi.h). An entry whose word still
 *     matches was therefore made from state no such change has touched
 *     since, and the re-read of the endpoint after the word catches a path
 *     re-pointed between the two;
 *   - the expiry is the grant's, against the same grant clock, and never
 *     more than EG_ADMIT_TTL_NS after the insert: a map written behind the
 *     loader's back moves no word, and is seen by then;
 *   - an LRU element can be re-used under a reader, as any hash element
 *     (docs/operators.md "Consistency"): the hit copies what it uses, then
 *     checks the path and identity in the copy and looks the key up again,
 *     as eg_grant_copy() does.
 * Include after execgate_common.bpf.h. */
#ifndef EXECGATE_ADMIT_CACHE_BPF_H
#define EXECGATE_ADMIT_CACHE_BPF_H

#include "execgate_common.bpf.h"

#define EG_ADMIT_PATH_WORDS (EG_UNIX_PATH_MAX / 8 + 1) /* 14: the key's words, last one short */

/* The path's 8-byte words as eg_path_key holds them, NUL padded; the last
 * word has 4 bytes (108 = 13 * 8 + 4). */
EG_INLINE __u64 eg_admit_path_word(const struct eg_path_key *key, int i)
{
	if (i < EG_ADMIT_PATH_WORDS - 1)
		return ((const __u64 *)key->path)[i];
	return *(const __u32 *)(key->path + 8 * i);
}

/* A fold of the NUL-padded path: independent multiplies, so the words do
 * not wait on each other. Not collision resistant, and it need not be: an
 * entry is used only after the whole path compares equal. */
EG_INLINE __u64 eg_admit_path_hash(const struct eg_path_key *key)
{
	__u64 h = 0;

#pragma unroll
	for (int i = 0; i < EG_ADMIT_PATH_WORDS; i++)
		h += (eg_admit_path_word(key, i) ^ (0x9e3779b97f4a7c15ULL * (i + 1))) *
		     (0xc2b2ae3d27d4eb4fULL + 2 * i);
	return h ^ (h >> 29);
}

EG_INLINE bool eg_admit_path_eq(const struct eg_path_key *key, const char *path)
{
	__u64 diff = 0;

#pragma unroll
	for (int i = 0; i < EG_ADMIT_PATH_WORDS - 1; i++)
		diff |= ((const __u64 *)key->path)[i] ^ ((const __u64 *)path)[i];
	diff |= *(const __u32 *)(key->path + 104) ^ *(const __u32 *)(path + 104);
	return !diff;
}

EG_INLINE __u64 *eg_admit_gen_word(const __u8 sandbox[EG_ID_BYTES])
{
	__u32 stripe = eg_admit_stripe(sandbox);

	return bpf_map_lookup_elem(&eg_admit_gen, &stripe);
}

/* The stripe's word before the state it guards is read: the fetch-and-add
 * of 0 is a full barrier, so no later load of that state is satisfied
 * before it. 0 when the map has no word (never: an ARRAY always has it). */
EG_INLINE __u64 eg_admit_gen_begin(const __u8 sandbox[EG_ID_BYTES])
{
	__u64 *w = eg_admit_gen_word(sandbox);

	return w ? __sync_fetch_and_add(w, 0) : 0;
}

EG_INLINE void eg_admit_key_make(const struct eg_path_key *path, __u32 len, __u32 tgid,
				 struct eg_admit_key *k)
{
	k->path_hash = eg_admit_path_hash(path);
	k->tgid = tgid;
	k->len = len;
}

/* What every hit checks once its copy matched the caller's address: the
 * stripe's word unmoved, the expiry ahead of the grant clock, and the
 * element still at the key, so not re-used while it was copied. */
EG_INLINE bool eg_admit_fresh(const struct eg_admit_key *k, const struct eg_admit_entry *e,
			      const struct eg_sk_tag *tag, __u64 gen, __u64 expiry)
{
	__u64 *w = eg_admit_gen_word(tag->sandbox);

	if (!w || *(volatile __u64 *)w != gen)
		return false;
	if (eg_grant_clock_ns() >= expiry)
		return false;
	return bpf_map_lookup_elem(&eg_admit_cache, k) == e;
}

/* What every hit starts with: the entry behind k, with its word, expiry
 * and tag copied out, and its kind and length and the caller's identity
 * compared in the copy. NULL is a miss. The caller then compares its
 * address and calls eg_admit_fresh(). */
EG_INLINE struct eg_admit_entry *eg_admit_copy(const struct eg_admit_key *k,
					       const struct eg_proc_id *caller,
					       struct eg_sk_tag *tag, __u64 *gen, __u64 *expiry)
{
	struct eg_admit_entry *e;
	struct eg_proc_id proc;
	__u32 key_len;

	e = bpf_map_lookup_elem(&eg_admit_cache, k);
	if (!e)
		return NULL;
	*gen = e->gen;
	*expiry = e->expiry_ns;
	proc = e->proc;
	*tag = e->tag;
	key_len = e->key_len;
	if (key_len != k->len || !eg_proc_eq(&proc, caller))
		return NULL;
	return e;
}

/* A hit on a path: *tag is what the socket is tagged with, and the connect
 * is allowed. Anything else (no entry, another path, kind or process
 * behind the key, a moved word, an expired grant, a re-used element) is a
 * miss, and the caller runs the full checks. */
EG_INLINE bool eg_admit_hit(const struct eg_admit_key *k, const struct eg_path_key *path,
			    const struct eg_proc_id *caller, struct eg_sk_tag *tag)
{
	struct eg_admit_entry *e;
	__u64 gen, expiry;

	e = eg_admit_copy(k, caller, tag, &gen, &expiry);
	return e && eg_admit_path_eq(path, e->path) && eg_admit_fresh(k, e, tag, gen, expiry);
}

/* The key of a VSOCK address: exact, no hash. */
EG_INLINE void eg_admit_key_vsock(const struct eg_vsock_key *addr, __u32 tgid,
				  struct eg_admit_key *k)
{
	k->path_hash = (__u64)addr->cid << 32 | addr->port;
	k->tgid = tgid;
	k->len = EG_ADMIT_LEN_VSOCK;
}

/* eg_admit_hit() for a VSOCK address. The key is the address itself; the
 * entry's address is compared all the same, because the element may have
 * been re-used for another key and back while it was copied. */
EG_INLINE bool eg_admit_hit_vsock(const struct eg_admit_key *k, const struct eg_vsock_key *addr,
				  const struct eg_proc_id *caller, struct eg_sk_tag *tag)
{
	const struct eg_vsock_key *at;
	struct eg_admit_entry *e;
	__u64 gen, expiry;
	__u32 cid, port;

	e = eg_admit_copy(k, caller, tag, &gen, &expiry);
	if (!e)
		return false;
	at = (const struct eg_vsock_key *)e->path;
	cid = at->cid;
	port = at->port;
	if (cid != addr->cid || port != addr->port)
		return false;
	return eg_admit_fresh(k, e, tag, gen, expiry);
}

/* The entry of an allow by the full checks, made in the per-CPU scratch
 * with its address left to the caller. expiry: the grant's, or
 * EG_ADMIT_NO_EXPIRY (the bridge at a VMM endpoint). gen is what
 * eg_admit_gen_begin() returned before the checks; the caller has checked
 * that the endpoint still names the sandbox and role it decided on. NULL
 * never happens (a PERCPU_ARRAY always has its element). */
EG_INLINE struct eg_admit_entry *eg_admit_entry_make(const struct eg_admit_key *k,
						     const struct eg_proc_id *caller, __u64 gen,
						     __u64 expiry, const struct eg_record_snap *rec,
						     __u32 role)
{
	struct eg_admit_entry *e;
	__u32 zero = 0;
	__u64 ttl_end;

	e = bpf_map_lookup_elem(&eg_admit_scratch, &zero);
	if (!e)
		return NULL;
	ttl_end = eg_grant_clock_ns() + EG_ADMIT_TTL_NS;
	e->gen = gen;
	e->expiry_ns = expiry < ttl_end ? expiry : ttl_end;
	e->proc = *caller;
	eg_sk_tag_of(rec, role, &e->tag);
	e->key_len = k->len;
	return e;
}

/* Remember an allow of a path. A failed insert (a full map whose LRU had
 * nothing to give) loses only the next connect's shortcut. */
EG_INLINE void eg_admit_remember(const struct eg_admit_key *k, const struct eg_path_key *path,
				 const struct eg_proc_id *caller, __u64 gen, __u64 expiry,
				 const struct eg_record_snap *rec, __u32 role)
{
	struct eg_admit_entry *e = eg_admit_entry_make(k, caller, gen, expiry, rec, role);

	if (!e)
		return;
	__builtin_memcpy(e->path, path->path, sizeof(e->path));
	bpf_map_update_elem(&eg_admit_cache, k, e, BPF_ANY);
}

/* Remember an allow of a VSOCK address. */
EG_INLINE void eg_admit_remember_vsock(const struct eg_admit_key *k,
				       const struct eg_vsock_key *addr,
				       const struct eg_proc_id *caller, __u64 gen, __u64 expiry,
				       const struct eg_record_snap *rec, __u32 role)
{
	struct eg_admit_entry *e = eg_admit_entry_make(k, caller, gen, expiry, rec, role);

	if (!e)
		return;
	__builtin_memset(e->path, 0, sizeof(e->path));
	__builtin_memcpy(e->path, addr, sizeof(*addr));
	bpf_map_update_elem(&eg_admit_cache, k, e, BPF_ANY);
}

#endif
