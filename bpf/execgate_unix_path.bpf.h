/* SPDX-License-Identifier: GPL-2.0-only */
/* Unix socket paths as BPF sees them in a connect: the bytes the caller
 * passed, which need not be NUL terminated and are followed by whatever the
 * kernel buffer held. The kernel treats the path as ending at the first NUL
 * or at addrlen, whichever comes first, so we do too; anything else would
 * let garbage after the NUL turn a registered path into an unregistered one.
 *
 * The pre-filter key (struct eg_path_filter_key) is computed in one pass of
 * 8-byte loads, so a connect to an unregistered path costs the scan and one
 * 24-byte hash lookup. Userspace computes the same key (user/loader/
 * path_filter.c); the two must stay byte-identical. */
#ifndef EXECGATE_UNIX_PATH_BPF_H
#define EXECGATE_UNIX_PATH_BPF_H

#include "execgate_common.bpf.h"

#define EG_PATH_WORDS 14 /* 8-byte chunks covering EG_UNIX_PATH_MAX */
#define EG_ONES	      0x0101010101010101ULL
#define EG_HIGHS      0x8080808080808080ULL

EG_INLINE __u64 eg_low_bytes(__u64 w, __u32 n)
{
	return n >= 8 ? w : (w & ((1ULL << (n * 8)) - 1));
}

/* Index of the lowest byte flagged in z (the first zero byte of a word). */
EG_INLINE __u32 eg_first_flagged_byte(__u64 z)
{
	__u32 pos = 0;

	if (!(z & 0xffffffffULL)) {
		pos += 4;
		z >>= 32;
	}
	if (!(z & 0xffffULL)) {
		pos += 2;
		z >>= 16;
	}
	if (!(z & 0xffULL))
		pos += 1;
	return pos;
}

/* p: first path byte, readable (possibly through a BTF pointer) for
 * 8 * EG_PATH_WORDS bytes. limit: path bytes the caller passed, at most
 * EG_UNIX_PATH_MAX. Fills *fk and returns the path length; 0 for an
 * abstract or unnamed address, which never matches a registered path. */
EG_INLINE __u32 eg_unix_path_scan(const __u8 *p, __u32 limit, struct eg_path_filter_key *fk)
{
	__u64 w, z, prev = 0, first = 0, last = 0;
	__u32 len = limit, avail, pos;

#pragma unroll
	for (int i = 0; i < EG_PATH_WORDS; i++) {
		if (8 * i >= limit) {
			last = prev;
			break;
		}
		w = *(const __u64 *)(p + 8 * i);
		avail = limit - 8 * i;
		if (avail < 8)
			w = eg_low_bytes(w, avail); /* past addrlen reads as NUL */
		z = (w - EG_ONES) & ~w & EG_HIGHS;
		if (z) {
			pos = eg_first_flagged_byte(z);
			len = 8 * i + pos;
			last = pos ? eg_low_bytes(w, pos) : prev;
			if (i == 0)
				first = last;
			break;
		}
		if (i == 0)
			first = w;
		prev = w;
	}
	fk->len = len;
	fk->pad = 0;
	fk->head = first;
	fk->tail = len ? last : 0;
	return len;
}

/* key->path = the first len bytes at p, NUL padded, with constant-offset
 * 8-byte loads (p as for eg_unix_path_scan()): a direct load through a BTF
 * pointer costs a fraction of a bpf_probe_read_kernel() call. */
EG_INLINE void eg_path_key_load(const __u8 *p, __u32 len, struct eg_path_key *key)
{
	__u64 out[EG_PATH_WORDS];

#pragma unroll
	for (int i = 0; i < EG_PATH_WORDS; i++) {
		if (8 * i >= len)
			out[i] = 0;
		else
			out[i] = eg_low_bytes(*(const __u64 *)(p + 8 * i), len - 8 * i);
	}
	__builtin_memcpy(key->path, out, sizeof(key->path));
}

/* False only when no registered path can have this filter key: the caller
 * then skips eg_path_filter. Array lookups are inlined by the verifier. */
EG_INLINE bool eg_path_hinted(const struct eg_path_filter_key *fk)
{
	__u32 bit = eg_path_hint_bit(fk);
	__u32 word = bit >> 6;
	__u64 *w = bpf_map_lookup_elem(&eg_path_hint, &word);

	return !w || ((*w >> (bit & 63)) & 1);
}

/* The filter lookup behind a set hint bit: false means no registered path
 * has this filter key, and the connect is unregistered. Every Unix path
 * hook runs the two, with its admission cache between them. */
EG_INLINE bool eg_path_filtered(const struct eg_path_filter_key *fk)
{
	return bpf_map_lookup_elem(&eg_path_filter, fk);
}

/* After a filter hit: the exact endpoint, keyed by the NUL-padded path
 * (eg_path_key_load()), in one lookup. eg_endpoint_copy() looks the key up
 * a second time to notice a delete + re-use of the element; for a path
 * endpoint that is not needed (docs/operators.md "Consistency"): the
 * loader never deletes path endpoints and writes them only in place, so an
 * element is re-used only after somebody else deleted its path, and while
 * the path is deleted it is unregistered, i.e. allowed for everyone. A reader that raced such a
 * delete + re-use may decide as if the path were registered to a mix of the
 * old and new values; whatever that decision is, it is no more permissive
 * than "unregistered", which was the state at an instant of the race. */
EG_INLINE int eg_unix_endpoint_copy(const struct eg_path_key *key, struct eg_endpoint_snap *ep)
{
	struct eg_endpoint *v;

	v = bpf_map_lookup_elem(&eg_endpoints, key);
	if (!v)
		return EG_COPY_MISSING;
	bpf_spin_lock(&v->lock);
	ep->role = v->role;
	__builtin_memcpy(ep->sandbox, v->sandbox, EG_ID_BYTES);
	bpf_spin_unlock(&v->lock);
	return EG_COPY_OK;
}

/* Whether the path still names the endpoint *ep was copied from: the
 * admission cache's check that no re-pointing slipped in before its
 * generation word was read (execgate_admit_cache.bpf.h). */
EG_INLINE bool eg_unix_endpoint_still(const struct eg_path_key *key,
				      const struct eg_endpoint_snap *ep)
{
	struct eg_endpoint_snap now;

	return eg_unix_endpoint_copy(key, &now) == EG_COPY_OK && eg_endpoint_same(&now, ep);
}

#endif
