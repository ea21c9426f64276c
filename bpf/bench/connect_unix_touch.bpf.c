// SPDX-License-Identifier: GPL-2.0-only
/* Benchmark-only connect_unix programs (bench-kernel's "memory touches"
 * rows; built by scripts/make/speed.mk with -DEG_TOUCH=N, never loaded by
 * the loader): what touching map memory costs inside a hook that runs
 * between two halves of a connect() system call, whose footprint evicts
 * the program's data from the nearer caches every time.
 *   0  nothing (the empty program)
 *   1  one load from an ARRAY map value
 *   2  one increment in a PERCPU_ARRAY value (eg_counters before)
 *   3  one increment in an ARRAY slot keyed by CPU (eg_counters now)
 *   4  1 and 3: two independent touches
 *   5  1 and 2
 * The figures explain the unregistered path: every touch is a cache miss,
 * independent misses overlap, dependent ones add up (a per-CPU lookup loads
 * the element's per-CPU pointer, then the value).
 * The kernel costs the allowed path cannot avoid, each alone:
 *   6  the socket tag alone: creating the connecting socket's sk_storage
 *      with an eg_sk_tag, as eg_tag_socket() does (the allowed path's floor)
 *   7  one bpf_spin_lock / bpf_spin_unlock pair on an ARRAY value (each
 *      locked copy takes one); over row 1, the lock pair alone
 *   8  one bpf_ktime_get_boot_ns() (the grant's expiry check)
 *   9  one bpf_ktime_get_coarse_ns()
 *  10  one bpf_jiffies64()
 * The tag without allocation (a preallocated hash keyed by the socket
 * cookie, never reused within a boot), each alone:
 *  11  bpf_get_socket_cookie() alone
 *  12  the cookie tag: the cookie, then one BPF_NOEXIST insert of a new key
 *      (every connect's socket is new) into a preallocated HASH whose value
 *      is one u64, as a tag of (sandbox index, epoch) would be
 *  13  12, then a delete of the same key: insert plus what a collector
 *      (cgroup sock_release, lsm/sk_free_security) pays per socket
 *  14  13 on a 4 096-entry map: whether the cost is the big table's cold
 *      buckets (262 144 entries span 4 MB of buckets and 16 MB of elements)
 * A boot clock without the clocksource read:
 *  15  bpf_ktime_get_coarse_ns() plus a boot-minus-monotonic offset read
 *      from an ARRAY word, which a program on the suspend_resume tracepoint
 *      would keep current (CLOCK_MONOTONIC stops in suspend; docs/design.md
 *      §15)
 * The unregistered path of bpf/cgroup_connect_unix.bpf.c, from its parts,
 * with the production functions (on unregistered connects, so each stops
 * where the real program's unregistered path stops):
 *  16  the path scan alone (eg_unix_path_scan: length, filter key)
 *  17  16, then the hint bit (eg_path_hinted: one inlined ARRAY load)
 *  18  17, then the reason counter (eg_count): the whole unregistered path,
 *      whose two map touches are what rows 1-4 measure alone */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "abi/abi.h"
#include "probe_tag.bpf.h"
#if EG_TOUCH >= 16
/* the real maps: the bench opens this object on its pin directory, so the
 * hint bitmap and the counters are the ones the real program uses */
#include <bpf/bpf_core_read.h>
#include "execgate_unix_path.bpf.h"

extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;
extern void *bpf_rdonly_cast(void *obj, __u32 btf_id) __ksym;
#endif

