// SPDX-License-Identifier: Apache-2.0
/* The CLI as a new operator meets it: every subcommand has --help with a
 * description for every flag (stdout, exit 0); errors carry one prefix,
 * `execgate: <command>: `; flags are taken by their full name only; and no
 * single-valued flag may be given twice. The commands and flags are read
 * from the binary's own help, so a flag added later is covered too. None of
 * these reaches the kernel: each is refused before anything is opened. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "harness.h"

TestSuite(cli_flags, .timeout = 60);

/* execgate ARGV (NULL-terminated), stdout and stderr apart; no pin dir or
 * state dir is given, and none is touched. */
#define RUN(r, ...) kh_cli_split((r), 0, 0, (const char *const[]){__VA_ARGS__, NULL})

/* The subcommands `execgate --help` lists. */
static size_t commands(char names[][32], size_t max)
{
	static struct kh_split r;
	size_t n = 0;

	RUN(&r, "--help");
	cr_assert_eq(r.rc, 0, "execgate --help: exit %d: %s", r.rc, r.err);
	for (char *line = strtok(r.out, "\n"); line && n < max; line = strtok(NULL, "\n"))
		if (line[0] == ' ' && line[1] == ' ' && line[2] != ' ' && line[2] != '-')
			sscanf(line + 2, "%31[a-z-]", names[n++]);
	return n;
}

struct flag {
	char name[32];
	char arg[32]; /* "" for a flag without a value */
	bool repeat;
	char help[160];
};

/* The flags `execgate CMD --help` documents, help text included. */
static size_t flags(const char *cmd, struct flag *f, size_t max, struct kh_split *r)
{
	size_t n = 0;
	char *save;

	RUN(r, cmd, "--help");
	cr_assert_eq(r->rc, 0, "execgate %s --help: exit %d: %s", cmd, r->rc, r->err);
	cr_assert_str_empty(r->err, "%s --help wrote to stderr: %s", cmd, r->err);
	for (char *line = strtok_r(r->out, "\n", &save); line && n < max;
	     line = strtok_r(NULL, "\n", &save)) {
		char left[64] = "", *sp;

		/* A row's help text folds onto lines indented to its column. */
		if (n && strspn(line, " ") >= 20) {
			f[n - 1].repeat |= strstr(line, "(repeatable)") != NULL;
			continue;
		}
		/* "  -h, --help ...": the short alias goes, the row stays. */
		if (!strncmp(line, "  -", 3) && line[3] != '-' && !strncmp(line + 4, ", --", 4)) {
			line += 4;
			line[0] = line[1] = ' ';
		}
		if (strncmp(line, "  --", 4))
			continue;
		memset(&f[n], 0, sizeof(f[n]));
		/* "  --name ARG   help" (ARG optional; the columns are spaces). */
		snprintf(left, sizeof(left), "%.*s", (int)strcspn(line + 2, " "), line + 2);
		snprintf(f[n].name, sizeof(f[n].name), "%.31s", left + 2);
		sp = line + 2 + strlen(left);
		if (sp[0] == ' ' && sp[1] != ' ')
			sscanf(sp + 1, "%31s", f[n].arg);
		sp += strspn(sp, " ");
		if (f[n].arg[0])
			sp += strlen(f[n].arg), sp += strspn(sp, " ");
		snprintf(f[n].help, sizeof(f[n].help), "%.159s", sp);
		f[n].repeat = strstr(line, "(repeatable)") != NULL;
		n++;
	}
	return n;
}

/* A value each placeholder accepts, so that the first occurrence passes
 * and the second is what is refused. */
