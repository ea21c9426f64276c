// SPDX-License-Identifier: Apache-2.0
/* `make demo > file`: the VM step's qemu reopens its stdout, which truncates
 * a regular file and loses everything printed before it. The
 * demo pipes that step; here a stand-in for it reopens stdout the same way
 * (open with O_TRUNC through /proc/self/fd/1), with the demo's stdout a
 * regular file, and every part must still be in the file. DEMO_VM=0 skips
 * the step with a line that says so. */
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "not_offered.h"

TestSuite(cli_demo, .timeout = 180);

static char root[512], build[128], dir[64];

/* EXECGATE_BIN is <root>/<build>/execgate. */
static void locate(void)
{
	const char *bin = getenv("EXECGATE_BIN");
	char a[512], b[512];

	cr_assert_not_null(bin, "EXECGATE_BIN must name the execgate binary");
	snprintf(a, sizeof(a), "%s", bin);
	snprintf(b, sizeof(b), "%s", dirname(a)); /* <root>/<build> */
	snprintf(build, sizeof(build), "%s", basename(strdup(b)));
	snprintf(root, sizeof(root), "%s", dirname(b));
	snprintf(dir, sizeof(dir), "/tmp/egdemo-%d", (int)getpid());
	cr_assert_eq(mkdir(dir, 0700), 0, "mkdir %s", dir);
}

/* Runs scripts/demo.sh with extra environment, stdout and stderr into the
 * regular file out; returns the exit status. */
static int demo(const char *out, const char *env1, const char *env2)
{
	char script[600], b[160];
	pid_t pid;
	int st, fd;

	snprintf(script, sizeof(script), "%s/scripts/demo.sh", root);
	snprintf(b, sizeof(b), "BUILD=%s", build);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0)
			_exit(126);
		dup2(fd, 1);
		dup2(fd, 2);
		putenv(b);
		if (env1)
			putenv((char *)env1);
		if (env2)
			putenv((char *)env2);
		execl(script, script, (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static char *slurp(const char *path)
{
	static char buf[1 << 20];
	FILE *f = fopen(path, "r");
	size_t n;

	cr_assert_not_null(f, "%s", path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (dir[0] && system(cmd))
		cr_log_warn("%s failed", cmd);
}

/* guarantees: none */
Test(cli_demo, output_to_a_file_survives_the_vm_step_and_demo_vm_0_skips_it, .fini = cleanup)
{
	char out[128], stand_in[128], env[200], *text;
	FILE *f;
	int rc;

	if (geteuid() != 0)
		kh_not_offered(KH_NEED_ROOT, "not running as root");
	locate();
	/* The stand-in: what qemu does to its stdout, then a line. */
	snprintf(stand_in, sizeof(stand_in), "%s/vm-step", dir);
	f = fopen(stand_in, "w");
	cr_assert_not_null(f);
	fprintf(f, "#!/bin/sh\n: >/proc/self/fd/1\necho 'stand-in VM step ran'\n");
	fclose(f);
	cr_assert_eq(chmod(stand_in, 0700), 0);

	snprintf(out, sizeof(out), "%s/demo.out", dir);
	snprintf(env, sizeof(env), "DEMO_VM_STEP=%s", stand_in);
	rc = demo(out, env, NULL);
	text = slurp(out);
	cr_assert_eq(rc, 0, "demo: exit %d:\n%s", rc, text);
	if (strstr(text, "tier lsm: loaded"))
		kh_not_offered(KH_NEED_NO_LSM,
			       "the LSM tier runs on this kernel: the demo has no VM step here");
	cr_assert(strstr(text, "######## part 1: capabilities in userspace ########") == text,
		  "the start of the output was lost:\n%.400s", text);
	cr_assert(strstr(text, "== load: the cgroup tier"), "%s", text);
	cr_assert(strstr(text, "stand-in VM step ran"), "%s", text);
	cr_assert(strstr(text, "all 13 steps behaved as the design says"), "%s", text);

	rc = demo(out, "DEMO_VM=0", env);
	text = slurp(out);
	cr_assert_eq(rc, 0, "demo DEMO_VM=0: exit %d:\n%s", rc, text);
	cr_assert(strstr(text, "DEMO_VM=0: its steps in a virtme-ng VM are skipped"), "%s", text);
	cr_assert_null(strstr(text, "stand-in VM step ran"), "%s", text);
	cr_assert(strstr(text, "all 12 steps behaved as the design says"), "%s", text);
}
