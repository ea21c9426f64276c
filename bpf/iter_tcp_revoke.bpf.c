// SPDX-License-Identifier: GPL-2.0-only
/* TCP stream revocation (user/loader/revoke_tcp.c): walks every TCP socket
 * of the network namespace the iterator was created in and destroys those
 * whose eg_inet_tags entry names an execution that is no longer current:
 * the record's epoch moved, it was retired, or it is gone. bpf_sock_destroy
 * (6.5+) aborts the socket as `ss -K` does: the peer gets a RST, the local
 * end's next call fails with ECONNABORTED. One 8-byte record is written to
 * the iterator per destroyed socket (and per socket it could not destroy,
 * with the error), so userspace counts what was cut. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "execgate_common.bpf.h"

extern int bpf_sock_destroy(struct sock_common *sk) __ksym;

struct eg_revoke_out {
	__s32 rc; /* bpf_sock_destroy's return */
	__u32 port;
};

SEC("iter/tcp")
int eg_iter_tcp_revoke(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct eg_revoke_out out;
	struct eg_record_snap rec;
	struct eg_inet_tag *tag;
	struct tcp_sock *tp;
	int rc;

	if (!skc || (skc->skc_family != 2 && skc->skc_family != 10))
		return 0; /* AF_INET, AF_INET6 */
	tp = bpf_skc_to_tcp_sock(skc);
	if (!tp)
		return 0; /* request and TIME_WAIT sockets carry no storage */
	tag = bpf_sk_storage_get(&eg_inet_tags, (struct sock *)tp, NULL, 0);
	if (!tag)
		return 0;
	rc = eg_record_copy(tag->sandbox, &rec);
	if (rc == EG_COPY_OK && rec.state == EG_RECORD_ACTIVE && rec.epoch == tag->epoch &&
	    rec.generation == tag->generation)
		return 0;
	if (rc == EG_COPY_RACED)
		return 0; /* raced a delete and re-use: the next pass decides */
	out.rc = bpf_sock_destroy(skc);
	out.port = tag->port;
	bpf_seq_write(ctx->meta->seq, &out, sizeof(out));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
