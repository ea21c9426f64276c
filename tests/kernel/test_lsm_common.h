/* SPDX-License-Identifier: Apache-2.0 */
/* Gates for LSM-tier kernel tests, both through kh_not_offered()
 * (not_offered.h): on a kernel without usable BPF LSM, or outside a matrix
 * VM for VSOCK, a test either fails or ends with a loud SKIPPED line, as
 * EXECGATE_EXPECT_TIER / EXECGATE_ALLOW_SKIP declare. */
#ifndef EXECGATE_TEST_LSM_COMMON_H
#define EXECGATE_TEST_LSM_COMMON_H

#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include "loader/tiers/lsm_probe.h"
#include "not_offered.h"

/* First call of every LSM-tier test. */
static inline void eg_test_require_lsm(void)
{
	struct eg_lsm_probe p;

	if (!eg_lsm_probe(&p))
		return;
	kh_not_offered(KH_NEED_LSM, p.reason);
}

/* VSOCK tests make real connections to CID 1 through vsock_loopback. They run
 * only inside a matrix VM (EXECGATE_VM=1): the CI host's own control channel
 * is VSOCK, and the tests never create a VSOCK socket there. */
static inline void eg_test_require_vm_vsock(void)
{
	if (getenv("EXECGATE_VM") && !strcmp(getenv("EXECGATE_VM"), "1"))
		return;
	kh_not_offered(KH_NEED_VSOCK, "VSOCK tests run only inside the VM matrix (make vmtest)");
}

#endif
