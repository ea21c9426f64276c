/* SPDX-License-Identifier: Apache-2.0 */
/* The rollout report's pure parts: the bounded aggregate (core/audit_agg.h),
 * the text escaping of the callers' bytes, and --since durations
 * (core/duration.h). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "core/audit_agg.h"
#include "core/duration.h"

static struct eg_audit_key key(const char *reason, const char *hook, uint8_t sb, const char *comm,
			       const char *exe)
{
	struct eg_audit_key k;

	memset(&k, 0, sizeof(k));
	snprintf(k.reason, sizeof(k.reason), "%s", reason);
	snprintf(k.hook, sizeof(k.hook), "%s", hook);
	k.sandbox[15] = sb;
	memcpy(k.comm, comm, strnlen(comm, sizeof(k.comm)));
	k.exe = exe;
	return k;
}

static const struct eg_audit_row *find(const struct eg_audit_agg *a, const struct eg_audit_key *k)
{
	for (size_t i = 0; i < a->nrows; i++) {
		const struct eg_audit_key *r = &a->rows[i].key;

		if (!strcmp(r->reason, k->reason) && !strcmp(r->hook, k->hook) &&
		    !memcmp(r->sandbox, k->sandbox, sizeof(r->sandbox)) &&
		    !memcmp(r->comm, k->comm, sizeof(r->comm)) && !r->exe == !k->exe &&
		    (!r->exe || !strcmp(r->exe, k->exe)))
			return &a->rows[i];
	}
	return NULL;
}

Test(audit_agg, one_row_per_key_with_count_first_and_last)
{
	struct eg_audit_agg a;
	char exe[] = "/usr/bin/agent";
	struct eg_audit_key k1 = key("deny-no-grant", "connect_unix", 1, "agent", exe),
			    k2 = key("deny-no-grant", "connect_unix", 2, "agent", exe),
			    k3 = key("deny-no-grant", "connect_unix", 1, "agent", NULL),
			    k4 = key("deny-no-grant", "connect_unix", 1, "agent", ""),
			    k5 = key("deny-not-bridge", "connect_unix", 1, "agent", exe),
			    k6 = key("deny-no-grant", "connect4", 1, "agent", exe),
			    k7 = key("deny-no-grant", "connect_unix", 1, "agent2", exe);
	const struct eg_audit_row *r;

	cr_assert_eq(eg_audit_agg_init(&a, 0), 0);
	cr_assert_eq(a.max_rows, EG_AUDIT_ROWS_DEFAULT);
	eg_audit_agg_add(&a, &k1, 300);
	exe[1] = 'X'; /* the row holds its own copy: this is another executable */
	eg_audit_agg_add(&a, &k1, 100);
	eg_audit_agg_add(&a, &k1, 200);
	cr_assert_eq(a.nrows, 2);
	cr_assert_str_eq(a.rows[0].key.exe, "/usr/bin/agent");
	cr_assert_eq(a.rows[0].count, 1);
	cr_assert_str_eq(a.rows[1].key.exe, "/Xsr/bin/agent");
	cr_assert_eq(a.rows[1].count, 2);
	cr_assert_eq(a.rows[1].first_ns, 100);
	cr_assert_eq(a.rows[1].last_ns, 200);
	exe[1] = 'u';
	eg_audit_agg_add(&a, &k1, 50);
	r = find(&a, &k1);
	cr_assert(r);
	cr_assert_eq(r->count, 2);
	cr_assert_eq(r->first_ns, 50);
	cr_assert_eq(r->last_ns, 300);
	cr_assert_eq(a.nrows, 2);

	/* each field of the key makes a row of its own; unknown is not "" */
	eg_audit_agg_add(&a, &k2, 1);
	eg_audit_agg_add(&a, &k3, 2);
	eg_audit_agg_add(&a, &k4, 3);
	eg_audit_agg_add(&a, &k5, 4);
	eg_audit_agg_add(&a, &k6, 5);
	eg_audit_agg_add(&a, &k7, 6);
	cr_assert_eq(a.nrows, 8);
	cr_assert_eq(find(&a, &k2)->count, 1);
	cr_assert_eq(find(&a, &k5)->first_ns, 4);
	cr_assert_eq(find(&a, &k6)->count, 1);
	cr_assert_eq(find(&a, &k7)->last_ns, 6);
	cr_assert_eq(find(&a, &k3)->count, 1);
	cr_assert_null(find(&a, &k3)->key.exe);
	cr_assert_eq(find(&a, &k4)->count, 1);
	cr_assert_str_eq(find(&a, &k4)->key.exe, "");
	cr_assert_eq(find(&a, &k1)->count, 2);
	cr_assert_eq(a.events, 10);
	cr_assert_eq(a.other.count, 0);
	eg_audit_agg_free(&a);
}

