// SPDX-License-Identifier: GPL-2.0-only
/* Stream revocation, the finding half (user/loader/revokers/revoke_unix.c does the
 * cut): an iter/task_file program that walks every open file of every
 * process and yields (tgid, fd, socket) for each Unix socket whose
 * eg_sk_tags entry names the target sandbox at a stale epoch. The cut itself
 * is a shutdown(SHUT_RDWR) by userspace on a pidfd_getfd() duplicate: no
 * helper shuts a Unix socket down (bpf_sock_destroy is TCP/UDP only).
 *
 * eg_sk_tags is the pinned map of the enforcing tiers (reused by fd at load).
 * The target lives in .bss, written by userspace between runs, so one loaded
 * program serves every install and retire of a process. The same program,
 * with target_tgid set to the loader's own process (and, where the kernel
 * takes it, a link limited to that process), re-checks the duplicates the
 * loader took: which of them are still stale and not shut down, and which
 * socket each one is, for a whole batch in one read instead of a lookup and
 * a poll per socket. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "abi/abi.h"
#include "abi/revoke_abi.h"
#include "execgate_sk_tags.bpf.h"

#define AF_UNIX	      1
#define SHUTDOWN_MASK 3 /* RCV_SHUTDOWN | SEND_SHUTDOWN */

char LICENSE[] SEC("license") = "GPL";

__u32 eg_iter_abi SEC(".data") = EG_REVOKE_ITER_ABI; /* checked on adopting a pin */
__u8 target_sandbox[EG_ID_BYTES];
__u64 target_epoch;
__u32 target_retired;
__u32 target_tgid;  /* 0: every process; else only that one (the re-check) */
__u64 seen_tagged;  /* tagged sockets of any sandbox, for the bench and tests */
__u64 seen_stopped; /* Unix sockets skipped as shut down both ways */

/* The socket's eg_sk_tags value, read through the socket's local storage.
 * bpf_sk_storage_get() would be simpler, but the socket reached from a file
 * (bpf_sock_from_file()->sk) is an untrusted pointer to the 6.18 verifier,
 * which refuses it for that helper; iter/unix has a trusted one but sees
 * one network namespace and no holder. Untrusted pointers may still be read
 * (direct loads, faults read as zero): the storage keeps a 16-slot cache of
 * its maps' data, then a list, and the map's own address names its entry. */
static __always_inline bool eg_tag_of(struct sock *sk, struct eg_sk_tag *out)
{
	__u64 want = (__u64)(void *)&eg_sk_tags;
	struct bpf_local_storage_data *sd;
	struct bpf_local_storage *st;
	struct hlist_node *n;

	st = sk->sk_bpf_storage;
	if (!st)
		return false;
	for (int i = 0; i < 16; i++) {
		sd = st->cache[i];
		if (sd && (__u64)sd->smap == want)
			return !bpf_probe_read_kernel(out, sizeof(*out), sd->data);
	}
	/* Not cached (more than 16 storage maps on the socket): the list, by
	 * helper reads (an element is reached by container_of, which the
	 * verifier does not follow on a BTF pointer). */
	n = st->list.first;
	for (int i = 0; i < 32 && n; i++) {
		struct bpf_local_storage_elem *e =
		    (void *)((__u64)n -
			     bpf_core_field_offset(struct bpf_local_storage_elem, snode));

		if ((__u64)BPF_CORE_READ(e, sdata.smap) == want)
			return !bpf_probe_read_kernel(out, sizeof(*out), e->sdata.data);
		n = BPF_CORE_READ(n, next);
	}
	return false;
}

SEC("iter/task_file")
int eg_revoke_unix_iter(struct bpf_iter__task_file *ctx)
{
	struct task_struct *task = ctx->task;
	struct file *file = ctx->file;
	struct eg_revoke_hit hit = {};
	struct eg_sk_tag tag;
	struct socket *sock;
	struct sock *sk;

	/* Read once per file so the .data map stays referenced by the
	 * program: userspace finds the ABI word through the program's maps. */
	if (!task || !file || eg_iter_abi != EG_REVOKE_ITER_ABI)
		return 0;
	if (target_tgid && task->tgid != target_tgid)
		return 0;
	sock = bpf_sock_from_file(file);
	if (!sock)
		return 0;
	sk = sock->sk;
	if (!sk || sk->__sk_common.skc_family != AF_UNIX)
		return 0;
	/* Shut down both ways (cut before, or the peer closed): stopped
	 * already, nothing to cut or count. */
	if (BPF_CORE_READ_BITFIELD(sk, sk_shutdown) == SHUTDOWN_MASK) {
		if (!target_tgid)
			__sync_fetch_and_add(&seen_stopped, 1);
		return 0;
	}
	if (!eg_tag_of(sk, &tag))
		return 0;
	if (!target_tgid)
		__sync_fetch_and_add(&seen_tagged, 1);
	for (int i = 0; i < EG_ID_BYTES; i++)
		if (tag.sandbox[i] != target_sandbox[i])
			return 0;
	if (!target_retired && tag.epoch == target_epoch)
		return 0; /* current: an activation change keeps the stream */
	hit.tgid = task->tgid;
	hit.fd = ctx->fd;
	hit.epoch = tag.epoch;
	hit.sk = (__u64)sk;
	/* The other end, so that a stream whose two ends are both tagged (the
	 * LSM tier tags both) is cut and counted once. */
	hit.peer = (__u64)BPF_CORE_READ((struct unix_sock *)sk, peer);
	bpf_seq_write(ctx->meta->seq, &hit, sizeof(hit));
	return 0;
}
