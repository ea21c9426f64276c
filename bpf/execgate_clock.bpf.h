/* SPDX-License-Identifier: GPL-2.0-only */
/* The grant clock's map (abi.h, struct eg_clock_word), declared apart from
 * execgate_maps.bpf.h so that bpf/clock_resume.bpf.c, which keeps it,
 * holds no other map: an object pins every map it declares. */
#ifndef EXECGATE_CLOCK_BPF_H
#define EXECGATE_CLOCK_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "abi/abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct eg_clock_word);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} eg_clock SEC(".maps");

#endif
