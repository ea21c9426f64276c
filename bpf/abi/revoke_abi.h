/* SPDX-License-Identifier: Apache-2.0 */
/* What bpf/revoke_unix_iter.bpf.c yields per stale socket, read by
 * user/loader/revokers/revoke_unix.c. Not a pinned map: internal to the loader. */
#ifndef EXECGATE_REVOKE_ABI_H
#define EXECGATE_REVOKE_ABI_H

/* Bumped with every change to the hit or to the program's .bss: a pinned
 * iterator of another version is replaced, not read. */
#define EG_REVOKE_ITER_ABI 2

struct eg_revoke_hit {
	__u32 tgid; /* holder, initial PID namespace */
	__u32 fd;   /* the holder's fd number */
	__u64 epoch;
	__u64 sk;   /* kernel socket address: identifies one socket held by several */
	__u64 peer; /* the other end's address (0: none): a stream is {sk, peer} */
};

#endif
