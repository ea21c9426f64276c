// SPDX-License-Identifier: GPL-2.0-only
/* The cgroup tier: every Unix connect() from the attached cgroup. A
 * registered path is allowed only for the process its endpoint role admits
 * (execgate_common.bpf.h); everything else passes after one bitmap test
 * and, for the few paths whose bit is set, one filter lookup. A process's
 * connect again to a path it was allowed on is decided by the admission
 * cache (execgate_admit_cache.bpf.h) in one lookup.
 *
 * The section is the hook's own name. libbpf learned it in 1.3; the 1.1 of
 * Debian 12 leaves the program untyped, so the loader (user/loader/
 * tier_cgroup.c) sets the program type and the attach type
 * (EG_BPF_CGROUP_UNIX_CONNECT, user/kcompat.h) before load either way.
 *
 * Benchmark variants (per-step stops, cache misses) are built from this
 * file by bpf/bench/, never by switches here. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "execgate_connect.bpf.h"

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
	struct eg_admit_key ak;
	struct eg_path_key key;
	struct eg_sk_tag tag;
	struct eg_dest dest;
	__u32 addrlen, limit, len, reason;
	__u64 gen, until;
	const __u8 *path;
	bool known;
	int rc;

	ss = bpf_rdonly_cast(sa->uaddr, bpf_core_type_id_kernel(struct __kernel_sockaddr_storage));
	addrlen = sa->uaddrlen;
	limit = addrlen > 2 ? addrlen - 2 : 0;
	if (limit > EG_UNIX_PATH_MAX)
		limit = EG_UNIX_PATH_MAX;
	path = (const __u8 *)ss->__data;

	len = eg_unix_path_scan(path, limit, &fk);
	if (!len || !eg_path_hinted(&fk)) {
		eg_count(EG_K_ALLOW_UNREGISTERED);
		return SOCK_ALLOW;
	}
	eg_path_key_load(path, len, &key);
	known = eg_current_proc(&caller);
	if (known) {
		/* the admission cache (execgate_admit_cache.bpf.h): a hit is
		 * an allow the checks below made and nothing has undone */
		eg_admit_key_make(&key, len, caller.tgid, &ak);
		if (eg_admit_hit(&ak, &key, &caller, &tag) && eg_connect_hit(ctx->sk, &tag))
			return SOCK_ALLOW;
	}
	if (!eg_path_filtered(&fk)) {
		eg_count(EG_K_ALLOW_UNREGISTERED);
		return SOCK_ALLOW;
	}

	rc = eg_unix_endpoint_copy(&key, &ep);
	if (rc == EG_COPY_MISSING) {
		/* filter collision: same length and end chunks, other path */
		eg_count(EG_K_ALLOW_UNREGISTERED);
		return SOCK_ALLOW;
	}
	/* filled here, not at entry: the unregistered path pays nothing for it */
	__builtin_memset(&dest, 0, sizeof(dest));
	dest.path = key.path;
	reason = eg_connect_decide(rc, &ep, &dest, known, &caller, &rec, &gen, &until);
	if (eg_reason_allows(reason))
		return eg_connect_admit(ctx->sk, EG_HOOK_CONNECT_UNIX, reason, &ep, &rec, &caller,
					gen, until, &ak, &key, &dest)
			   ? SOCK_ALLOW
			   : SOCK_DENY;
	return eg_connect_deny(EG_HOOK_CONNECT_UNIX, reason, &ep, &rec, &dest) ? SOCK_ALLOW
									       : SOCK_DENY;
}

char LICENSE[] SEC("license") = "GPL";
