// SPDX-License-Identifier: Apache-2.0
/* -v/--verbose: the library's debug messages, libbpf's included, reach
 * stderr only when asked for. `execgate probe` loads the probe programs
 * through libbpf, which always has debug lines to say. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>

TestSuite(verbose, .timeout = 60);

/* execgate probe [flag] with stderr into a file; returns the exit status
 * and stderr (malloc'd). The pin dir does not exist: probe only reports
 * on it. */
static int probe(const char *flag, char **err)
{
	const char *bin = getenv("EXECGATE_BIN");
	char path[] = "/tmp/execgate-verbose-XXXXXX";
	int fd = mkstemp(path), st;
	FILE *f;
	pid_t pid;
	long n;

	cr_assert_not_null(bin, "EXECGATE_BIN must name the execgate binary");
	cr_assert_geq(fd, 0, "mkstemp");
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(fd, 2);
		if (flag)
			execl(bin, "execgate", "probe", flag, "--pin-dir",
			      "/nonexistent/execgate-verbose/pins", (char *)NULL);
		else
			execl(bin, "execgate", "probe", "--pin-dir",
			      "/nonexistent/execgate-verbose/pins", (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	f = fdopen(fd, "r");
	cr_assert_not_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	*err = calloc(1, (size_t)n + 1);
	cr_assert_not_null(*err);
	cr_assert_eq(fread(*err, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	unlink(path);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* guarantees: none */
Test(verbose, libbpf_debug_lines_only_with_verbose)
{
	const char *flags[] = {"-v", "--verbose"};
	char *err;
	int rc;

	rc = probe(NULL, &err);
	cr_assert_eq(rc, 0, "probe: exit %d: %.2000s", rc, err);
	cr_expect_null(strstr(err, "libbpf: "), "libbpf output without -v:\n%.2000s", err);
	free(err);
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		rc = probe(flags[i], &err);
		cr_assert_eq(rc, 0, "probe %s: exit %d: %.2000s", flags[i], rc, err);
		cr_expect(strstr(err, "libbpf: loading object"),
			  "no libbpf debug line with %s:\n%.2000s", flags[i], err);
		free(err);
	}
}