static const char *value_for(const char *arg)
{
	static const struct {
		const char *arg, *value;
	} v[] = {
	    {"PID", "1"},
	    {"UUID", "5f0c2c1e-7a4b-4c1d-9e3f-0000000000c1"},
	    {"N", "3"},
	    {"UNIX", "1700000000"},
	    {"DIR", "/nonexistent-execgate-dir"},
	    {"DIR|FILE", "/nonexistent-execgate-dir"},
	    {"FILE", "/nonexistent-execgate-dir/node.pub"},
	    {"PATH", "/nonexistent-execgate-dir/s"},
	    {"CID:PORT", "3:52"},
	    {"LIST", "file.read"},
	    {"SCOPE", "file.read"},
	    {"TIER", "cgroup"},
	    {"N/tcp|udp", "8080/tcp"},
	    {"NAME", "firecracker-host"},
	    {"enforce|audit", "audit"},
	    {"DURATION", "10m"},
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (!strcmp(v[i].arg, arg))
			return v[i].value;
	cr_assert_fail("no test value for placeholder %s: add one", arg);
	return NULL;
}

/* guarantees: none */
Test(cli_flags, every_subcommand_has_help_with_every_flag_described)
{
	static char names[32][32];
	static struct flag f[40];
	static struct kh_split r;
	size_t n = commands(names, 32);

	cr_assert_geq(n, 14, "execgate --help lists %zu commands", n);
	for (size_t i = 0; i < n; i++) {
		size_t nf = flags(names[i], f, 40, &r);
		bool help = false;

		RUN(&r, names[i], "--help");
		cr_assert(strstr(r.out, "usage: execgate ") == r.out, "%s --help: %s", names[i],
			  r.out);
		for (size_t k = 0; k < nf; k++) {
			cr_assert_gt(strlen(f[k].help), 8, "%s --%s: no description", names[i],
				     f[k].name);
			help |= !strcmp(f[k].name, "help");
		}
		cr_assert(help, "%s --help does not list --help", names[i]);
		/* -h is the same. */
		RUN(&r, names[i], "-h");
		cr_assert_eq(r.rc, 0, "%s -h: exit %d", names[i], r.rc);
	}
}

/* guarantees: none */
Test(cli_flags, errors_carry_the_command_and_abbreviations_are_refused)
{
	static char names[32][32], want[256];
	static struct flag f[40];
	static struct kh_split r, h;
	size_t n = commands(names, 32);

	for (size_t i = 0; i < n; i++) {
		size_t nf = flags(names[i], f, 40, &h);

		RUN(&r, names[i], "--no-such-flag");
		snprintf(want, sizeof(want),
			 "execgate: %s: --no-such-flag: unknown option (execgate %s --help)\n",
			 names[i], names[i]);
		cr_assert_eq(r.rc, 2, "%s --no-such-flag: exit %d", names[i], r.rc);
		cr_assert_str_eq(r.err, want);
		cr_assert_str_empty(r.out);
		/* Every flag cut by one letter is a flag that does not exist
		 * (getopt_long would take it as the flag). */
		for (size_t k = 0; k < nf; k++) {
			char cut[40];

			if (strlen(f[k].name) < 3)
				continue;
			snprintf(cut, sizeof(cut), "--%.*s", (int)strlen(f[k].name) - 1, f[k].name);
			RUN(&r, names[i], cut, "1");
			snprintf(want, sizeof(want),
				 "execgate: %s: %s: unknown option (execgate %s --help)\n",
				 names[i], cut, names[i]);
			cr_assert_eq(r.rc, 2, "%s %s: exit %d: %s", names[i], cut, r.rc, r.err);
			cr_assert_str_eq(r.err, want);
		}
	}
	/* The case from the issue. */
	RUN(&r, "install", "--bridge-sock", "/tmp/x");
	cr_assert_eq(r.rc, 2);
	cr_assert_str_eq(
	    r.err, "execgate: install: --bridge-sock: unknown option (execgate install --help)\n");
	/* The ServicePort profile has one name, --service-port: the old
	 * --profile-port alias is gone from install and check. */
	RUN(&r, "install", "--profile-port", "8080/tcp");
	cr_assert_eq(r.rc, 2);
	cr_assert_str_eq(
	    r.err, "execgate: install: --profile-port: unknown option (execgate install --help)\n");
	RUN(&r, "check", "--profile-port", "8080/tcp");
	cr_assert_eq(r.rc, 2);
	cr_assert_str_eq(
	    r.err, "execgate: check: --profile-port: unknown option (execgate check --help)\n");
}

/* guarantees: none */
Test(cli_flags, every_single_valued_flag_given_twice_is_refused)
{
	static const char *const scratch[][3] = {
	    {"pin-dir", "--pin-dir", "/nonexistent/execgate-cli-flags/pins"},
	    {"state-dir", "--state-dir", "/nonexistent/execgate-cli-flags/state"},
	    {"cgroup", "--cgroup", "/nonexistent/execgate-cli-flags/cgroup"},
	};
	static char names[32][32], want[256];
	static struct flag f[40];
	static struct kh_split r, h;
	const char *args[16];
	size_t n = commands(names, 32), tried = 0, nargs;

	for (size_t i = 0; i < n; i++) {
		size_t nf = flags(names[i], f, 40, &h);

		for (size_t k = 0; k < nf; k++) {
			char opt[40];
			const char *v;

			if (f[k].repeat || !strcmp(f[k].name, "help") ||
			    !strcmp(f[k].name, "version"))
				continue;
			snprintf(opt, sizeof(opt), "--%s", f[k].name);
			/* Should a duplicate ever be accepted, the command
			 * must still act on nothing real: `load --verbose
			 * --verbose` once attached to the host's cgroup root.
			 * Every place the command could touch comes first,
			 * as a path that does not exist. */
			nargs = 0;
			args[nargs++] = names[i];
			for (size_t j = 0; j < nf; j++)
				for (size_t s = 0; s < sizeof(scratch) / sizeof(scratch[0]); s++)
					if (!strcmp(f[j].name, scratch[s][0])) {
						args[nargs++] = scratch[s][1];
						args[nargs++] = scratch[s][2];
					}
			args[nargs++] = opt;
			if (f[k].arg[0]) {
				v = value_for(f[k].arg);
				args[nargs++] = v;
				args[nargs++] = opt;
				args[nargs++] = v;
			} else {
				args[nargs++] = opt;
			}
			args[nargs] = NULL;
			kh_cli_split(&r, 0, 0, args);
			snprintf(want, sizeof(want),
				 "execgate: %s: --%s: given more than once (execgate %s --help)\n",
				 names[i], f[k].name, names[i]);
			cr_assert_eq(r.rc, 2, "%s %s twice: exit %d: %s", names[i], opt, r.rc,
				     r.err);
			cr_assert_str_eq(r.err, want);
			tried++;
		}
	}
	cr_assert_geq(tried, 40, "only %zu flags tried", tried);
	/* The cases from the issue, with different values. */
	RUN(&r, "install", "--bridge-pid", "1", "--bridge-pid", "2");
	cr_assert_str_eq(
	    r.err,
	    "execgate: install: --bridge-pid: given more than once (execgate install --help)\n");
	RUN(&r, "admit", "--pid", "1", "--pid", "2", "TOKEN");
	cr_assert_str_eq(r.err,
			 "execgate: admit: --pid: given more than once (execgate admit --help)\n");
}

/* guarantees: none */
Test(cli_flags, socket_paths_with_control_characters_are_refused)
{
	static const char *const bad[] = {"/tmp/a\nb", "/tmp/a\tb", "/tmp/a\x1b[2Jb", "/tmp/\x7f",
					  ""};
	static const char *const opt[] = {"--bridge-socket", "--vmm-socket"};
	static struct kh_split r;

	for (size_t o = 0; o < 2; o++)
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			RUN(&r, "install", opt[o], bad[i]);
			cr_assert_eq(r.rc, 2, "%s %s: exit %d", opt[o], bad[i], r.rc);
			cr_assert(strstr(r.err, opt[o]) == r.err + strlen("execgate: install: "),
				  "%s", r.err);
			cr_assert(strstr(r.err, bad[i][0] ? "control character" : "empty path"),
				  "%s", r.err);
		}
}

