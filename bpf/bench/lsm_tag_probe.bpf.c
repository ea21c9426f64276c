// SPDX-License-Identifier: GPL-2.0-only
/* Benchmark-only LSM programs (bench-lsm's floor rows; built by
 * scripts/make/speed.mk, never loaded by the loader): the socket tag alone,
 * on the hooks where the LSM tier tags admitted sockets. An allowed
 * connect of the real program creates this storage too, so what these
 * cost over an empty program is the floor of its ratio, whatever the checks
 * before the tag cost.
 *   eg_probe_vsock_tag   socket_connect: one eg_sk_tag on an AF_VSOCK
 *                        socket, as eg_vsock_connect() does
 *   eg_probe_unix_tags   unix_stream_connect: what the tier's program
 *                        creates there, one tag on each end (the connecting
 *                        socket and the embryo of the accepted one), or on
 *                        kernels without connect_unix (6.1), where
 *                        socket_connect tags the connecting end, only the
 *                        accepted end's
 * bench-lsm attaches each only while the real program takes its
 * unregistered path, which creates no storage, so the probe's allocations
 * are the socket's first, as on the allowed path. Own map: the tier's maps
 * stay as the loader left them. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "execgate/abi.h"

#define AF_VSOCK 40

char LICENSE[] SEC("license") = "GPL";

/* Set by bench-lsm before load (the object's only .rodata variable), from
 * the loader's eg_lsm_unix_connect_needed(). */
const volatile bool probe_tags_connecting_end = true;

/* Pinned by name (bench-lsm's pin dir) only so that it is created as the
 * loader creates eg_sk_tags, outside the bench's memory cgroup
 * (user/loader/tag_maps.h). */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct eg_sk_tag);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} probe_tags SEC(".maps");

static __always_inline void probe_tag(struct sock *sk)
{
	struct eg_sk_tag init = {.epoch = 1, .generation = 1, .activation = 1, .role = 1};

	/* NULL check first: 6.12 types sock->sk trusted_ptr_or_null. */
	if (sk)
		bpf_sk_storage_get(&probe_tags, sk, &init, BPF_SK_STORAGE_GET_F_CREATE);
}

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
	if (probe_tags_connecting_end)
		probe_tag(sock);
	probe_tag(newsk);
	return 0;
}
