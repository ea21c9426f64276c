/* SPDX-License-Identifier: GPL-2.0-only */
/* What the inet hooks (bpf/cgroup_inet.bpf.c) need beside the one connect
 * decision (execgate_connect.bpf.h): a destination address becomes an
 * eg_inet_key, one lookup decides whether it is a guest's; the caller's
 * ServicePort grant for (sandbox, port, protocol) is read by a locked copy
 * with the embedded-key and re-lookup checks of execgate_common.bpf.h; an
 * admitted socket is tagged by its cookie. */
#ifndef EXECGATE_INET_BPF_H
#define EXECGATE_INET_BPF_H

#include "execgate_common.bpf.h"

#define EG_AF_INET  2
#define EG_AF_INET6 10

/* false: certainly unregistered (its hint bit is clear). */
EG_INLINE bool eg_inet_may_be_registered(const struct eg_inet_key *k)
{
	__u32 bit = eg_inet_hint_bit(k), idx = bit >> 6;
	__u64 *w = bpf_map_lookup_elem(&eg_inet_hint, &idx);

	return !w || (*w & (1ULL << (bit & 63)));
}

struct eg_service_grant_snap {
	__u64 generation;
	__u64 epoch;
	__u64 expiry_ns;
};

EG_INLINE bool eg_service_key_eq(const struct eg_service_grant_key *a,
				 const struct eg_service_grant_key *b)
{
	return eg_proc_eq(&a->proc, &b->proc) && eg_id_eq(a->sandbox, b->sandbox) &&
	       a->port == b->port && a->proto == b->proto;
}

EG_INLINE int eg_service_grant_copy(const struct eg_service_grant_key *key,
				    struct eg_service_grant_snap *out)
{
	struct eg_service_grant_key seen;
	struct eg_service_grant *v;

	v = bpf_map_lookup_elem(&eg_service_grants, key);
	if (!v)
		return EG_COPY_MISSING;
	bpf_spin_lock(&v->lock);
	out->generation = v->generation;
	out->epoch = v->epoch;
	out->expiry_ns = v->expiry_ns;
	seen = v->key;
	bpf_spin_unlock(&v->lock);
	if (!eg_service_key_eq(&seen, key))
		return EG_COPY_RACED;
	if (bpf_map_lookup_elem(&eg_service_grants, key) != v)
		return EG_COPY_RACED;
	return EG_COPY_OK;
}

/* Tags the socket of ctx (a sock_addr context) with the execution and
 * ServicePort it was admitted to, under its cookie: one insert of a
 * complete value into the preallocated eg_inet_tags. A datagram socket that
 * connects again has its tag replaced whole (an update swaps in a new
 * element, so a reader sees the old value or the new one). False when the
 * map is full: the caller denies (EG_K_DENY_NO_TAG), since an untagged
 * stream would escape revocation. */
EG_INLINE bool eg_inet_tag_socket(struct bpf_sock_addr *ctx, const struct eg_record_snap *rec,
				  __u16 port, __u8 proto)
{
	__u64 cookie = bpf_get_socket_cookie(ctx);
	struct eg_inet_tag init;

	__builtin_memcpy(init.sandbox, rec->sandbox, EG_ID_BYTES);
	init.epoch = rec->epoch;
	init.generation = rec->generation;
	init.port = port;
	init.proto = proto;
	init.state = EG_INET_CONNECTING;
	init.pad = 0;
	return bpf_map_update_elem(&eg_inet_tags, &cookie, &init, BPF_ANY) == 0;
}

#endif
