// SPDX-License-Identifier: GPL-2.0-only
/* bench-kernel's "copies unlocked" row (tests/bench/bench_kernel.c; built by
 * scripts/make/speed.mk, never loaded by the loader): the whole
 * connect_unix program with the lock pairs of its locked copies
 * (bpf/execgate_common.bpf.h) compiled out, to measure in one run what
 * lock-free copies would save on the allowed path (the lock pair alone is
 * ~0 on one host, +84 ns on another). Never a real object: without the
 * lock a copy can be torn by a concurrent in-place update.
 *
 * bpf_helpers.h is read first, so the helpers keep their declarations; the
 * macros below then replace every later call, which are the production
 * headers' copies only (bpf/cgroup_connect_unix.bpf.c itself takes no
 * lock). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define bpf_spin_lock(lock)   ((void)(lock))
#define bpf_spin_unlock(lock) ((void)(lock))

#include "cgroup_connect_unix.bpf.c"
