// SPDX-License-Identifier: GPL-2.0-only
/* The cgroup tier: every Unix connect() from the attached cgroup. A
 * registered path is allowed only for the process its endpoint role admits
 * (execgate_common.bpf.h); everything else passes after one filter lookup.
 *
 * The section is the hook's own name. libbpf learned it in 1.3; the 1.1 of
 * Debian 12 leaves the program untyped, so the loader (user/loader/
 * tier_cgroup.c) sets the program type and the attach type
 * (EG_BPF_CGROUP_UNIX_CONNECT, user/kcompat.h) before load either way.
 *
 * Benchmark variants (per-step stops, unlocked copies) are built from this
 * file by bpf/bench/, never by switches here. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "execgate_unix_path.bpf.h"

extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;
extern void *bpf_rdonly_cast(void *obj, __u32 btf_id) __ksym;

#define SOCK_ALLOW 1
#define SOCK_DENY  0 /* connect() fails with EPERM */

SEC("cgroup/connect_unix")
int eg_connect_unix(struct bpf_sock_addr *ctx)
{
	struct bpf_sock_addr_kern *sa = bpf_cast_to_kern_ctx(ctx);
	struct __kernel_sockaddr_storage *ss;
	struct eg_path_filter_key fk;
	struct eg_endpoint_snap ep;
	struct eg_record_snap rec;
	struct eg_proc_id caller;
	struct eg_path_key key;
	__u32 addrlen, limit, len, reason;
	const __u8 *path;
	int rc;

	ss = bpf_rdonly_cast(sa->uaddr, bpf_core_type_id_kernel(struct __kernel_sockaddr_storage));
	addrlen = sa->uaddrlen;
	limit = addrlen > 2 ? addrlen - 2 : 0;
	if (limit > EG_UNIX_PATH_MAX)
		limit = EG_UNIX_PATH_MAX;
	path = (const __u8 *)ss->__data;

	len = eg_unix_path_scan(path, limit, &fk);
	if (!len || !eg_path_may_be_registered(&fk)) {
		eg_count(EG_K_ALLOW_UNREGISTERED);
		return SOCK_ALLOW;
	}

	__builtin_memset(&rec, 0, sizeof(rec));
	rc = eg_unix_endpoint_copy(path, len, &key, &ep);
	if (rc == EG_COPY_MISSING) {
		/* filter collision: same length and end chunks, other path */
		eg_count(EG_K_ALLOW_UNREGISTERED);
		return SOCK_ALLOW;
	}
	if (rc != EG_COPY_OK) {
		reason = EG_K_DENY_INCONSISTENT;
		goto deny;
	}
	reason = eg_record_verdict(&ep, &rec);
	if (reason)
		goto deny;
	if (!eg_current_proc(&caller)) {
		reason = EG_K_DENY_NO_TASK;
		goto deny;
	}
	reason = eg_caller_verdict(&ep, &caller, &rec);
	if (eg_reason_allows(reason)) {
		if (!eg_tag_socket(ctx->sk, &rec, ep.role)) {
			reason = EG_K_DENY_NO_TAG;
			goto deny;
		}
		eg_count(reason);
		return SOCK_ALLOW;
	}
deny:
	/* audit: allowed untagged (docs/design.md, "Modes") */
	if (eg_deny_or_audit(EG_HOOK_CONNECT_UNIX, reason, rec.mode, ep.sandbox, rec.epoch, path,
			     len, NULL))
		return SOCK_ALLOW;
	return SOCK_DENY;
}

char LICENSE[] SEC("license") = "GPL";
