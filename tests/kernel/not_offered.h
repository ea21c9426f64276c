/* SPDX-License-Identifier: Apache-2.0 */
/* The one way a kernel test may end without running: the kernel does not
 * offer what the test needs. Every test that cannot run goes through here,
 * so no skip is silent and none happens by accident:
 *
 *   EXECGATE_EXPECT_TIER=cgroup|lsm|full declares what this kernel must give
 *     (make test-kernel declares cgroup for the host; scripts/vm-guest.sh
 *     declares lsm or full in the VMs). A need inside the declared tier that
 *     the kernel does not meet FAILS. A need outside it ends the test with a
 *     loud SKIPPED line and "not offered by this kernel: ...", which the VM
 *     matrix counts apart and never as a pass; vmtest also fails a test that
 *     was not offered on every kernel, so CI runs each test somewhere.
 *   Nothing declared: the test FAILS, unless EXECGATE_ALLOW_SKIP=1 (a
 *     developer's explicit opt-out, again with a loud SKIPPED line). */
#ifndef EXECGATE_TEST_KERNEL_NOT_OFFERED_H
#define EXECGATE_TEST_KERNEL_NOT_OFFERED_H

#include <stdbool.h>

#define EG_NOT_OFFERED "not offered by this kernel: "

/* What a test needs. */
enum kh_need {
	KH_NEED_CGROUP, /* connect_unix (cgroup tier) */
	KH_NEED_LSM,	/* usable BPF LSM */
	KH_NEED_ANY,	/* either tier */
	KH_NEED_VSOCK,	/* vsock_loopback: only inside a matrix VM, never on a host */
	KH_NEED_ROOT,
	/* a kernel WITHOUT usable BPF LSM: the demo then runs its LSM steps in
	 * a VM, the path test_cli_demo checks (promised by tier cgroup) */
	KH_NEED_NO_LSM,
	/* a program the set-up scripts install (scripts/check-tools.txt):
	 * promised wherever a tier is declared, so its absence fails there */
	KH_NEED_TOOL,
};

/* Whether EXECGATE_EXPECT_TIER promises need on this kernel. */
bool kh_promised(enum kh_need need);

/* Criterion runs no .fini after a skip (cr_skip_test ends the test's
 * process at once), so a world set up before the skip would outlive the
 * run: pins, a cgroup with programs attached, a scratch dir. A harness
 * registers its teardown here in its set-up; kh_not_offered runs it once
 * before it skips. NULL: nothing to run. */
void kh_on_skip(void (*teardown)(void));

/* Does not return: fails or skips the current test. */
void kh_not_offered(enum kh_need need, const char *reason) __attribute__((noreturn));

#endif