#if EG_TOUCH == 12 || EG_TOUCH == 13 || EG_TOUCH == 14
/* Only in the objects that use it: preallocated, it costs ~20 MB each. The
 * probes run a few tens of thousands of connects; 12 never fills it, and a
 * full map would show as failed inserts (probe_cookie_full) in the bench. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EG_TOUCH == 14 ? 4096 : 262144);
	__type(key, __u64);
	__type(value, __u64);
} probe_cookie_tags SEC(".maps");

__u64 probe_cookie_full;
#endif

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} touch_words SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} touch_percpu SEC(".maps");

struct touch_slot {
	__u64 n[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct touch_slot);
} touch_cpu_slots SEC(".maps");

struct touch_locked {
	struct bpf_spin_lock lock;
	__u64 word;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct touch_locked);
} touch_locked SEC(".maps");

SEC("cgroup/connect_unix")
int eg_connect_unix_touch(struct bpf_sock_addr *ctx)
{
	__u32 k = 3;
	__u64 *v;

	if (EG_TOUCH == 1 || EG_TOUCH == 4 || EG_TOUCH == 5) {
		v = bpf_map_lookup_elem(&touch_words, &k);
		if (v && *v == 0x5eed)
			return 0; /* never: the words stay 0 */
	}
	if (EG_TOUCH == 2 || EG_TOUCH == 5) {
		v = bpf_map_lookup_elem(&touch_percpu, &k);
		if (v)
			*v += 1;
	}
	if (EG_TOUCH == 3 || EG_TOUCH == 4) {
		__u32 cpu = bpf_get_smp_processor_id();
		struct touch_slot *s = bpf_map_lookup_elem(&touch_cpu_slots, &cpu);

		if (s)
			s->n[3] += 1;
	}
	if (EG_TOUCH == 6)
		probe_tag(ctx->sk);
	if (EG_TOUCH == 7) {
		__u32 zero = 0;
		struct touch_locked *l = bpf_map_lookup_elem(&touch_locked, &zero);
		__u64 w = 0;

		if (l) {
			bpf_spin_lock(&l->lock);
			w = l->word;
			bpf_spin_unlock(&l->lock);
		}
		if (w == 0x5eed)
			return 0; /* never: the word stays 0 */
	}
	if (EG_TOUCH == 8 && bpf_ktime_get_boot_ns() == 1)
		return 0; /* never */
	if (EG_TOUCH == 9 && bpf_ktime_get_coarse_ns() == 1)
		return 0; /* never */
	if (EG_TOUCH == 10 && bpf_jiffies64() == 1)
		return 0; /* never */
	if (EG_TOUCH == 15) {
		/* the boot clock as a coarse read plus a boot-minus-monotonic
		 * word kept by a program on suspend/resume: one inlined ARRAY
		 * load and one 8-byte read beside the coarse clock */
		__u32 zero = 0;
		__u64 *off = bpf_map_lookup_elem(&touch_words, &zero);

		if (off && bpf_ktime_get_coarse_ns() + *(volatile __u64 *)off == 1)
			return 0; /* never */
	}
	if (EG_TOUCH == 11 && bpf_get_socket_cookie(ctx) == 0)
		return 0; /* never: cookies start at 1 */
#if EG_TOUCH == 12 || EG_TOUCH == 13 || EG_TOUCH == 14
	{
		__u64 cookie = bpf_get_socket_cookie(ctx);
		__u64 tag = (1ULL << 32) | 1; /* (sandbox index, epoch) */

		if (bpf_map_update_elem(&probe_cookie_tags, &cookie, &tag, BPF_NOEXIST))
			__sync_fetch_and_add(&probe_cookie_full, 1);
		else if (EG_TOUCH != 12)
			bpf_map_delete_elem(&probe_cookie_tags, &cookie);
	}
#endif
#if EG_TOUCH >= 16
	{
		/* as the real program reads the path: cgroup_connect_unix.bpf.c */
		struct bpf_sock_addr_kern *sa = bpf_cast_to_kern_ctx(ctx);
		struct __kernel_sockaddr_storage *ss;
		struct eg_path_filter_key fk;
		__u32 addrlen, limit, len;

		ss = bpf_rdonly_cast(sa->uaddr,
				     bpf_core_type_id_kernel(struct __kernel_sockaddr_storage));
		addrlen = sa->uaddrlen;
		limit = addrlen > 2 ? addrlen - 2 : 0;
		if (limit > EG_UNIX_PATH_MAX)
			limit = EG_UNIX_PATH_MAX;
		len = eg_unix_path_scan((const __u8 *)ss->__data, limit, &fk);
		if (EG_TOUCH == 16 && len == 3 && fk.head == 0x5eed && fk.tail == 7)
			return 0; /* never: the key stays live without a store */
		if (EG_TOUCH >= 17 && (!len || !eg_path_hinted(&fk))) {
			if (EG_TOUCH == 18)
				eg_count(EG_K_ALLOW_UNREGISTERED);
			return 1;
		}
	}
#endif
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
