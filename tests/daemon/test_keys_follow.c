// SPDX-License-Identifier: Apache-2.0
/* The daemon's key set follows <state_dir>/keys, not one inode of it
 * (user/daemon/main.c, key_watch): after the directory is deleted and
 * recreated, rename-swapped, or updated as a Kubernetes Secret volume
 * updates (a new "..data" symlink renamed over the old one), a key taken
 * out of the new directory is refused by POST /v1/check within FOLLOW_MS,
 * shorter than the periodic check (KEY_CHECK_MS, 2 s), and GET /v1/keys
 * agrees; what no watch can see (a mount over the directory) the periodic
 * check finds. `execgate keys add/remove` exits 9 when a serving daemon
 * has not taken the change within a second; the key set's digest is the
 * same in the CLI's status, the API's and /metrics. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "dd.h"

TestSuite(daemon_keys_follow, .init = dd_setup, .fini = dd_teardown, .timeout = 60);

/* A change a working watch sees is reloaded after a 50 ms settle. */
#define FOLLOW_MS 1000

static char keys[200], pub_text[512];

/* Checks a fresh token every poll_ms until it is unknown-key or ms have
 * passed; the last reason into reason. */
static void await_unknown(int ms, int poll_ms, char *reason, size_t size)
{
	double end = dd_now_ms() + ms;

	do {
		dd_fresh_check(reason, size);
		if (!strcmp(reason, "unknown-key"))
			return;
		usleep((useconds_t)poll_ms * 1000);
	} while (dd_now_ms() < end);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

static void sh(const char *fmt, const char *arg)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), fmt, arg, arg, arg);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* The test key, held (PUT), its file's text kept, and the daemon's own
 * reload of that write over: what the test changes next is all the
 * directory then sees. */
static void held_key(void)
{
	char path[400], reason[128];
	FILE *f;
	size_t n;

	dd_keys();
	snprintf(keys, sizeof(keys), "%s/keys", kh.state_dir);
	snprintf(path, sizeof(path), "%s/%s.pub", keys, kh.kid);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	n = fread(pub_text, 1, sizeof(pub_text) - 1, f);
	pub_text[n] = '\0';
	fclose(f);
	dd_settled_key_reloads();
	dd_fresh_check(reason, sizeof(reason));
	cr_assert_str_neq(reason, "unknown-key", "the key is held");
}

/* Waits for the daemon's key reload count to pass `than`: the positive
 * sign that it saw the swap. */
static void await_reloads(long long than, const char *what)
{
	double end = dd_now_ms() + 3000;

	while (dd_metric("execgate_key_reloads_total{result=\"ok\"} ") <= than && dd_now_ms() < end)
		usleep(10000);
	cr_assert_gt(dd_metric("execgate_key_reloads_total{result=\"ok\"} "), than,
		     "no key reload after %s", what);
}

/* The new directory holds the key: trusted. */
static void held_again(void)
{
	char reason[128];

	dd_fresh_check(reason, sizeof(reason));
	cr_assert_str_neq(reason, "unknown-key", "the key in the new directory is held");
}

/* The key's file goes from the (new) directory: within FOLLOW_MS a fresh
 * token signed by it is unknown-key, GET /v1/keys no longer lists it, and
 * no periodic check had to find it. */
static void removal_followed(const char *file)
{
	char reason[128] = "";
	struct dd_resp r;
	double t0;

	cr_assert_eq(unlink(file), 0, "%s: %s", file, strerror(errno));
	t0 = dd_now_ms();
	await_unknown(FOLLOW_MS, 10, reason, sizeof(reason));
	cr_assert_str_eq(reason, "unknown-key",
			 "a key removed from the new directory is still trusted after %d ms",
			 FOLLOW_MS);
	cr_log_info("removal refused after %.0f ms", dd_now_ms() - t0);
	r = dd_req("GET", "/v1/keys", NULL);
	cr_expect_eq(r.status, 200);
	cr_expect(!dd_key_listed(&r, kh.kid), "GET /v1/keys still lists the key: %s", r.body);
	dd_resp_free(&r);
	cr_expect_eq(dd_metric("execgate_key_set_drift_total "), 0,
		     "the periodic check found it, not the watch");
}

