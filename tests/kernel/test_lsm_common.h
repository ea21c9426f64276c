/* SPDX-License-Identifier: Apache-2.0 */
/* Gates for LSM-tier kernel tests.
 *
 * A kernel without usable BPF LSM (the 6.18 CI host) cannot run these tests.
 * There they end with cr_skip_test("not offered by this kernel: ..."): the
 * summary of scripts/vmtest.sh counts that as "not offered", never as a pass.
 * Inside the VM matrix, scripts/vm-guest.sh sets EXECGATE_EXPECT_TIER to the
 * tier the booted kernel must give (lsm or full); there a failed probe is a
 * test failure, so a broken VM setup cannot hide behind "not offered". */
#ifndef EXECGATE_TEST_LSM_COMMON_H
#define EXECGATE_TEST_LSM_COMMON_H

#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include "loader/lsm_probe.h"

#define EG_NOT_OFFERED "not offered by this kernel: "

static inline bool eg_test_expect_lsm(void)
{
	const char *tier = getenv("EXECGATE_EXPECT_TIER");

	return tier && (!strcmp(tier, "lsm") || !strcmp(tier, "full"));
}

/* First call of every LSM-tier test. */
static inline void eg_test_require_lsm(void)
{
	struct eg_lsm_probe p;

	if (!eg_lsm_probe(&p))
		return;
	if (eg_test_expect_lsm())
		cr_assert_fail("EXECGATE_EXPECT_TIER=%s but BPF LSM is not usable: %s",
			       getenv("EXECGATE_EXPECT_TIER"), p.reason);
	cr_skip_test(EG_NOT_OFFERED "%s", p.reason);
}

/* VSOCK tests make real connections to CID 1 through vsock_loopback. They run
 * only inside a matrix VM (EXECGATE_VM=1): the CI host's own control channel
 * is VSOCK, and the tests never create a VSOCK socket there. */
static inline void eg_test_require_vm_vsock(void)
{
	if (getenv("EXECGATE_VM") && !strcmp(getenv("EXECGATE_VM"), "1"))
		return;
	cr_skip_test(EG_NOT_OFFERED "VSOCK tests run only inside the VM matrix (make vmtest)");
}

#endif
