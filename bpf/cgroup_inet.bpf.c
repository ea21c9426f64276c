// SPDX-License-Identifier: GPL-2.0-only
/* The TCP / ServicePort tier: inet connects and unconnected UDP sends from
 * the attached cgroup (connect4/6, sendmsg4/6), and sockops, which marks
 * admitted streams established and tags unadmitted ones to guest addresses
 * as stale. A registered guest address admits only processes holding a live
 * ServicePort grant for its sandbox, port and protocol
 * (execgate_inet.bpf.h); an unregistered one passes after one lookup.
 *
 * Return 0 from a sock_addr program: connect()/sendmsg() fail with EPERM. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "execgate_connect.bpf.h"

#define SOCK_ALLOW 1
#define SOCK_DENY  0

#define EG_IPPROTO_TCP 6

/* Records the namespace of an admitted connect for the revoker
 * (user/loader/revokers/revoke_tcp.c). The common case, the process already recorded
 * there connecting again, is one lookup and a store of the time: an update
 * would take an element from the preallocated map's free list, link it
 * under the bucket lock and free the old one, on every admitted connect
 * (docs/bench/2026-12-04-allowed-path.md). The store is of last_ns alone,
 * which nothing decides on: should the revoker delete the entry meanwhile
 * and the element be re-used for another namespace, that one's tgid, the
 * field the revoker enters by, is untouched. Another process takes the
 * update, as before. */
static __always_inline void note_netns(void *ctx, __u32 tgid, __u64 now_ns)
{
	struct eg_inet_netns v = {.tgid = tgid, .last_ns = now_ns};
	__u64 cookie = bpf_get_netns_cookie(ctx);
	struct eg_inet_netns *cur;

	cur = bpf_map_lookup_elem(&eg_inet_netns, &cookie);
	if (cur && cur->tgid == tgid) {
		cur->last_ns = now_ns;
		return;
	}
	bpf_map_update_elem(&eg_inet_netns, &cookie, &v, BPF_ANY);
}

/* Shared tail of the four sock_addr hooks: key built, looked up once, then
 * the one connect decision (execgate_connect.bpf.h). */
static __always_inline int inet_check(struct bpf_sock_addr *ctx, const struct eg_inet_key *key,
				      __u32 hook, bool tag)
{
	struct eg_endpoint_snap ep;
	struct eg_record_snap rec;
	struct eg_proc_id caller;
	struct eg_dest dest;
	__u32 reason;
	bool known;
	int rc;

	if (!eg_inet_may_be_registered(key)) {
		eg_count(EG_K_ALLOW_UNREGISTERED);
		return SOCK_ALLOW;
	}
	rc = eg_endpoint_copy(&eg_inet_endpoints, key, &ep);
	if (rc == EG_COPY_MISSING) {
		eg_count(EG_K_ALLOW_UNREGISTERED);
		return SOCK_ALLOW;
	}
	known = eg_current_proc(&caller);
	__builtin_memset(&dest, 0, sizeof(dest));
	dest.inet = key;
	dest.port = bpf_ntohs((__u16)ctx->user_port);
	dest.proto = (__u8)ctx->protocol;
	dest.now_ns = eg_grant_clock_ns();
	reason = eg_connect_decide(rc, &ep, &dest, known, &caller, &rec, NULL, NULL);
	if (eg_reason_allows(reason)) {
		if (tag && !eg_inet_tag_socket(ctx, &rec, dest.port, dest.proto))
			reason = EG_K_DENY_NO_TAG;
	}
	if (eg_reason_allows(reason)) {
		eg_count(reason);
		note_netns(ctx, caller.tgid, dest.now_ns);
		return SOCK_ALLOW;
	}
	/* audit: allowed untagged (docs/design.md, "Modes") */
	return eg_connect_deny(hook, reason, &ep, &rec, &dest) ? SOCK_ALLOW : SOCK_DENY;
}

static __always_inline void key4(struct eg_inet_key *k, __u32 ip4)
{
	__builtin_memset(k, 0, sizeof(*k));
	k->family = EG_AF_INET;
	__builtin_memcpy(k->addr, &ip4, 4);
}

static __always_inline void key6(struct bpf_sock_addr *ctx, struct eg_inet_key *k)
{
	__u32 w0 = ctx->user_ip6[0], w1 = ctx->user_ip6[1], w2 = ctx->user_ip6[2];
	__u32 w3 = ctx->user_ip6[3];

	/* ::ffff:a.b.c.d reaches the IPv4 address: look it up as one */
	if (w0 == 0 && w1 == 0 && w2 == bpf_htonl(0xffff)) {
		key4(k, w3);
		return;
	}
	__builtin_memset(k, 0, sizeof(*k));
	k->family = EG_AF_INET6;
	__builtin_memcpy(k->addr, &w0, 4);
	__builtin_memcpy(k->addr + 4, &w1, 4);
	__builtin_memcpy(k->addr + 8, &w2, 4);
	__builtin_memcpy(k->addr + 12, &w3, 4);
}

