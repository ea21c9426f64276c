// SPDX-License-Identifier: Apache-2.0
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include "not_offered.h"

static const char *const need_names[] = {
    [KH_NEED_CGROUP] = "the cgroup tier (connect_unix)",
    [KH_NEED_LSM] = "BPF LSM",
    [KH_NEED_ANY] = "any enforcement tier",
    [KH_NEED_VSOCK] = "local VSOCK (vsock_loopback, VM only)",
    [KH_NEED_ROOT] = "root",
    [KH_NEED_NO_LSM] = "a kernel without BPF LSM (the demo's VM step)",
    [KH_NEED_TOOL] = "a program the set-up scripts install",
};

static bool env_is(const char *name, const char *value)
{
	const char *v = getenv(name);

	return v && !strcmp(v, value);
}

/* Whether the declared tier promises the need. Root is promised by any
 * declaration; VSOCK is never promised on a host (its control channel is
 * VSOCK), so the gate for it is EXECGATE_VM=1, checked by the caller. */
static bool promised(const char *tier, enum kh_need need)
{
	bool cg = !strcmp(tier, "cgroup") || !strcmp(tier, "full");
	bool lsm = !strcmp(tier, "lsm") || !strcmp(tier, "full");

	switch (need) {
	case KH_NEED_CGROUP:
		return cg;
	case KH_NEED_LSM:
		return lsm;
	case KH_NEED_ANY:
	case KH_NEED_ROOT:
	case KH_NEED_TOOL:
		return true;
	case KH_NEED_VSOCK:
		return false;
	case KH_NEED_NO_LSM:
		return !strcmp(tier, "cgroup");
	}
	return true;
}

static void (*skip_teardown)(void);

void kh_on_skip(void (*teardown)(void))
{
	skip_teardown = teardown;
}

/* Before a skip: the registered teardown, once (it may skip no further). */
static void before_skip(void)
{
	void (*t)(void) = skip_teardown;

	skip_teardown = NULL;
	if (t)
		t();
}

bool kh_promised(enum kh_need need)
{
	const char *tier = getenv("EXECGATE_EXPECT_TIER");

	return tier && *tier && promised(tier, need);
}

void kh_not_offered(enum kh_need need, const char *reason)
{
	const char *tier = getenv("EXECGATE_EXPECT_TIER");
	const char *what = need_names[need];

	if (tier && *tier) {
		if (strcmp(tier, "cgroup") && strcmp(tier, "lsm") && strcmp(tier, "full"))
			cr_assert_fail("EXECGATE_EXPECT_TIER=%s: not one of cgroup, lsm, full",
				       tier);
		if (promised(tier, need))
			cr_assert_fail("EXECGATE_EXPECT_TIER=%s promises %s, but: %s", tier, what,
				       reason);
		fprintf(stderr,
			"SKIPPED: %s::%s needs %s, not offered by this kernel "
			"(EXECGATE_EXPECT_TIER=%s): %s\n",
			criterion_current_test->category, criterion_current_test->name, what, tier,
			reason);
		before_skip();
		cr_skip_test(EG_NOT_OFFERED "%s", reason);
	}
	if (env_is("EXECGATE_ALLOW_SKIP", "1")) {
		fprintf(stderr, "SKIPPED: %s::%s needs %s (EXECGATE_ALLOW_SKIP=1): %s\n",
			criterion_current_test->category, criterion_current_test->name, what,
			reason);
		before_skip();
		cr_skip_test("SKIPPED: needs %s: %s", what, reason);
	}
	cr_assert_fail("needs %s: %s (declare EXECGATE_EXPECT_TIER=cgroup|lsm|full, or set "
		       "EXECGATE_ALLOW_SKIP=1 to skip)",
		       what, reason);
	abort(); /* cr_assert_fail does not return */
}
