// SPDX-License-Identifier: GPL-2.0-only
/* TCP stream revocation without bpf_sock_destroy (kernels before 6.5):
 * walks every TCP socket of the network namespace the iterator was created
 * in and writes the 4-tuple and cookie of each stale one
 * (iter_tcp_stale.bpf.h) to the iterator. user/loader/revokers/revoke_tcp_diag.c
 * destroys them with sock_diag SOCK_DESTROY in the same namespace. A
 * separate object from iter_tcp_revoke.bpf.c: an unresolved kfunc fails
 * the load of the whole object. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "abi/revoke_tcp_abi.h"
#include "iter_tcp_stale.bpf.h"

SEC("iter/tcp")
int eg_iter_tcp_find(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct eg_tcp_stale out = {};
	struct eg_inet_tag tag;
	bool audit = false;

	if (!eg_tcp_stale_tag(skc, &tag, &audit))
		return 0;
	out.flags = audit ? EG_TCP_STALE_AUDIT : 0;
	__builtin_memcpy(out.sandbox, tag.sandbox, EG_ID_BYTES);
	out.family = skc->skc_family;
	out.ifindex = skc->skc_bound_dev_if;
	out.sport = bpf_htons(skc->skc_num);
	out.dport = skc->skc_dport;
	if (out.family == 2) {
		__builtin_memcpy(out.src, &skc->skc_rcv_saddr, 4);
		__builtin_memcpy(out.dst, &skc->skc_daddr, 4);
	} else {
		__builtin_memcpy(out.src, &skc->skc_v6_rcv_saddr, 16);
		__builtin_memcpy(out.dst, &skc->skc_v6_daddr, 16);
	}
	out.cookie = bpf_get_socket_cookie(skc);
	bpf_seq_write(ctx->meta->seq, &out, sizeof(out));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
