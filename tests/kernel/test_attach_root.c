// SPDX-License-Identifier: Apache-2.0
/* status and the attach point: a cgroup sock_addr program checks only
 * sockets created in its cgroup, so status warns (cgroup-not-root) when the
 * cgroup programs are attached below the cgroup v2 root, and
 * --require-root-attach turns the warning into exit 1. The kernel tests
 * attach to scratch cgroups, so they see the warning; its absence is
 * judged by the pure decision on the real root's id (never attaching
 * there). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "harness.h"
#include "loader/tiers/attach_root.h"
#include "loader/tiers/cgroup.h"

static void prog(struct eg_tier_status *st, const char *hook, __u64 target_id, const char *target)
{
	struct eg_prog_status *p = &st->progs[st->nprogs++];

	snprintf(p->hook, sizeof(p->hook), "%s", hook);
	snprintf(p->target, sizeof(p->target), "%.*s", (int)sizeof(p->target) - 1, target);
	p->target_id = target_id;
}

/* guarantees: none */
Test(attach_root, decision_judges_every_cgroup_program)
{
	struct eg_tier_status st[3];
	struct eg_attach_check a;

	memset(st, 0, sizeof(st));
	eg_attach_point_decide(st, 3, 1, &a);
	cr_assert_eq(a.point, EG_ATTACH_NONE, "nothing loaded: nothing to judge");

	/* Global (LSM) hooks have no cgroup: still nothing to judge. */
	prog(&st[1], "lsm/socket_connect", 0, "");
	eg_attach_point_decide(st, 3, 1, &a);
	cr_assert_eq(a.point, EG_ATTACH_NONE);

	prog(&st[0], "connect_unix", 1, "/sys/fs/cgroup");
	prog(&st[2], "connect4", 1, "/sys/fs/cgroup");
	eg_attach_point_decide(st, 3, 1, &a);
	cr_assert_eq(a.point, EG_ATTACH_ROOT, "every cgroup program at the root");

	/* One program below the root is enough, whichever tier it is in. */
	prog(&st[2], "sockops", 4242, "/sys/fs/cgroup/sandboxes");
	prog(&st[2], "connect6", 4343, "/sys/fs/cgroup/other");
	eg_attach_point_decide(st, 3, 1, &a);
	cr_assert_eq(a.point, EG_ATTACH_NOT_ROOT);
	cr_assert_str_eq(a.hook, "sockops", "the first program below the root is named");
	cr_assert_str_eq(a.cgroup, "/sys/fs/cgroup/sandboxes");
}

/* EG_CGROUP_ROOT_ID is what the kernel gives the cgroup v2 root: the
 * mount point's inode here (no cgroup namespace between the tests and the
 * root). A program attached there would raise no warning, one a level below
 * would; no program is attached. */
/* guarantees: none */
Test(attach_root, root_id_is_the_cgroup2_mount_points)
{
	struct eg_tier_status st[1];
	struct eg_attach_check a;
	char root[512], child[600];
	struct stat sb, cb;

	cr_assert_eq(eg_cgroup2_root(root, sizeof(root)), 0, "no cgroup2 mount");
	cr_assert_eq(stat(root, &sb), 0, "%s: %m", root);
	cr_assert_eq((unsigned long long)sb.st_ino, EG_CGROUP_ROOT_ID,
		     "the cgroup v2 root %s has id %llu", root, (unsigned long long)sb.st_ino);
	memset(st, 0, sizeof(st));
	prog(&st[0], "connect_unix", sb.st_ino, root);
	eg_attach_point_check(st, 1, &a);
	cr_assert_eq(a.point, EG_ATTACH_ROOT, "a program at %s is at the root", root);
	cr_assert_str_eq(a.root, root);

	/* The init scope (or any child) of a real hierarchy is below it. */
	snprintf(child, sizeof(child), "%s/init.scope", root);
	if (stat(child, &cb))
		cb.st_ino = sb.st_ino + 1;
	memset(st, 0, sizeof(st));
	prog(&st[0], "connect4", cb.st_ino, child);
	eg_attach_point_check(st, 1, &a);
	cr_assert_eq(a.point, EG_ATTACH_NOT_ROOT);
	cr_assert_str_eq(a.cgroup, child);
}

TestSuite(attach_root_cli, .init = kh_setup_shared, .fini = kh_teardown, .timeout = 60);

/* guarantees: none */
Test(attach_root_cli, status_warns_below_the_root_and_the_flag_fails)
{
	char out[32768], want[1024];
	int rc;

	rc = kh_cli(out, sizeof(out), "status", "--json", NULL);
	cr_assert_eq(rc, 0, "a warning alone must not fail status (health checks): %d: %s", rc,
		     out);
	cr_assert_not_null(strstr(out, "\"attach_root\":false"), "%s", out);
	cr_assert_not_null(strstr(out, "\"warnings\":[{\"code\":\"cgroup-not-root\""), "%s", out);
	snprintf(want, sizeof(want), "\"cgroup\":\"%s\",\"root\":", kh.cgroup);
	cr_assert_not_null(strstr(out, want), "the warning names %s: %s", kh.cgroup, out);

	rc = kh_cli(out, sizeof(out), "status", NULL);
	cr_assert_eq(rc, 0, "%s", out);
	snprintf(want, sizeof(want),
		 "warning: cgroup-not-root: connect_unix is attached at cgroup %s,", kh.cgroup);
	cr_assert_not_null(strstr(out, want), "%s", out);

	rc = kh_cli(out, sizeof(out), "status", "--require-root-attach", NULL);
	cr_assert_eq(rc, 1, "--require-root-attach below the root: exit 1, got %d: %s", rc, out);
	snprintf(want, sizeof(want), "execgate: status: connect_unix: attached at cgroup %s, not",
		 kh.cgroup);
	cr_assert_not_null(strstr(out, want), "%s", out);

	/* load prints the same report, so the operator sees it at load time. */
	rc = kh_cli(out, sizeof(out), "load", "--cgroup", kh.cgroup, NULL);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_not_null(strstr(out, "warning: cgroup-not-root:"), "%s", out);
}
