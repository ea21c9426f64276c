// SPDX-License-Identifier: Apache-2.0
/* The LSM tier through the CLI: `execgate load --require lsm|full` fails
 * clearly (exit 5, the probe's reason, nothing loaded) where the kernel
 * cannot give the tier and loads it where it can; `execgate status --json`
 * lists every LSM guarantee as held or not held, with the reason. These run
 * on every kernel: on the CI host they check the refusal path. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "loader/tiers/cgroup.h"
#include "loader/tiers/lsm_probe.h"
#include "loader/tiers/tier.h"
#include "test_lsm_common.h"

static char pin_dir[128], state_dir[128], cgroup[256];

static const char *const lsm_guarantees[] = {
    "vsock-vmm-bridge-only",  "unix-path-machine-wide", "unix-inode-endpoints",
    "unix-listener-identity", "stream-lease",		"lsm-survives-loader-exit",
};

/* execgate ARGS... --pin-dir --state-dir; stdout+stderr into out. */
static int cli(char *out, size_t size, ...)
{
	const char *bin = getenv("EXECGATE_BIN");
	const char *argv[32];
	int pfd[2], status, n = 0;
	size_t len = 0;
	va_list ap;
	pid_t pid;

	cr_assert_not_null(bin, "EXECGATE_BIN must name the execgate binary");
	argv[n++] = "execgate";
	va_start(ap, size);
	for (const char *a; (a = va_arg(ap, const char *)) && n < 26;)
		argv[n++] = a;
	va_end(ap);
	argv[n++] = "--pin-dir";
	argv[n++] = pin_dir;
	argv[n++] = "--state-dir";
	argv[n++] = state_dir;
	argv[n] = NULL;
	cr_assert_eq(pipe(pfd), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	close(pfd[1]);
	for (ssize_t r; len + 1 < size && (r = read(pfd[0], out + len, size - 1 - len)) > 0;)
		len += (size_t)r;
	out[len] = '\0';
	close(pfd[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void init(void)
{
	char root[200];

	snprintf(pin_dir, sizeof(pin_dir), "/sys/fs/bpf/egt-lsmcli-%d", (int)getpid());
	snprintf(state_dir, sizeof(state_dir), "/tmp/egt-lsmcli-%d", (int)getpid());
	cr_assert_eq(eg_cgroup2_root(root, sizeof(root)), 0, "no cgroup v2 mount");
	snprintf(cgroup, sizeof(cgroup), "%s/egt-lsmcli-%d", root, (int)getpid());
	cr_assert(mkdir(cgroup, 0755) == 0 || errno == EEXIST, "%s: %s", cgroup, strerror(errno));
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void fini(void)
{
	char out[4096];

	if (access(pin_dir, F_OK) == 0)
		cli(out, sizeof(out), "unload", NULL);
	nftw(state_dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	rmdir(cgroup);
}

TestSuite(lsm_cli, .init = init, .fini = fini);

static bool cgroup_offered(void)
{
	struct eg_tier_ctx ctx = {.pin_dir = pin_dir, .cgroup_path = cgroup};
	char why[256];

	return eg_tier_cgroup.probe(&ctx, why, sizeof(why)) == 0;
}

static void link_pin(char *out, size_t size, const char *name)
{
	snprintf(out, size, "%s/links/%s", pin_dir, name);
}

/* guarantees: none */
Test(lsm_cli, require_lsm_fails_clearly_or_loads,
     .description = "load --require lsm: exit 5 with the reason and nothing loaded, or loaded")
{
	struct eg_lsm_probe p;
	char out[8192], want[512], pin[256];
	int rc;

	eg_lsm_probe(&p);
	rc = cli(out, sizeof(out), "load", "--cgroup", cgroup, "--require", "lsm", NULL);
	link_pin(pin, sizeof(pin), "lsm_socket_connect");
	if (!p.active) {
		cr_assert_not(kh_promised(KH_NEED_LSM), "this VM kernel must offer BPF LSM: %s",
			      p.reason);
		cr_assert_eq(rc, 5, "exit %d: %s", rc, out);
		snprintf(
		    want, sizeof(want),
		    "execgate: load: --require lsm: tier lsm is not offered by this kernel: %s",
		    p.reason);
		cr_assert_not_null(strstr(out, want), "want \"%s\" in: %s", want, out);
		cr_assert_neq(access(pin, F_OK), 0, "a refused load left %s", pin);
		cr_assert_neq(access(pin_dir, F_OK), 0, "a refused load created %s", pin_dir);
		return;
	}
	cr_assert_eq(rc, 0, "exit %d: %s", rc, out);
	cr_assert_eq(access(pin, F_OK), 0, "%s missing after load --require lsm", pin);
	cr_assert_not_null(strstr(out, "tier lsm: loaded"), "%s", out);
}

/* guarantees: none */
Test(lsm_cli, require_full_needs_both_tiers,
     .description = "load --require full succeeds only where cgroup and lsm tiers both exist")
{
	struct eg_lsm_probe p;
	char out[8192];
	bool cg = cgroup_offered();
	int rc;

	eg_lsm_probe(&p);
	rc = cli(out, sizeof(out), "load", "--cgroup", cgroup, "--require", "full", NULL);
	if (p.active && cg) {
		cr_assert_eq(rc, 0, "exit %d: %s", rc, out);
		return;
	}
	cr_assert_eq(rc, 5, "exit %d: %s", rc, out);
	cr_assert_not_null(strstr(out, p.active ? "tier cgroup is not offered by this kernel"
						: "tier lsm is not offered by this kernel"),
			   "%s", out);
}

/* guarantees: none */
Test(lsm_cli, status_lists_lsm_guarantees,
     .description = "status --json: each LSM guarantee held or not held, with the reason")
{
	struct eg_lsm_probe p;
	static char out[65536];
	char want[512];
	bool cg = cgroup_offered();
	int rc;

	eg_lsm_probe(&p);
	if (!p.active && !cg)
		kh_not_offered(KH_NEED_ANY, p.reason);
	rc = cli(out, sizeof(out), "load", "--cgroup", cgroup, NULL);
	cr_assert_eq(rc, 0, "load: exit %d: %s", rc, out);
	rc = cli(out, sizeof(out), "status", "--json", NULL);
	cr_assert_eq(rc, 0, "status: exit %d: %s", rc, out);

	for (size_t i = 0; i < sizeof(lsm_guarantees) / sizeof(lsm_guarantees[0]); i++) {
		bool held = p.active;

		/* path endpoints are the cgroup tier's where connect_unix exists */
		if (!strcmp(lsm_guarantees[i], "unix-path-machine-wide"))
			held = p.active && !cg;
		snprintf(want, sizeof(want), "{\"name\":\"%s\",\"held\":%s,", lsm_guarantees[i],
			 held ? "true" : "false");
		cr_assert_not_null(strstr(out, want), "want %s in %s", want, out);
		if (!p.active) {
			snprintf(want, sizeof(want), "\"reason\":\"%s\"", p.reason);
			cr_assert_not_null(strstr(strstr(out, lsm_guarantees[i]), want),
					   "%s: want reason %s", lsm_guarantees[i], want);
		}
	}
	snprintf(want, sizeof(want), "{\"name\":\"lsm\",\"offered\":%s,\"loaded\":%s,",
		 p.active ? "true" : "false", p.active ? "true" : "false");
	cr_assert_not_null(strstr(out, want), "want %s in %s", want, out);
}