Test(daemon_keys_follow, delete_and_recreate)
{
	char file[600];
	long long reloads;

	held_key();
	reloads = dd_metric("execgate_key_reloads_total{result=\"ok\"} ");
	sh("rm -rf '%s'", keys);
	cr_assert_eq(mkdir(keys, 0700), 0);
	snprintf(file, sizeof(file), "%s/%s.pub", keys, kh.kid);
	write_file(file, pub_text);
	await_reloads(reloads, "rm -rf and mkdir");
	dd_settled_key_reloads();
	held_again();
	removal_followed(file);
	cr_expect(dd_log_has("key directory replaced"), "the log says the directory was replaced");
}

Test(daemon_keys_follow, rename_swap)
{
	char fresh[400], file[600];
	long long reloads;

	held_key();
	/* as a configuration tool does: build beside, swap in atomically */
	snprintf(fresh, sizeof(fresh), "%s/keys.new", kh.state_dir);
	cr_assert_eq(mkdir(fresh, 0700), 0);
	snprintf(file, sizeof(file), "%s/%s.pub", fresh, kh.kid);
	write_file(file, pub_text);
	reloads = dd_metric("execgate_key_reloads_total{result=\"ok\"} ");
	cr_assert_eq(renameat2(AT_FDCWD, fresh, AT_FDCWD, keys, RENAME_EXCHANGE), 0, "%s",
		     strerror(errno));
	sh("rm -rf '%s'", fresh); /* the old directory, now under the other name */
	await_reloads(reloads, "the rename swap");
	dd_settled_key_reloads();
	held_again();
	snprintf(file, sizeof(file), "%s/%s.pub", keys, kh.kid);
	removal_followed(file);
}

/* As a Secret volume's atomic writer lays it out: key files are symlinks
 * through "..data" to a timestamped directory; an update writes a new
 * timestamped directory and renames a new "..data" symlink over the old
 * one. Here the update drops the key: the top-level symlink stays
 * (dangling) until the writer's clean-up, so the "..data" rename is what
 * must be followed. */
Test(daemon_keys_follow, secret_volume_data_swap)
{
	char path[600], target[100], top[600];
	long long reloads;

	held_key();
	snprintf(path, sizeof(path), "%s/..2026_12_06_01", keys);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/..2026_12_06_01/%s.pub", keys, kh.kid);
	write_file(path, pub_text);
	snprintf(path, sizeof(path), "%s/..data", keys);
	cr_assert_eq(symlink("..2026_12_06_01", path), 0);
	snprintf(top, sizeof(top), "%s/%s.pub", keys, kh.kid);
	snprintf(target, sizeof(target), "..data/%s.pub", kh.kid);
	snprintf(path, sizeof(path), "%s/..%s.tmp", keys, kh.kid);
	cr_assert_eq(symlink(target, path), 0);
	cr_assert_eq(rename(path, top), 0, "%s", strerror(errno));
	dd_settled_key_reloads();
	{
		char reason[128];

		dd_fresh_check(reason, sizeof(reason));
		cr_assert_str_neq(reason, "unknown-key", "the key is held through the symlinks");
	}

	/* the update: a new timestamped directory without the key */
	snprintf(path, sizeof(path), "%s/..2026_12_06_02", keys);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/..data_tmp", keys);
	cr_assert_eq(symlink("..2026_12_06_02", path), 0);
	reloads = dd_metric("execgate_key_reloads_total{result=\"ok\"} ");
	{
		char data[400], reason[128] = "";
		struct dd_resp r;

		snprintf(data, sizeof(data), "%s/..data", keys);
		cr_assert_eq(rename(path, data), 0, "%s", strerror(errno));
		await_unknown(FOLLOW_MS, 10, reason, sizeof(reason));
		cr_assert_str_eq(reason, "unknown-key",
				 "the ..data swap dropped the key, still trusted after %d ms",
				 FOLLOW_MS);
		r = dd_req("GET", "/v1/keys", NULL);
		cr_expect(!dd_key_listed(&r, kh.kid), "GET /v1/keys still lists the key: %s",
			  r.body);
		dd_resp_free(&r);
	}
	cr_expect_gt(dd_metric("execgate_key_reloads_total{result=\"ok\"} "), reloads);
	cr_expect_eq(dd_metric("execgate_key_set_drift_total "), 0,
		     "the periodic check found it, not the watch");
}

