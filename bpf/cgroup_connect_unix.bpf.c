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
#include "execgate_unix_path.bpf.h"
#include "execgate_admit_cache.bpf.h"

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
		if (eg_admit_hit(&ak, &key, &caller, &tag) && eg_tag_socket_as(ctx->sk, &tag)) {
			eg_count(tag.role == EG_ROLE_VMM ? EG_K_ALLOW_BRIDGE : EG_K_ALLOW_GRANT);
			return SOCK_ALLOW;
		}
	}
	if (!eg_path_filtered(&fk)) {
		eg_count(EG_K_ALLOW_UNREGISTERED);
		return SOCK_ALLOW;
	}

	__builtin_memset(&rec, 0, sizeof(rec));
	rc = eg_unix_endpoint_copy(&key, &ep);
	if (rc == EG_COPY_MISSING) {
		/* filter collision: same length and end chunks, other path */
		eg_count(EG_K_ALLOW_UNREGISTERED);
		return SOCK_ALLOW;
	}
	if (rc != EG_COPY_OK) {
		reason = EG_K_DENY_INCONSISTENT;
		goto deny;
	}
	gen = eg_admit_gen_begin(ep.sandbox); /* before the state it guards */
	reason = eg_record_verdict(&ep, &rec);
	if (reason)
		goto deny;
	if (!known) {
		reason = EG_K_DENY_NO_TASK;
		goto deny;
	}
	reason = eg_caller_verdict_until(&ep, &caller, &rec, &until);
	if (eg_reason_allows(reason)) {
		if (!eg_tag_socket(ctx->sk, &rec, ep.role)) {
			reason = EG_K_DENY_NO_TAG;
			goto deny;
		}
		eg_count(reason);
		if (eg_unix_endpoint_still(&key, &ep))
			eg_admit_remember(&ak, &key, &caller, gen, until, &rec, ep.role);
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
