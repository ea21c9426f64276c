/* SPDX-License-Identifier: GPL-2.0-only */
/* Every execgate map, declared once (two in headers of their own, included
 * here, for the objects that may hold only them). Each BPF object that includes this
 * header (the cgroup tier, the LSM tier) gets the same definitions; libbpf
 * pins them by name under the object's pin_root_path (the loader's
 * --pin-dir) and the second object to load reuses the first one's pins, so
 * all programs read and write one set of maps. Keys and values come from
 * bpf/abi/abi.h, the single ABI, so `bpftool map dump` shows named
 * fields.
 *
 * Hash maps are BPF_F_NO_PREALLOC: memory follows the fill, and a
 * preallocated map would recycle a deleted element for another key at once.
 * Element re-use still happens with bpf_mem_alloc, which is why readers
 * (execgate_common.bpf.h) check the key embedded in each value and look the
 * key up again after copying. */
#ifndef EXECGATE_MAPS_BPF_H
#define EXECGATE_MAPS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "abi/abi.h"
#include "execgate_clock.bpf.h"
#include "execgate_sk_tags.bpf.h" /* eg_sk_tags */

/* sandbox -> current execution */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EG_MAX_SANDBOXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct eg_sandbox_key);
	__type(value, struct eg_exec_record);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} eg_records SEC(".maps");

/* Unix socket path -> endpoint (role, sandbox) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EG_MAX_ENDPOINTS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct eg_path_key);
	__type(value, struct eg_endpoint);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} eg_endpoints SEC(".maps");

/* (length, first chunk, last chunk) of registered paths -> how many share it */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EG_MAX_ENDPOINTS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct eg_path_filter_key);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} eg_path_filter SEC(".maps");

/* bitmap in front of eg_path_filter (abi.h, eg_path_hint_bit) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, EG_PATH_HINT_WORDS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} eg_path_hint SEC(".maps");

/* (process, sandbox) -> grant */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EG_MAX_GRANTS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct eg_grant_key);
	__type(value, struct eg_grant);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} eg_grants SEC(".maps");

/* CPU number -> counts by enum eg_kreason (abi.h: why not a per-CPU map).
 * The reason names live in `execgate status`. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, EG_COUNTER_CPUS);
	__type(key, __u32);
	__type(value, struct eg_cpu_counters);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} eg_counters SEC(".maps");

/* the global mode (abi.h, struct eg_mode_word) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct eg_mode_word);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} eg_mode SEC(".maps");

/* EG_WOULD_DENY_KEY(hook, reason) -> denials audit let through, per CPU */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EG_WOULD_DENY_ENTRIES);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} eg_would_deny SEC(".maps");

/* struct eg_event, one per denial */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, EG_EVENTS_BYTES);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} eg_events SEC(".maps");

/* LSM tier: AF_VSOCK (cid, port) -> endpoint */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EG_MAX_ENDPOINTS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct eg_vsock_key);
	__type(value, struct eg_endpoint);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} eg_vsock_endpoints SEC(".maps");

/* LSM tier: bound socket inode -> endpoint */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EG_MAX_ENDPOINTS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct eg_inode_key);
	__type(value, struct eg_endpoint);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} eg_inode_endpoints SEC(".maps");

/* LSM tier: listening socket -> the process that called listen() */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct eg_listener_tag);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} eg_listener_tags SEC(".maps");

/* ---- TCP / ServicePort tier (abi.h, TCP section) ---- */

/* guest address -> endpoint (role EG_ROLE_SERVICE) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EG_MAX_INET_ENDPOINTS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct eg_inet_key);
	__type(value, struct eg_endpoint);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} eg_inet_endpoints SEC(".maps");

/* bitmap in front of eg_inet_endpoints (abi.h, eg_inet_hint_bit) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, EG_INET_HINT_WORDS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} eg_inet_hint SEC(".maps");

/* (process, sandbox, port, protocol) -> ServicePort grant */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EG_MAX_SERVICE_GRANTS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct eg_service_grant_key);
	__type(value, struct eg_service_grant);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} eg_service_grants SEC(".maps");

/* admitted inet socket, by its cookie -> the execution it was admitted to.
 * Preallocated, unlike the maps above: tagging is an insert on every
 * admitted connect, and a preallocated element is taken from a free list
 * instead of allocated (abi.h, struct eg_inet_tag: why the cookie). An
 * element deleted while a reader holds it may be re-used for another
 * cookie; the only deleter is the socket's own release, so such a reader
 * is deciding about a socket that is being closed. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EG_MAX_INET_TAGS);
	__type(key, __u64);
	__type(value, struct eg_inet_tag);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} eg_inet_tags SEC(".maps");

/* network namespace cookie -> last admitted process there */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EG_MAX_INET_NETNS);
	__type(key, __u64);
	__type(value, struct eg_inet_netns);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} eg_inet_netns SEC(".maps");

/* ---- The admission cache (abi.h, "The admission cache") ---- */
/* (path hash, tgid, length) -> an allow the full checks made */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, EG_ADMIT_CACHE_SIZE);
	__uint(map_flags, BPF_F_NO_COMMON_LRU); /* per-CPU lists: no shared lock on insert */
	__type(key, struct eg_admit_key);
	__type(value, struct eg_admit_entry);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} eg_admit_cache SEC(".maps");

/* sandbox stripe -> generation (abi.h, eg_admit_stripe) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, EG_ADMIT_STRIPES);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} eg_admit_gen SEC(".maps");

/* one entry under construction per CPU: too big for the program's stack */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct eg_admit_entry);
} eg_admit_scratch SEC(".maps");

#endif
