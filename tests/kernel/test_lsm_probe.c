// SPDX-License-Identifier: Apache-2.0
/* The BPF LSM probe itself: on a kernel that offers BPF LSM the probe must say
 * so; where it does not, the answer must carry a reason. */
#include <errno.h>
#include <criterion/criterion.h>
#include "loader/tiers/lsm_probe.h"
#include "test_lsm_common.h"

/* guarantees: none */
Test(lsm_probe, bpf_lsm_active, .description = "BPF LSM programs load and attach")
{
	struct eg_lsm_probe p;
	int err;

	eg_test_require_lsm();
	err = eg_lsm_probe_fresh(&p);
	cr_assert_eq(err, 0, "probe: %s", p.reason);
	cr_assert(p.active);
	cr_assert_str_empty(p.reason);
	cr_assert_not_null(strstr(p.lsm_list, "bpf"), "lsm list %s", p.lsm_list);
}

/* guarantees: none */
Test(lsm_probe, refusal_names_reason, .description = "a refused probe says why")
{
	struct eg_lsm_probe p;
	int err;

	err = eg_lsm_probe_fresh(&p);
	if (!err) {
		cr_assert(p.active);
		return;
	}
	cr_assert_eq(err, -EOPNOTSUPP);
	cr_assert_not(p.active);
	cr_assert_lt(p.err, 0);
	cr_assert_neq(p.reason[0], '\0');
	cr_assert_not(kh_promised(KH_NEED_LSM), "VM kernel refused BPF LSM: %s", p.reason);
}