/* guarantees: none */
Test(cli_flags, global_options_go_before_or_after_the_command)
{
	/* Dirs that do not exist: each command fails the same way on them,
	 * before anything is opened. */
	static const char *const pin = "/nonexistent/execgate-cli-flags/pins";
	static const char *const state = "/nonexistent/execgate-cli-flags/state";
	static struct kh_split before, after;

	RUN(&before, "--pin-dir", pin, "status");
	RUN(&after, "status", "--pin-dir", pin);
	cr_assert_eq(before.rc, 7, "--pin-dir X status: exit %d: %s", before.rc, before.err);
	cr_assert_eq(before.rc, after.rc);
	cr_assert_str_eq(before.out, after.out);
	cr_assert(strstr(before.out, pin), "status does not name the pin dir: %s", before.out);

	RUN(&before, "--pin-dir", pin, "--state-dir", state, "-v", "keys", "list");
	RUN(&after, "keys", "list", "--pin-dir", pin, "--state-dir", state);
	cr_assert_neq(before.rc, 2, "before keys: exit 2: %s", before.err);
	cr_assert_eq(before.rc, after.rc, "%s / %s", before.err, after.err);
	cr_assert(strstr(before.err, "execgate: keys: ") && strstr(before.err, pin), "%s",
		  before.err);

	RUN(&before, "--pin-dir=/nonexistent/x", "list");
	RUN(&after, "list", "--pin-dir=/nonexistent/x");
	cr_assert_eq(before.rc, after.rc);
	cr_assert_str_eq(before.err, after.err);

	/* Once on each side is twice. */
	RUN(&before, "--pin-dir", pin, "status", "--pin-dir", pin);
	cr_assert_eq(before.rc, 2);
	cr_assert_str_eq(before.err, "execgate: status: --pin-dir: given more than once "
				     "(execgate status --help)\n");
	/* A command without dirs refuses them wherever they are. */
	RUN(&before, "--pin-dir", pin, "verdict", "verify");
	cr_assert_eq(before.rc, 2);
	cr_assert(strstr(before.err, "execgate: verdict: --pin-dir: unknown option"), "%s",
		  before.err);
	/* No command, or no value. */
	RUN(&before, "--pin-dir", pin);
	cr_assert_eq(before.rc, 2, "%s", before.err);
	cr_assert(strstr(before.err, "no command"), "%s", before.err);
	RUN(&before, "--state-dir");
	cr_assert_eq(before.rc, 2, "%s", before.err);
	cr_assert(strstr(before.err, "missing DIR"), "%s", before.err);
}