/* A mount over the directory sends no event to its watch: the periodic
 * check (2 s) finds the other key set, reloads, logs both digests and
 * counts it. */
Test(daemon_keys_follow, periodic_check_finds_what_no_watch_sees)
{
	char empty[400], reason[128] = "";
	bool mounted;

	held_key();
	snprintf(empty, sizeof(empty), "%s/empty", kh.dir);
	cr_assert_eq(mkdir(empty, 0700), 0);
	mounted = mount(empty, keys, NULL, MS_BIND, NULL) == 0;
	cr_assert(mounted, "bind mount on %s: %s", keys, strerror(errno));
	await_unknown(4000, 50, reason, sizeof(reason));
	umount2(keys, MNT_DETACH);
	cr_expect_str_eq(reason, "unknown-key", "a key the mounted directory lacks, after 4 s");
	cr_expect_eq(dd_metric("execgate_key_set_drift_total "), 1);
	cr_expect(dd_log_has("holds other keys than memory and no change was reported"),
		  "the log says what the check found");
}

/* The digest of the key set, four ways: GET /v1/keys, GET /v1/status,
 * /metrics and `execgate status --json` (the directory's), the same. */
static void digests_agree(const char *what)
{
	char out[1 << 16], metric[200];
	const char *api;
	struct dd_resp keys_r, status_r;
	json_t *cli, *ks;

	keys_r = dd_req("GET", "/v1/keys", NULL);
	status_r = dd_req("GET", "/v1/status", NULL);
	api = dd_str(&keys_r, "digest");
	cr_assert_eq(strlen(api), 64, "%s: GET /v1/keys digest: %s", what, keys_r.body);
	ks = json_object_get(status_r.json, "key_set");
	cr_assert_str_eq(json_string_value(json_object_get(ks, "digest")), api,
			 "%s: GET /v1/status key_set", what);
	cr_expect_str_eq(json_string_value(json_object_get(ks, "source")), "daemon");
	cr_expect_eq(json_integer_value(json_object_get(ks, "keys")),
		     json_array_size(json_object_get(keys_r.json, "keys")));
	snprintf(metric, sizeof(metric), "execgate_key_set_info{digest=\"%s\"} ", api);
	cr_assert_eq(dd_metric(metric), 1, "%s: /metrics has no %s", what, metric);
	cr_assert_eq(kh_cli(out, sizeof(out), "status", "--json", NULL), 0, "%s", out);
	cli = json_loads(out, 0, NULL);
	ks = json_object_get(cli, "key_set");
	cr_assert_str_eq(json_string_value(json_object_get(ks, "digest")), api,
			 "%s: execgate status --json key_set: %s", what, out);
	cr_expect_str_eq(json_string_value(json_object_get(ks, "source")), "directory");
	json_decref(cli);
	cr_assert_eq(kh_cli(out, sizeof(out), "status", NULL), 0, "%s", out);
	cr_assert(strstr(out, api), "%s: execgate status names the digest:\n%s", what, out);
	dd_resp_free(&keys_r);
	dd_resp_free(&status_r);
}

Test(daemon_keys_follow, digest_is_the_same_in_cli_status_api_and_metrics)
{
	/* the empty set's: BLAKE2b-256 of nothing */
	struct dd_resp r = dd_req("GET", "/v1/keys", NULL);

	cr_expect_str_eq(dd_str(&r, "digest"),
			 "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8");
	dd_resp_free(&r);
	digests_agree("no keys");
	dd_keys();
	dd_settled_key_reloads();
	digests_agree("one key");
}

/* keys remove with a serving daemon that takes it: exit 0, and the
 * daemon's digest is the CLI's; with the daemon stopped (SIGSTOP): the
 * change is made on disk, and the CLI exits 9 within about a second. */
