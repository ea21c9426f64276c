// SPDX-License-Identifier: GPL-2.0-only
/* TCP stream revocation (user/loader/revokers/revoke_tcp.c): walks every TCP socket
 * of the network namespace the iterator was created in and destroys the
 * stale ones (iter_tcp_stale.bpf.h). bpf_sock_destroy (6.5+) aborts the
 * socket as `ss -K` does: the peer gets a RST, the local end's next call
 * fails with ECONNABORTED. One record is written to the iterator per
 * destroyed socket (and per socket it could not destroy, with the error),
 * so userspace counts what was cut; a socket whose sandbox decides in audit
 * is written, flagged, and left running. Where the kfunc is missing,
 * iter_tcp_find.bpf.c finds the same sockets for sock_diag. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "abi/revoke_tcp_abi.h"
#include "iter_tcp_stale.bpf.h"

extern int bpf_sock_destroy(struct sock_common *sk) __ksym;

SEC("iter/tcp")
int eg_iter_tcp_revoke(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct seq_file *seq = ctx->meta->seq;
	struct eg_tcp_cut out = {};
	struct eg_inet_tag tag;
	bool audit = false;

	if (!eg_tcp_stale_tag(skc, &tag, &audit))
		return 0;
	/* The record must fit before the socket is destroyed: a write that
	 * overflowed would lose the count of a cut already made. Returning 1
	 * has the kernel show this socket again in the next read(), into an
	 * empty buffer. */
	if (seq->count + sizeof(out) >= seq->size)
		return 1;
	out.port = tag.port;
	__builtin_memcpy(out.sandbox, tag.sandbox, EG_ID_BYTES);
	/* Audit: reported, not destroyed (docs/design.md §19). */
	if (audit)
		out.flags = EG_TCP_STALE_AUDIT;
	else
		out.rc = bpf_sock_destroy(skc);
	bpf_seq_write(seq, &out, sizeof(out));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
