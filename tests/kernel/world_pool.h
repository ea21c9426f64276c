/* SPDX-License-Identifier: Apache-2.0 */
/* A loaded world handed from one kernel test to the next.
 *
 * Every test runs in a process of its own (Criterion), and kh_setup() used
 * to give each one a world of its own: a scratch cgroup, pin dir and state
 * dir and an `execgate load` into them. Under TCG a load takes seconds,
 * most of it libbpf reading the kernel's BTF once per BPF object, and it
 * was most of the VM matrix's time. So a world outlives its test: at
 * teardown it goes to a pool slot of the Criterion run, and the next test
 * that asks for the same tier takes it instead of loading.
 *
 * What the next test gets is the world as the load left it, not as the last
 * test left it:
 *   - right after its load, every pinned map's entries (the socket-storage
 *     maps aside: their entries die with their sockets) and the state dir
 *     are recorded under <dir>/.world/, with the id of every pinned map and
 *     link;
 *   - a world goes to the pool only when every process its test started is
 *     dead and its cgroup holds no process and no child cgroup;
 *   - taking it checks that the pins are the same objects (same names, same
 *     ids: a test that unloaded, reloaded or replaced a pin makes a world no
 *     one takes), then deletes every map entry, writes back the recorded
 *     ones, empties the event ring, and puts back the state dir and an empty
 *     scratch dir.
 * Anything that fails on the way destroys the world, and the test loads a
 * fresh one, as before. EXECGATE_TEST_FRESH_WORLD=1 loads one per test. */
#ifndef EXECGATE_TEST_KERNEL_WORLD_POOL_H
#define EXECGATE_TEST_KERNEL_WORLD_POOL_H

#include <stdbool.h>

#include <stddef.h>

/* The paths of a world, kh's or another harness's (test_lsm_env.h). */
struct kh_world {
	char *dir, *cgroup, *pin_dir, *state_dir;
	size_t dir_size, cgroup_size, pin_size, state_size;
	const char *keys_sub; /* a dir under dir made anew, empty, on a reset, or NULL */
};

/* The same for any world, under a slot name of the caller's: record after
 * its load, give at its teardown, take (the paths filled in; false with
 * the paths filled in: a world that must be destroyed). */
void kh_world_record(const char *slot, const struct kh_world *w);
bool kh_world_give(const struct kh_world *w);
bool kh_world_take(const char *slot, struct kh_world *w);

/* The pool's name, "<runner pid>" or EXECGATE_POOL_ID's (several runs one
 * after the other share it: scripts/vm-suites.sh). in_runner: called in
 * Criterion's runner (a report hook), not in a test. */
void kh_pool_id(char *out, size_t size, bool in_runner);
/* EXECGATE_POOL_KEEP=1 with an EXECGATE_POOL_ID: the end of a run leaves
 * the pool (and the probe's record, harness.c) to the next run. */
bool kh_pool_kept(void);

/* Fills kh with a pooled world for tier (NULL: loaded without --require),
 * reset to its state after load; false when there is none to take. */
bool kh_pool_take(const char *tier);
/* Records the world kh just loaded, so that it can be pooled. */
void kh_pool_record(const char *tier);
/* At teardown, after kh's processes were killed: pools the world when it
 * can be reused and returns true; false: the caller destroys it. */
bool kh_pool_give(void);

#endif
