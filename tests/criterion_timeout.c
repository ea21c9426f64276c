// SPDX-License-Identifier: Apache-2.0
/* Every case's timeout, scaled by EXECGATE_TEST_TIMEOUT_SCALE.
 *
 * A suite's .timeout is a hang catcher sized for the program running
 * alone. `make check` runs the VM matrix's three guests (emulated CPUs, two
 * vCPUs each) beside the system test's guest and the host lanes on two
 * cores: cgroup_cli, 48 to 63 s alone in a 6.12 guest, took 284 s there
 * (docs/bench/2026-12-07-check-fresh-root-static.md), and in the CI run
 * of stop 43 four cases ran out of their 90, 120 and 300 s with no
 * assertion failed. The guests run with a scale (scripts/vmtest.sh); a
 * hang still ends at the scaled timeout, and a whole guest at vmtest's
 * boot limit.
 *
 * Criterion's runner reads each case's timeout from its extra data when it
 * starts the case, after the PRE_ALL hooks: scaling it there is all it
 * takes. Unset or 1: the timeouts as written. A value that is not a number
 * from 1 to 20 ends the run before any case, with the reason. */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <criterion/internal/ordered-set.h>
#include <stdio.h>
#include <stdlib.h>

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
	const char *s = getenv("EXECGATE_TEST_TIMEOUT_SCALE");
	char *end;
	double k;

	if (!s || !*s)
		return;
	k = strtod(s, &end);
	if (*end || !(k >= 1 && k <= 20)) {
		fprintf(stderr, "test: EXECGATE_TEST_TIMEOUT_SCALE=%s: not a number from 1 to 20\n",
			s);
		exit(2);
	}
	FOREACH_SET(struct criterion_suite_set * ss, set->suites)
	{
		if (ss->suite.data)
			ss->suite.data->timeout *= k;
		FOREACH_SET(struct criterion_test * t, ss->tests)
		{
			/* 0 (none of its own: the suite's applies) stays 0;
			 * no datum is scaled twice. */
			if (t->data && t->data != ss->suite.data)
				t->data->timeout *= k;
		}
	}
}