SEC("cgroup/connect4")
int eg_connect4(struct bpf_sock_addr *ctx)
{
	struct eg_inet_key k;

	key4(&k, ctx->user_ip4);
	return inet_check(ctx, &k, EG_HOOK_CONNECT4, true);
}

SEC("cgroup/connect6")
int eg_connect6(struct bpf_sock_addr *ctx)
{
	struct eg_inet_key k;

	key6(ctx, &k);
	return inet_check(ctx, &k, EG_HOOK_CONNECT6, true);
}

/* Unconnected UDP: every sendto() to a guest address is checked. Nothing to
 * tag: the socket is not bound to that destination. */
SEC("cgroup/sendmsg4")
int eg_sendmsg4(struct bpf_sock_addr *ctx)
{
	struct eg_inet_key k;

	key4(&k, ctx->user_ip4);
	return inet_check(ctx, &k, EG_HOOK_SENDMSG4, false);
}

SEC("cgroup/sendmsg6")
int eg_sendmsg6(struct bpf_sock_addr *ctx)
{
	struct eg_inet_key k;

	key6(ctx, &k);
	return inet_check(ctx, &k, EG_HOOK_SENDMSG6, false);
}

/* Established active streams: an admitted one moves to ESTABLISHED (its
 * epoch stays the one its grant was checked at); one to a guest address
 * without a tag was never checked (socket made outside the cgroup, see
 * docs/operators.md) and is tagged with epoch 0, which no record has, so
 * the next revocation of that sandbox cuts it. */
SEC("sockops")
int eg_sockops(struct bpf_sock_ops *skops)
{
	struct eg_endpoint_snap ep;
	struct eg_inet_tag init, *tag;
	struct eg_inet_key k;
	struct bpf_sock *sk;
	__u64 cookie;

	if (skops->op != BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB)
		return 1;
	sk = skops->sk;
	if (!sk)
		return 1;
	cookie = bpf_get_socket_cookie(skops);
	tag = bpf_map_lookup_elem(&eg_inet_tags, &cookie);
	if (tag) {
		if (tag->state == EG_INET_CONNECTING)
			tag->state = EG_INET_ESTABLISHED;
		return 1;
	}
	if (skops->family == EG_AF_INET) {
		key4(&k, skops->remote_ip4);
	} else if (skops->family == EG_AF_INET6) {
		__builtin_memset(&k, 0, sizeof(k));
		k.family = EG_AF_INET6;
		__u32 w0 = skops->remote_ip6[0], w1 = skops->remote_ip6[1];
		__u32 w2 = skops->remote_ip6[2], w3 = skops->remote_ip6[3];

		if (w0 == 0 && w1 == 0 && w2 == bpf_htonl(0xffff)) {
			key4(&k, w3);
		} else {
			__builtin_memcpy(k.addr, &w0, 4);
			__builtin_memcpy(k.addr + 4, &w1, 4);
			__builtin_memcpy(k.addr + 8, &w2, 4);
			__builtin_memcpy(k.addr + 12, &w3, 4);
		}
	} else {
		return 1;
	}
	if (!eg_inet_may_be_registered(&k) ||
	    eg_endpoint_copy(&eg_inet_endpoints, &k, &ep) == EG_COPY_MISSING)
		return 1;
	__builtin_memset(&init, 0, sizeof(init));
	__builtin_memcpy(init.sandbox, ep.sandbox, EG_ID_BYTES);
	init.port = (__u16)bpf_ntohl(skops->remote_port);
	init.proto = EG_IPPROTO_TCP;
	init.state = EG_INET_UNADMITTED;
	/* A full map leaves this stream untagged, as it would be without
	 * sockops; status shows the map's fill. */
	bpf_map_update_elem(&eg_inet_tags, &cookie, &init, BPF_NOEXIST);
	return 1;
}

/* A tag lives as long as its socket: deleted here when the socket is
 * released (close() of its last file, inet sockets only). Attached before
 * the hooks that tag, to the same cgroup, so it sees every socket they see
 * (a socket's cgroup is the one it was created in). A socket never tagged
 * costs one lookup that misses. */
SEC("cgroup/sock_release")
int eg_inet_release(struct bpf_sock *sk)
{
	__u64 cookie = bpf_get_socket_cookie(sk);

	bpf_map_delete_elem(&eg_inet_tags, &cookie);
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