/* guarantees: none */
Test(cli_flags, help_command_is_the_commands_help)
{
	static char names[32][32];
	static struct kh_split r, h;
	size_t n = commands(names, 32);

	cr_assert_geq(n, 14, "execgate --help lists %zu commands", n);
	for (size_t i = 0; i < n; i++) {
		RUN(&r, "help", names[i]);
		RUN(&h, names[i], "--help");
		cr_assert_eq(r.rc, 0, "help %s: exit %d: %s", names[i], r.rc, r.err);
		cr_assert_str_eq(r.out, h.out, "help %s differs from %s --help", names[i],
				 names[i]);
	}
	RUN(&r, "help");
	RUN(&h, "--help");
	cr_assert_eq(r.rc, 0);
	cr_assert_str_eq(r.out, h.out);
	RUN(&r, "help", "no-such-command");
	cr_assert_eq(r.rc, 2);
	cr_assert_str_eq(r.err, "execgate: no-such-command: unknown command (execgate --help)\n");
	RUN(&r, "help", "status", "list");
	cr_assert_eq(r.rc, 2, "%s", r.err);
}

/* guarantees: none */
Test(cli_flags, load_pin_dir_off_bpffs_is_a_usage_error)
{
	static char dir[] = "/tmp/execgate-cli-flags-XXXXXX", pins[64], want[256];
	static struct kh_split r;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(pins, sizeof(pins), "%s/pins", dir);
	/* Refused before any probe, so nothing is loaded or attached. */
	RUN(&r, "load", "--pin-dir", pins, "--state-dir", dir);
	snprintf(want, sizeof(want),
		 "execgate: load: pin dir %s: %s is not on bpffs (pick a directory under "
		 "/sys/fs/bpf, or mount bpffs first)\n",
		 pins, dir);
	cr_expect_eq(r.rc, 2, "load --pin-dir off bpffs: exit %d: %s", r.rc, r.err);
	cr_expect_str_eq(r.err, want);
	cr_expect_neq(access(pins, F_OK), 0, "load created %s", pins);
	rmdir(pins);
	unlink(strcat(strcpy(want, dir), "/probe"));
	cr_assert_eq(rmdir(dir), 0, "%s left with files in it", dir);
}
