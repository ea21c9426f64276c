// SPDX-License-Identifier: Apache-2.0
/* Key changes are transactions: with a malformed neighbour file in the
 * key directory, DELETE /v1/keys/KID withdraws the key from memory and
 * disk alike (a fresh token signed by it is unknown-key), PUT adds one,
 * and the neighbour is reported on its own (warnings, a log line). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "dd.h"

TestSuite(daemon_keys_tx, .init = dd_setup, .fini = dd_teardown, .timeout = 60);

#define BAD_NAME "0000000000000000.pub"

static bool warns_of(struct dd_resp *r, const char *name)
{
	json_t *w = json_object_get(r->json, "warnings"), *s;
	size_t i;

	json_array_foreach(w, i, s)
	{
		if (strstr(json_string_value(s), name))
			return true;
	}
	return false;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

Test(daemon_keys_tx, malformed_neighbour_never_keeps_a_withdrawn_key)
{
	char bad[300], pub[300], text[512], path[128], reason[128], *log;
	struct dd_resp r;
	double end;
	size_t n;
	FILE *f;

	dd_keys();
	snprintf(pub, sizeof(pub), "%s/keys/%s.pub", kh.state_dir, kh.kid);
	f = fopen(pub, "r");
	cr_assert_not_null(f, "%s", pub);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	dd_fresh_check(reason, sizeof(reason));
	cr_assert_str_neq(reason, "unknown-key", "the key is held");

	/* A malformed neighbour: the inotify reload skips it and says so,
	 * and the good key stays. */
	snprintf(bad, sizeof(bad), "%s/keys/" BAD_NAME, kh.state_dir);
	write_file(bad, "execgate-ed25519-public-v1 not-hex\n");
	end = dd_now_ms() + 3000;
	do {
		r = dd_req("GET", "/v1/keys", NULL);
		if (warns_of(&r, BAD_NAME))
			break;
		dd_resp_free(&r);
		usleep(20000);
	} while (dd_now_ms() < end);
	cr_assert(warns_of(&r, BAD_NAME), "GET /v1/keys names the neighbour: %s", r.body);
	cr_assert(dd_key_listed(&r, kh.kid), "the good key stays: %s", r.body);
	dd_resp_free(&r);

	/* DELETE: answered 200, the neighbour a warning of its own; gone from
	 * disk, from the list, and from verification. */
	snprintf(path, sizeof(path), "/v1/keys/%s", kh.kid);
	r = dd_req("DELETE", path, NULL);
	cr_assert_eq(r.status, 200, "DELETE with a malformed neighbour: %d %s", r.status, r.body);
	cr_expect(warns_of(&r, BAD_NAME), "the neighbour is reported: %s", r.body);
	dd_resp_free(&r);
	cr_expect_neq(access(pub, F_OK), 0, "%s is still on disk", pub);
	r = dd_req("GET", "/v1/keys", NULL);
	cr_expect(!dd_key_listed(&r, kh.kid), "the withdrawn key is still listed: %s", r.body);
	dd_resp_free(&r);
	dd_fresh_check(reason, sizeof(reason));
	cr_expect_str_eq(reason, "unknown-key", "a fresh token signed by the withdrawn key");
	/* Again: nothing left to withdraw. */
	r = dd_req("DELETE", path, NULL);
	cr_expect_eq(r.status, 404, "DELETE again: %d %s", r.status, r.body);
	dd_resp_free(&r);

	/* PUT with the neighbour still there: added, warned, verified. */
	r = dd_req("PUT", path, text);
	cr_assert_eq(r.status, 201, "PUT with a malformed neighbour: %d %s", r.status, r.body);
	cr_expect(warns_of(&r, BAD_NAME), "the neighbour is reported: %s", r.body);
	dd_resp_free(&r);
	cr_expect_eq(access(pub, F_OK), 0, "%s is not on disk", pub);
	r = dd_req("GET", "/v1/keys", NULL);
	cr_expect(dd_key_listed(&r, kh.kid), "the added key is not listed: %s", r.body);
	dd_resp_free(&r);
	dd_fresh_check(reason, sizeof(reason));
	cr_expect_str_neq(reason, "unknown-key", "a fresh token after the PUT");

	/* The log names the neighbour and why, on a line of its own. */
	dd_stop(SIGTERM);
	f = fopen(dd.log, "r");
	cr_assert_not_null(f);
	log = calloc(1, 1 << 20);
	n = fread(log, 1, (1 << 20) - 1, f);
	fclose(f);
	cr_expect(strstr(log, "keys: skipped: key file ") && strstr(log, BAD_NAME ": key-not-hex"),
		  "no warning line for the neighbour:\n%s", log);
	free(log);
}

/* A key file that cannot be removed (a mount point: unlink is EBUSY):
 * the withdrawal still takes effect in memory, and the 500 says so. */
Test(daemon_keys_tx, withdrawal_takes_effect_even_when_the_file_stays)
{
	char pub[300], path[128], reason[128];
	struct dd_resp r;
	bool mounted;

	dd_keys();
	/* The PUT's own write is reloaded through inotify 50 ms later: were
	 * that reload to come after the DELETE, it would read the file that
	 * stays and trust the key again, as documented. */
	dd_settled_key_reloads();
	snprintf(pub, sizeof(pub), "%s/keys/%s.pub", kh.state_dir, kh.kid);
	mounted = mount(pub, pub, NULL, MS_BIND, NULL) == 0;
	cr_assert(mounted, "bind mount on %s: %s", pub, strerror(errno));
	snprintf(path, sizeof(path), "/v1/keys/%s", kh.kid);
	r = dd_req("DELETE", path, NULL);
	umount2(pub, MNT_DETACH);
	cr_expect_eq(r.status, 500, "DELETE of an unremovable key file: %d %s", r.status, r.body);
	cr_expect(strstr(dd_str(&r, "reason"), "withdrawn from memory"), "%s", r.body);
	dd_resp_free(&r);
	cr_expect_eq(access(pub, F_OK), 0, "%s went after all", pub);
	r = dd_req("GET", "/v1/keys", NULL);
	cr_expect(!dd_key_listed(&r, kh.kid), "the withdrawn key is still listed: %s", r.body);
	dd_resp_free(&r);
	dd_fresh_check(reason, sizeof(reason));
	cr_expect_str_eq(reason, "unknown-key", "a fresh token signed by the withdrawn key");
}
