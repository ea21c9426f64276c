// SPDX-License-Identifier: Apache-2.0
/* `execgate keys add` against a loaded worker (docs/capability.md "Key files"): it never takes
 * a seed keygen wrote, whatever its bytes, nor the old untyped form, and
 * it stores the public key exactly as keygen wrote it. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <jansson.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "harness.h"

TestSuite(keys_cli, .init = kh_setup_shared, .fini = kh_teardown, .timeout = 120);

#define SEEDS 100

static void read_text(const char *path, char *out, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	cr_assert_geq(fd, 0, "%s", path);
	n = read(fd, out, size - 1);
	close(fd);
	cr_assert_geq(n, 0);
	out[n] = '\0';
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

/* guarantees: none */
Test(keys_cli, keys_add_stores_the_pub_and_refuses_every_seed)
{
	char out[1024], path[300], stored[300], a[200], b[200], dir[200], kid[32];
	struct stat st;
	unsigned refused = 0;
	int rc;

	kh_keys();
	snprintf(path, sizeof(path), "%s/%s.pub", kh.keys_dir, kh.kid);
	snprintf(stored, sizeof(stored), "%s/keys/%s.pub", kh.state_dir, kh.kid);
	read_text(path, a, sizeof(a));
	read_text(stored, b, sizeof(b));
	cr_assert_str_eq(b, a, "stored as keygen wrote it");
	cr_assert_eq(stat(stored, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0644);

	for (unsigned i = 0; i < SEEDS; i++) {
		snprintf(dir, sizeof(dir), "%s/g%u", kh.dir, i);
		rc = kh_issue(out, sizeof(out), "keygen", "--out", dir, NULL);
		cr_assert_eq(rc, 0, "keygen: %s", out);
		out[strcspn(out, "\n")] = '\0';
		snprintf(kid, sizeof(kid), "%.31s", out);
		snprintf(path, sizeof(path), "%s/%s.seed", dir, kid);
		rc = kh_cli(out, sizeof(out), "keys", "add", path, NULL);
		cr_assert_eq(rc, 1, "seed %u: keys add exit %d: %s", i, rc, out);
		cr_assert_not_null(strstr(out,
					  "key-file-holds-secret: holds a secret key: refusing "
					  "it; give the .pub file"),
				   "seed %u: %s", i, out);
		/* The same seed in the old untyped form. */
		read_text(path, a, sizeof(a));
		snprintf(path, sizeof(path), "%s/old.pub", dir);
		write_text(path, a + strlen("execgate-ed25519-secret-v1 "));
		rc = kh_cli(out, sizeof(out), "keys", "add", path, NULL);
		cr_assert_eq(rc, 1, "seed %u untyped: keys add exit %d: %s", i, rc, out);
		cr_assert_not_null(strstr(out, "key-file-untyped"), "seed %u: %s", i, out);
		snprintf(path, sizeof(path), "%s/keys/%s.pub", kh.state_dir, kid);
		cr_assert_neq(access(path, F_OK), 0, "seed %u: reached the key set", i);
		refused++;
	}
	cr_log_info("keys add refused %u of %u keygen seeds", refused, SEEDS);

	/* Only the one public key is in the set. */
	rc = kh_cli(out, sizeof(out), "keys", "list", NULL);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_eq(strncmp(out, kh.kid, strlen(kh.kid)), 0, "%s", out);
	cr_assert_eq(strchr(out, '\n') - out + 1, (long)strlen(out), "one key: %s", out);

	/* A missing file is named as missing. */
	snprintf(path, sizeof(path), "%s/nope.pub", kh.dir);
	rc = kh_cli(out, sizeof(out), "keys", "add", path, NULL);
	cr_assert_eq(rc, 1, "%s", out);
	cr_assert_not_null(strstr(out, "key-file-missing: no such file"), "%s", out);
}

/* The reason `execgate check` gives a fresh token signed by kh.kid. */
static void fresh_check(char *out, size_t size)
{
	char tok[1024];

	kh_cap(tok, sizeof(tok), "5f0c2c1e-7a4b-4c1d-9e3f-000000000007",
	       "a0000000-0000-4000-8000-00000000000a", 8, 1, 120, 0);
	kh_cli(out, size, "check", "--json", tok, NULL);
}

/* guarantees: none */
Test(keys_cli, malformed_neighbour_never_keeps_a_withdrawn_key)
{
	char out[4096], bad[300], pub[300], stored[300];
	int rc;

	kh_keys();
	snprintf(pub, sizeof(pub), "%s/%s.pub", kh.keys_dir, kh.kid);
	snprintf(stored, sizeof(stored), "%s/keys/%s.pub", kh.state_dir, kh.kid);
	snprintf(bad, sizeof(bad), "%s/keys/0000000000000000.pub", kh.state_dir);
	write_text(bad, "execgate-ed25519-public-v1 not-hex\n");

	/* Every command still opens the worker; the neighbour is named. */
	rc = kh_cli(out, sizeof(out), "keys", "list", NULL);
	cr_assert_eq(rc, 0, "keys list with a malformed neighbour: %s", out);
	cr_expect(strstr(out, kh.kid), "the good key is listed: %s", out);
	cr_expect(strstr(out, "warning: skipped key file ") &&
		      strstr(out, "0000000000000000.pub: key-not-hex"),
		  "the neighbour is named: %s", out);
	fresh_check(out, sizeof(out));
	cr_expect(!strstr(out, "unknown-key"), "the key is held: %s", out);

	/* remove: exit 0, gone from disk, list and verification */
	rc = kh_cli(out, sizeof(out), "keys", "remove", kh.kid, NULL);
	cr_assert_eq(rc, 0, "keys remove with a malformed neighbour: %s", out);
	cr_expect(strstr(out, "0000000000000000.pub: key-not-hex"), "the neighbour is named: %s",
		  out);
	cr_expect_neq(access(stored, F_OK), 0, "%s is still on disk", stored);
	rc = kh_cli(out, sizeof(out), "keys", "list", NULL);
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect(!strstr(out, kh.kid), "the withdrawn key is still listed: %s", out);
	fresh_check(out, sizeof(out));
	cr_expect(strstr(out, "\"reason\":\"unknown-key\""),
		  "a fresh token signed by the withdrawn key: %s", out);
	rc = kh_cli(out, sizeof(out), "keys", "remove", kh.kid, NULL);
	cr_expect_eq(rc, 7, "remove again: exit %d: %s", rc, out);

	/* add: exit 0, listed, verified; the neighbour named */
	rc = kh_cli(out, sizeof(out), "keys", "add", pub, NULL);
	cr_assert_eq(rc, 0, "keys add with a malformed neighbour: %s", out);
	cr_expect(strstr(out, "0000000000000000.pub: key-not-hex"), "the neighbour is named: %s",
		  out);
	cr_expect_eq(access(stored, F_OK), 0, "%s is not on disk", stored);
	fresh_check(out, sizeof(out));
	cr_expect(!strstr(out, "unknown-key"), "after the add: %s", out);
}

/* The key-set digest `keys list --json` and `status` show is `keys list |
 * sort | b2sum -l 256` (docs/api.md, "Key-set digest"). keys add/remove
 * with no daemon at the default socket do not wait (exit 0); with
 * --socket naming a path nobody listens on they cannot know whether a
 * daemon took the change: exit 9, the change made on disk. */
/* guarantees: none */
Test(keys_cli, digest_is_b2sum_of_the_list_and_an_unanswered_socket_is_exit_9)
{
	char out[8192], cmd[1024], b2[128], pub[300], sock[200], *nl;
	json_t *doc;
	FILE *p;
	int rc;

	kh_keys();
	rc = kh_cli(out, sizeof(out), "keys", "list", "--json", NULL);
	cr_assert_eq(rc, 0, "%s", out);
	doc = json_loads(out, 0, NULL);
	cr_assert_not_null(doc, "%s", out);
	snprintf(cmd, sizeof(cmd),
		 "%s keys list --pin-dir %s --state-dir %s | sort | b2sum -l 256 | cut -d' ' -f1",
		 getenv("EXECGATE_BIN"), kh.pin_dir, kh.state_dir);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	cr_assert_not_null(fgets(b2, sizeof(b2), p));
	pclose(p);
	nl = strchr(b2, '\n');
	if (nl)
		*nl = '\0';
	cr_assert_eq(strlen(b2), 64, "b2sum: %s", b2);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "digest")), b2);
	json_decref(doc);
	rc = kh_cli(out, sizeof(out), "status", NULL);
	cr_assert(strstr(out, "key set: 1 key, digest ") && strstr(out, b2), "status: %s", out);

	/* no daemon at the default socket: not waited for */
	cr_assert_neq(access("/run/execgate/api.sock", F_OK), 0,
		      "a daemon's socket at the default path: this test needs none");
	rc = kh_cli(out, sizeof(out), "keys", "remove", kh.kid, NULL);
	cr_assert_eq(rc, 0, "remove, no daemon: %s", out);
	snprintf(pub, sizeof(pub), "%s/%s.pub", kh.keys_dir, kh.kid);
	rc = kh_cli(out, sizeof(out), "keys", "add", pub, NULL);
	cr_assert_eq(rc, 0, "add, no daemon: %s", out);

	/* --socket given, nobody there: 9, and the change is on disk */
	snprintf(sock, sizeof(sock), "%s", kh_path("nobody.sock"));
	rc = kh_cli(out, sizeof(out), "keys", "remove", kh.kid, "--socket", sock, NULL);
	cr_assert_eq(rc, 9, "remove, --socket nobody listens on: exit %d: %s", rc, out);
	cr_assert(strstr(out, "nobody listens"), "%s", out);
	snprintf(pub, sizeof(pub), "%s/keys/%s.pub", kh.state_dir, kh.kid);
	cr_assert_neq(access(pub, F_OK), 0, "the change is on disk");
}
