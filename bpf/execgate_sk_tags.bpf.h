/* SPDX-License-Identifier: GPL-2.0-only */
/* The socket tag map (abi.h, struct eg_sk_tag), declared apart from
 * execgate_maps.bpf.h so that bpf/revoke_unix_iter.bpf.c, which reads it,
 * holds no other map: the iterator is loaded by the revokers beside the
 * tiers and takes this one map by fd (user/loader/revokers/revoke_unix_iter.c clears
 * its pin path first, so it never pins or adopts a map of its own). */
#ifndef EXECGATE_SK_TAGS_BPF_H
#define EXECGATE_SK_TAGS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "abi/abi.h"

/* admitted socket -> the execution it was admitted to */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct eg_sk_tag);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} eg_sk_tags SEC(".maps");

#endif
