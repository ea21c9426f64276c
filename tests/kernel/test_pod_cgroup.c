// SPDX-License-Identifier: Apache-2.0
/* execgated's DaemonSet pod, simulated on this kernel (tests/kernel/
 * pod_cgroup_sim.sh, in private mount and cgroup namespaces): the loader
 * takes the host's cgroup mounts for the cgroup v2 root and the memory
 * cgroup root, never the pod's own /sys/fs/cgroup; status names them; the
 * entrypoint renders the host's root; a load from the pod attaches; and
 * execgated (beside EXECGATE_BIN), started there from the rendered config,
 * answers the DaemonSet's probes: live, ready exactly when the tiers cover
 * unix and vsock, and after an unload live but not ready.
 * Runs on the host (make test-kernel) and in each VM of the matrix. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "harness.h"

#define SCRIPT "tests/kernel/pod_cgroup_sim.sh"
#define YAML   "deploy/kubernetes/execgated.yaml"

TestSuite(pod_cgroup, .timeout = 300);

/* guarantees: none */
Test(pod_cgroup, host_cgroup_roots_from_a_pod_mount_namespace)
{
	const char *eg = getenv("EXECGATE_BIN");
	char out[16384], bin[PATH_MAX];
	int rc;

	cr_assert_eq(access(SCRIPT, R_OK), 0, "%s: run from the repository's top directory",
		     SCRIPT);
	cr_assert_eq(access(YAML, R_OK), 0, "%s: not found", YAML);
	cr_assert(eg && realpath(eg, bin), "EXECGATE_BIN must name the build's execgate");
	rc = kh_run(out, sizeof(out), "sh", SCRIPT, bin, YAML, NULL);
	cr_log_info("%s", out);
	cr_assert_eq(rc, 0, "pod_cgroup_sim.sh: exit %d:\n%s", rc, out);
	cr_assert(strstr(out, "bind: mountinfo: passed over = /sys/fs/cgroup") &&
		      strstr(out, "cgroupns: mountinfo: passed over = /sys/fs/cgroup"),
		  "the pod's own mount was not passed over:\n%s", out);
}
