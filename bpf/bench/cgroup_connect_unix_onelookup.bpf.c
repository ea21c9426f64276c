// SPDX-License-Identifier: GPL-2.0-only
/* bench-kernel's "one lookup" row (tests/bench/bench_kernel.c; built by
 * scripts/make/speed.mk, never loaded by the loader): what the allowed
 * path would cost with a collapsed layout, measured beside the real program.
 * Never a real object: it reads without locks and checks nothing the bench
 * does not set up.
 *
 * The path scan and the pre-filter are the real ones, on the real maps.
 * After them it does, in order:
 *   - one lookup of the exact endpoint (the real eg_endpoints, no lock);
 *   - the caller's identity;
 *   - one lookup of a grant keyed by (sandbox, tgid). The grant carries the
 *     record's epoch and generation and the process identity, so there is
 *     no record lookup and no re-lookup;
 *   - the boot clock against the expiry;
 *   - the counter;
 *   - the cookie-keyed tag: one BPF_NOEXIST insert into a preallocated
 *     hash, as probe 12 of connect_unix_touch.bpf.c does.
 * That is three map elements, where the real program touches five, plus
 * its two re-lookups. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "execgate_unix_path.bpf.h"

extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;
extern void *bpf_rdonly_cast(void *obj, __u32 btf_id) __ksym;

struct onelookup_key {
	__u8 sandbox[EG_ID_BYTES];
	__u32 tgid;
	__u32 pad;
};

struct onelookup_grant {
	struct eg_proc_id proc;
	__u64 epoch;
	__u64 generation;
	__u64 expiry_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct onelookup_key);
	__type(value, struct onelookup_grant);
} onelookup_grants SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 262144);
	__type(key, __u64);
	__type(value, __u64);
} onelookup_tags SEC(".maps");

SEC("cgroup/connect_unix")
int eg_connect_unix_onelookup(struct bpf_sock_addr *ctx)
{
	struct bpf_sock_addr_kern *sa = bpf_cast_to_kern_ctx(ctx);
	struct __kernel_sockaddr_storage *ss;
	struct eg_path_filter_key fk;
	struct onelookup_grant *g;
	struct onelookup_key gk;
	struct eg_endpoint *ep;
	struct eg_proc_id caller;
	struct eg_path_key key;
	__u32 addrlen, limit, len;
	__u64 cookie, tag;
	const __u8 *path;

	ss = bpf_rdonly_cast(sa->uaddr, bpf_core_type_id_kernel(struct __kernel_sockaddr_storage));
	addrlen = sa->uaddrlen;
	limit = addrlen > 2 ? addrlen - 2 : 0;
	if (limit > EG_UNIX_PATH_MAX)
		limit = EG_UNIX_PATH_MAX;
	path = (const __u8 *)ss->__data;
	len = eg_unix_path_scan(path, limit, &fk);
	if (!len || !eg_path_may_be_registered(&fk) || len > EG_UNIX_PATH_MAX) {
		eg_count(EG_K_ALLOW_UNREGISTERED);
		return 1;
	}
	eg_path_key_load(path, len, &key);
	ep = bpf_map_lookup_elem(&eg_endpoints, &key);
	if (!ep) {
		eg_count(EG_K_ALLOW_UNREGISTERED);
		return 1;
	}
	if (!eg_current_proc(&caller))
		return 0;
	__builtin_memcpy(gk.sandbox, ep->sandbox, EG_ID_BYTES);
	gk.tgid = caller.tgid;
	gk.pad = 0;
	g = bpf_map_lookup_elem(&onelookup_grants, &gk);
	if (!g || !eg_proc_eq(&g->proc, &caller) || bpf_ktime_get_boot_ns() >= g->expiry_ns) {
		eg_count(EG_K_DENY_NO_GRANT);
		return 0;
	}
	eg_count(EG_K_ALLOW_GRANT);
	cookie = bpf_get_socket_cookie(ctx);
	tag = g->epoch;
	if (bpf_map_update_elem(&onelookup_tags, &cookie, &tag, BPF_NOEXIST))
		return 0;
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