Test(audit_agg, a_full_table_folds_into_other)
{
	struct eg_audit_agg a;
	char comm[16];
	struct eg_audit_key k;

	cr_assert_eq(eg_audit_agg_init(&a, 3), 0);
	for (int i = 0; i < 10; i++) {
		snprintf(comm, sizeof(comm), "p%d", i);
		k = key("deny-no-grant", "connect_unix", 1, comm, "/bin/p");
		eg_audit_agg_add(&a, &k, 1000 + i);
	}
	/* a known key still counts in its row when the table is full */
	k = key("deny-no-grant", "connect_unix", 1, "p1", "/bin/p");
	eg_audit_agg_add(&a, &k, 5);
	cr_assert_eq(a.nrows, 3);
	cr_assert_eq(find(&a, &k)->count, 2);
	cr_assert_eq(find(&a, &k)->first_ns, 5);
	cr_assert_eq(find(&a, &k)->last_ns, 1001);
	cr_assert_eq(a.other.count, 7);
	cr_assert_eq(a.other.first_ns, 1003);
	cr_assert_eq(a.other.last_ns, 1009);
	cr_assert_eq(a.events, 11);
	eg_audit_agg_free(&a);
	cr_assert_eq(eg_audit_agg_init(&a, EG_AUDIT_ROWS_LIMIT + 1), -EINVAL);
}

Test(audit_agg, many_rows_stay_distinct)
{
	struct eg_audit_agg a;
	char exe[64];
	struct eg_audit_key k;

	cr_assert_eq(eg_audit_agg_init(&a, 0), 0);
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 4096; i++) {
			snprintf(exe, sizeof(exe), "/opt/x/%d", i);
			k = key("deny-no-grant", "connect_unix", (uint8_t)i, "x", exe);
			eg_audit_agg_add(&a, &k, i);
		}
	cr_assert_eq(a.nrows, 4096);
	cr_assert_eq(a.other.count, 0);
	for (size_t i = 0; i < a.nrows; i++)
		cr_assert_eq(a.rows[i].count, 2, "row %zu", i);
	eg_audit_agg_free(&a);
}

Test(audit_agg, escape_keeps_one_token_on_one_line)
{
	char out[64];

	cr_assert_str_eq(eg_audit_escape("agent", 16, out, sizeof(out)), "agent");
	cr_assert_str_eq(eg_audit_escape("a b\nc\x1b\x7f\xff", 16, out, sizeof(out)),
			 "a\\x20b\\x0ac\\x1b\\x7f\\xff");
	/* the JSON form's \xNN passes as it is */
	cr_assert_str_eq(eg_audit_escape("a\\x0a", 16, out, sizeof(out)), "a\\x0a");
	/* max bytes, not past them; no NUL needed */
	cr_assert_str_eq(eg_audit_escape("abcdef", 3, out, sizeof(out)), "abc");
	/* a short buffer cuts at a whole escape */
	cr_assert_str_eq(eg_audit_escape("ab\n", 16, out, 6), "ab");
	cr_assert_str_eq(eg_audit_escape("ab\n", 16, out, 7), "ab\\x0a");
}

Test(duration, units_and_refusals)
{
	int64_t ns = -1;

	cr_assert_eq(eg_duration_parse("30s", &ns), 0);
	cr_assert_eq(ns, 30000000000LL);
	cr_assert_eq(eg_duration_parse("10m", &ns), 0);
	cr_assert_eq(ns, 600000000000LL);
	cr_assert_eq(eg_duration_parse("2h", &ns), 0);
	cr_assert_eq(ns, 7200000000000LL);
	cr_assert_eq(eg_duration_parse("1d", &ns), 0);
	cr_assert_eq(ns, 86400000000000LL);
	cr_assert_eq(eg_duration_parse("106751d", &ns), 0, "the largest whole day in int64 ns");
	cr_assert_eq(ns, 106751LL * 86400000000000LL);

	static const char *const bad[] = {
	    "",
	    "s",
	    "10",
	    "0s",
	    "00m",
	    "-1m",
	    "+1m",
	    " 1m",
	    "1m ",
	    "1.5h",
	    "1w",
	    "1ms",
	    "1M",
	    "2h30m",
	    "1 d",
	    "1dd",
	    "106752d",
	    "9223372036854775808s",
	    "99999999999999999999d",
	    "0x10s",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ns = 42;
		cr_assert_eq(eg_duration_parse(bad[i], &ns), -EINVAL, "\"%s\"", bad[i]);
		cr_assert_eq(ns, 42, "\"%s\": nothing written", bad[i]);
	}
	cr_assert_eq(eg_duration_parse(NULL, &ns), -EINVAL);
}
