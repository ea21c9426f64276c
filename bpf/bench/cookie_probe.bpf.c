// SPDX-License-Identifier: GPL-2.0-only
/* Where bpf_get_socket_cookie() can be called (bench-cookie; built by
 * scripts/make/speed.mk, never loaded by the loader): one program per
 * program type a cookie-keyed socket tag would need, each calling the
 * helper once. The verifier refuses a program that calls a helper its type
 * does not offer, so loading each program alone answers the question per
 * kernel. Nothing is attached.
 *   cgroup sock_addr   the connect checks that would write the tag
 *   sockops            the TCP tier's state moves
 *   cgroup/sock_release  the collector for inet sockets
 *   iter/tcp, iter/unix  the revokers' walks and a sweep of AF_UNIX tags
 *   lsm hooks          the LSM tier's hooks and the AF_UNIX collector */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

volatile __u64 cookie_sink;

SEC("cgroup/connect4")
int cookie_sock_addr(struct bpf_sock_addr *ctx)
{
	cookie_sink = bpf_get_socket_cookie(ctx);
	return 1;
}

/* bench-cookie sets this one's expected attach type to connect_unix */
SEC("cgroup/connect4")
int cookie_connect_unix(struct bpf_sock_addr *ctx)
{
	cookie_sink = bpf_get_socket_cookie(ctx);
	return 1;
}

SEC("sockops")
int cookie_sockops(struct bpf_sock_ops *ctx)
{
	cookie_sink = bpf_get_socket_cookie(ctx);
	return 1;
}

SEC("cgroup/sock_release")
int cookie_sock_release(struct bpf_sock *ctx)
{
	cookie_sink = bpf_get_socket_cookie(ctx);
	return 1;
}

SEC("iter/tcp")
int cookie_iter_tcp(struct bpf_iter__tcp *ctx)
{
	struct sock_common *sk = ctx->sk_common;

	/* one load, checked: 6.1 refuses a second load of the field, which
	 * is again "or NULL" */
	if (sk)
		cookie_sink = bpf_get_socket_cookie(sk);
	return 0;
}

SEC("iter/unix")
int cookie_iter_unix(struct bpf_iter__unix *ctx)
{
	struct unix_sock *sk = ctx->unix_sk;

	if (sk)
		cookie_sink = bpf_get_socket_cookie(sk);
	return 0;
}

SEC("lsm/socket_connect")
int BPF_PROG(cookie_lsm_socket_connect, struct socket *sock, struct sockaddr *address, int addrlen,
	     int ret)
{
	struct sock *sk = sock->sk;

	if (sk)
		cookie_sink = bpf_get_socket_cookie(sk);
	return ret;
}

SEC("lsm/unix_stream_connect")
int BPF_PROG(cookie_lsm_unix_stream_connect, struct sock *sock, struct sock *other,
	     struct sock *newsk, int ret)
{
	cookie_sink = bpf_get_socket_cookie(sock) ^ bpf_get_socket_cookie(newsk);
	return ret;
}

SEC("lsm/socket_sendmsg")
int BPF_PROG(cookie_lsm_socket_sendmsg, struct socket *sock, struct msghdr *msg, int size, int ret)
{
	struct sock *sk = sock->sk;

	if (sk)
		cookie_sink = bpf_get_socket_cookie(sk);
	return ret;
}

SEC("lsm/sk_free_security")
int BPF_PROG(cookie_lsm_sk_free_security, struct sock *sk)
{
	cookie_sink = bpf_get_socket_cookie(sk);
	return 0;
}