Test(daemon_keys_follow, keys_remove_waits_for_the_daemon)
{
	char out[4096], kid2[32], pub[400];
	struct dd_resp r;
	double t0, took;
	int rc;

	held_key();
	/* a second key, added by the CLI: the daemon takes it */
	rc = kh_issue(out, sizeof(out), "keygen", "--out", kh.keys_dir, NULL);
	cr_assert_eq(rc, 0, "%s", out);
	snprintf(kid2, sizeof(kid2), "%.16s", out);
	snprintf(pub, sizeof(pub), "%s/%s.pub", kh.keys_dir, kid2);
	rc = kh_cli(out, sizeof(out), "keys", "add", pub, "--socket", dd.socket, NULL);
	cr_assert_eq(rc, 0, "keys add with a daemon that takes it: %s", out);
	r = dd_req("GET", "/v1/keys", NULL);
	cr_expect(dd_key_listed(&r, kid2), "the daemon took the add: %s", r.body);
	dd_resp_free(&r);

	rc = kh_cli(out, sizeof(out), "keys", "remove", kid2, "--socket", dd.socket, NULL);
	cr_assert_eq(rc, 0, "keys remove with a daemon that takes it: %s", out);
	cr_expect(strstr(out, "removed"), "%s", out);

	/* the daemon stopped: it cannot take the next change */
	cr_assert_eq(kill(dd.pid, SIGSTOP), 0);
	t0 = dd_now_ms();
	rc = kh_cli(out, sizeof(out), "keys", "remove", kh.kid, "--socket", dd.socket, NULL);
	took = dd_now_ms() - t0;
	kill(dd.pid, SIGCONT);
	cr_expect_eq(rc, 9, "keys remove, daemon stopped: exit %d: %s", rc, out);
	cr_expect(strstr(out, "whether it took the change is unknown"), "%s", out);
	cr_expect_lt(took, 2000, "the CLI waited %.0f ms", took);
	cr_expect_gt(took, 900, "the CLI gave the daemon a second, not %.0f ms", took);
	snprintf(pub, sizeof(pub), "%s/keys/%s.pub", kh.state_dir, kh.kid);
	cr_expect_neq(access(pub, F_OK), 0, "the change is on disk");
	/* once running again, the daemon follows */
	{
		char reason[128] = "";

		await_unknown(FOLLOW_MS, 10, reason, sizeof(reason));
		cr_expect_str_eq(reason, "unknown-key", "the daemon took it once continued");
	}
}

/* `execgate keys list --json` is GET /v1/keys, member for member: the
 * keys, the key files the load skipped (warnings), the digest and the
 * state dir (docs/schema/key.schema.json). */
Test(daemon_keys_follow, keys_list_json_is_the_apis_answer)
{
	char out[8192], bad[400];
	struct dd_resp r = {0};
	json_t *cli, *warn;
	double end;
	int rc;

	held_key();
	snprintf(bad, sizeof(bad), "%s/0000000000000000.pub", keys);
	write_file(bad, "execgate-ed25519-public-v1 not-hex\n");
	end = dd_now_ms() + 3000;
	do {
		dd_resp_free(&r);
		usleep(100000);
		r = dd_req("GET", "/v1/keys", NULL);
		cr_assert_eq(r.status, 200, "%s", r.body);
		warn = json_object_get(r.json, "warnings");
	} while (json_array_size(warn) == 0 && dd_now_ms() < end);
	cr_assert_eq(json_array_size(warn), 1, "the daemon names the bad file: %s", r.body);
	cr_assert(
	    strstr(json_string_value(json_array_get(warn, 0)), "0000000000000000.pub: key-not-hex"),
	    "%s", r.body);

	/* stdout's one line among the stderr warning lines */
	rc = kh_cli(out, sizeof(out), "keys", "list", "--json", NULL);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert(strstr(out, "{\"schema_version\""), "%s", out);
	cli = json_loads(strstr(out, "{\"schema_version\""), JSON_DISABLE_EOF_CHECK, NULL);
	cr_assert_not_null(cli, "keys list --json: not JSON: %s", out);
	cr_expect(json_equal(cli, r.json), "keys list --json:\n%s\nGET /v1/keys:\n%s", out, r.body);
	json_decref(cli);
	dd_resp_free(&r);
}
