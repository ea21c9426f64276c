// SPDX-License-Identifier: GPL-2.0-only
/* Keeps eg_clock's boot offset (abi.h, struct eg_clock_word) on every
 * suspend and resume step the kernel traces. Attached and pinned by the
 * loader (user/loader/tiers/clock.c, links/clock_resume), which also runs it
 * once by BPF_PROG_TEST_RUN to write the first offset. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "execgate_clock.bpf.h"

SEC("raw_tp/suspend_resume")
int eg_clock_resume(void *ctx)
{
	struct eg_clock_word *c;
	__u32 zero = 0;
	__u64 mono, boot;

	c = bpf_map_lookup_elem(&eg_clock, &zero);
	if (!c)
		return 0;
	/* CLOCK_BOOTTIME second: the difference is the offset plus the time
	 * between the reads, never less, so grants end early by that (tens
	 * of ns), never late. */
	mono = bpf_ktime_get_ns();
	boot = bpf_ktime_get_boot_ns();
	*(volatile __u64 *)&c->word = EG_CLOCK_KEPT | (boot - mono); /* one 8-byte store */
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
