/* SPDX-License-Identifier: GPL-2.0-only */
/* The socket tag alone, for the benchmarks' floor probes
 * (connect_unix_touch.bpf.c row 6, lsm_tag_probe.bpf.c): an eg_sk_tag
 * created in a socket's local storage, as eg_tag_socket() creates one, in a
 * map of the probe's own so that the tier's maps stay as the loader left
 * them. Pinned by name (in the bench's pin dir) only so that the bench can
 * have eg_tag_maps_create_unaccounted() make it as the loader makes
 * eg_sk_tags, outside its memory cgroup (user/loader/maps/tag_maps.h): the
 * probe then costs what the real tag costs. */
#ifndef EXECGATE_BENCH_PROBE_TAG_BPF_H
#define EXECGATE_BENCH_PROBE_TAG_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "abi/abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct eg_sk_tag);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} probe_tags SEC(".maps");

/* sk: a socket pointer the hook may pass to bpf_sk_storage_get, or NULL
 * (checked first: 6.12 types an LSM hook's sock->sk trusted_ptr_or_null). */
static __always_inline void probe_tag(void *sk)
{
	struct eg_sk_tag init = {.epoch = 1, .generation = 1, .activation = 1, .role = 1};

	if (sk)
		bpf_sk_storage_get(&probe_tags, sk, &init, BPF_SK_STORAGE_GET_F_CREATE);
}

#endif
