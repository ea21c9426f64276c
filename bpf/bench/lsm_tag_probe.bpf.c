// SPDX-License-Identifier: GPL-2.0-only
/* Benchmark-only LSM programs (bench-lsm's floor rows; built by
 * scripts/make/speed.mk, never loaded by the loader): the socket tag alone
 * (probe_tag.bpf.h), on the hooks where the LSM tier tags admitted sockets.
 * An allowed connect of the real program creates this storage too, so what
 * these cost over an empty program is the floor of its ratio, whatever the
 * checks before the tag cost.
 *   eg_probe_vsock_tag   socket_connect: one tag on an AF_VSOCK socket, as
 *                        eg_vsock_connect() does
 *   eg_probe_unix_tags   unix_stream_connect: one tag on each end (the
 *                        connecting socket and the embryo of the accepted
 *                        one), as the tier's program does there
 *   eg_probe_unix_accepted_tag  the accepted end only: what the tier's
 *                        program creates there on kernels without
 *                        connect_unix (6.1), where socket_connect tags the
 *                        connecting end
 *   eg_probe_vsock_cookie_tag  socket_connect: the cookie-keyed tag instead,
 *                        one BPF_NOEXIST insert of the socket's cookie into a
 *                        preallocated hash (no allocation), as
 *                        connect_unix_touch.bpf.c probe 12 does
 * bench-lsm attaches one at a time, only while the real program takes its
 * unregistered path, which creates no storage, so the probe's allocations
 * are the socket's first, as on the allowed path. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "probe_tag.bpf.h"

#define AF_VSOCK 40

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 262144);
	__type(key, __u64);
	__type(value, __u64);
} probe_cookie_tags SEC(".maps");

SEC("lsm/socket_connect")
int BPF_PROG(eg_probe_vsock_tag, struct socket *sock, struct sockaddr *address, int addrlen,
	     int ret)
{
	struct sock *sk;

	if (ret)
		return ret;
	sk = sock->sk;
	if (sk && sk->__sk_common.skc_family == AF_VSOCK)
		probe_tag(sk);
	return 0;
}

SEC("lsm/unix_stream_connect")
int BPF_PROG(eg_probe_unix_tags, struct sock *sock, struct sock *other, struct sock *newsk, int ret)
{
	if (ret)
		return ret;
	probe_tag(sock);
	probe_tag(newsk);
	return 0;
}

SEC("lsm/unix_stream_connect")
int BPF_PROG(eg_probe_unix_accepted_tag, struct sock *sock, struct sock *other, struct sock *newsk,
	     int ret)
{
	if (ret)
		return ret;
	probe_tag(newsk);
	return 0;
}

SEC("lsm/socket_connect")
int BPF_PROG(eg_probe_vsock_cookie_tag, struct socket *sock, struct sockaddr *address, int addrlen,
	     int ret)
{
	struct sock *sk;
	__u64 cookie, tag = (1ULL << 32) | 1; /* (sandbox index, epoch) */

	if (ret)
		return ret;
	sk = sock->sk;
	if (sk && sk->__sk_common.skc_family == AF_VSOCK) {
		cookie = bpf_get_socket_cookie(sk);
		bpf_map_update_elem(&probe_cookie_tags, &cookie, &tag, BPF_NOEXIST);
	}
	return 0;
}
