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
 *  10  one bpf_jiffies64() */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "execgate/abi.h"
#include "probe_tag.bpf.h"

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
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
