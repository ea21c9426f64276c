/* SPDX-License-Identifier: Apache-2.0 */
/* The ack reader and the fence rule (user/fleet/ack.h): every clause of
 * the rule in docs/fleet.md, "Fence", and the reader's refusals. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "fleet/ack.h"

#define W "aaaaaaaa-0000-4000-8000-00000000000a"
#define S "5f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6f7"
#define O "bbbbbbbb-0000-4000-8000-00000000000b"

/* An ack as the contract writes it; gen NULL: the three record numbers null. */
static void ack(char *buf, size_t len, const char *worker, const char *sandbox, int sel_gen,
		const char *state, const char *gen)
{
	const char *num = gen ? "1" : "null";

	snprintf(buf, len,
		 "{\"schema_version\":2,\"worker\":\"%s\",\"sandbox\":\"%s\",\"selection\":{"
		 "\"worker\":\"" O "\",\"generation\":%d,\"activation\":1,\"revision\":1234},"
		 "\"state\":\"%s\",\"generation\":%s,\"activation\":%s,\"epoch\":%s,"
		 "\"revision\":1240,\"acked_at\":1767225600}",
		 worker, sandbox, sel_gen, state, gen ? gen : "null", num, gen ? "4" : "null");
}

static bool fenced(int sel_gen, const char *state, const char *gen, uint64_t g)
{
	struct eg_ack a;
	char buf[600], err[160];

	ack(buf, sizeof(buf), W, S, sel_gen, state, gen);
	cr_assert_eq(eg_ack_parse(buf, strlen(buf), &a, err, sizeof(err)), 0, "%s: %s", buf, err);
	return eg_ack_fenced(&a, W, S, g);
}

Test(ack, parses_the_contract_example)
{
	struct eg_ack a;
	char buf[600], err[160];

	ack(buf, sizeof(buf), W, S, 8, "retired", "7");
	cr_assert_eq(eg_ack_parse(buf, strlen(buf), &a, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(a.worker, W);
	cr_assert_str_eq(a.sandbox, S);
	cr_assert_str_eq(a.selection.worker, O);
	cr_assert_eq(a.selection.generation, 8);
	cr_assert_eq(a.selection.activation, 1);
	cr_assert_eq(a.selection.revision, 1234);
	cr_assert_eq(a.state, EG_ACK_RETIRED);
	cr_assert(a.has_record);
	cr_assert_eq(a.generation, 7);
	cr_assert_eq(a.activation, 1);
	cr_assert_eq(a.epoch, 4);
	cr_assert_eq(a.revision, 1240);
	cr_assert_eq(a.acked_at, 1767225600);
}

Test(ack, fence_rule)
{
	/* selection.generation >= G is required in every state */
	cr_assert(fenced(8, "retired", "7", 8));
	cr_assert(!fenced(7, "retired", "7", 8));
	cr_assert(fenced(8, "absent", NULL, 8));
	cr_assert(!fenced(7, "absent", NULL, 8));
	cr_assert(fenced(8, "pending", NULL, 8));
	cr_assert(fenced(9, "pending", "7", 8));
	cr_assert(!fenced(7, "pending", NULL, 8));
	/* active: only at G or newer */
	cr_assert(fenced(8, "active", "8", 8));
	cr_assert(fenced(9, "active", "9", 8));
	cr_assert(!fenced(8, "active", "7", 8));
	cr_assert(!fenced(7, "active", "8", 8));
	cr_assert(fenced(0, "active", "0", 0));
}

Test(ack, names_the_worker_and_the_sandbox)
{
	struct eg_ack a;
	char buf[600], err[160];

	ack(buf, sizeof(buf), W, S, 8, "retired", "7");
	cr_assert_eq(eg_ack_parse(buf, strlen(buf), &a, err, sizeof(err)), 0, "%s", err);
	cr_assert(eg_ack_fenced(&a, W, S, 8));
	cr_assert(!eg_ack_fenced(&a, O, S, 8));
	cr_assert(!eg_ack_fenced(&a, W, O, 8));
}

static void refused(const char *text, const char *why)
{
	struct eg_ack a;
	char err[160] = "";

	cr_assert_eq(eg_ack_parse(text, strlen(text), &a, err, sizeof(err)), -EINVAL, "%s", text);
	cr_assert(strstr(err, why), "'%s': err '%s' lacks '%s'", text, err, why);
	cr_assert(!eg_ack_fenced(&a, W, S, 0), "a refused ack counts");
}

#define SEL  "\"selection\":{\"worker\":\"" O "\",\"generation\":8,\"activation\":1,\"revision\":1}"
#define HEAD "{\"schema_version\":2,\"worker\":\"" W "\",\"sandbox\":\"" S "\"," SEL

Test(ack, refusals)
{
	char buf[600];

	refused("", "not a JSON object");
	refused("[]", "not a JSON object");
	refused("{\"a\":1}", "unknown member");
	refused(HEAD ",\"state\":\"retired\",\"generation\":7,\"activation\":1,\"epoch\":4,"
		     "\"revision\":1,\"acked_at\":1,\"x\":0}",
		"unknown member 'x'");
	refused(HEAD ",\"state\":\"retired\",\"generation\":7,\"activation\":1,\"epoch\":4,"
		     "\"revision\":1}",
		"missing acked_at");
	refused(HEAD ",\"state\":\"retired\",\"state\":\"retired\",\"generation\":7,"
		     "\"activation\":1,\"epoch\":4,\"revision\":1,\"acked_at\":1}",
		"not a JSON object");
	refused(HEAD ",\"state\":\"gone\",\"generation\":7,\"activation\":1,\"epoch\":4,"
		     "\"revision\":1,\"acked_at\":1}",
		"state 'gone'");
	refused(HEAD ",\"state\":\"retired\",\"generation\":\"7\",\"activation\":1,\"epoch\":4,"
		     "\"revision\":1,\"acked_at\":1}",
		"generation is not an integer");
	refused(HEAD ",\"state\":\"retired\",\"generation\":-1,\"activation\":1,\"epoch\":4,"
		     "\"revision\":1,\"acked_at\":1}",
		"generation is not an integer");
	refused(HEAD ",\"state\":\"retired\",\"generation\":9007199254740992,\"activation\":1,"
		     "\"epoch\":4,\"revision\":1,\"acked_at\":1}",
		"generation is not an integer");
	refused(HEAD ",\"state\":\"retired\",\"generation\":7,\"activation\":4294967296,"
		     "\"epoch\":4,\"revision\":1,\"acked_at\":1}",
		"activation is not an integer");
	refused(HEAD ",\"state\":\"retired\",\"generation\":7,\"activation\":null,\"epoch\":4,"
		     "\"revision\":1,\"acked_at\":1}",
		"not all null");
	refused(HEAD ",\"state\":\"active\",\"generation\":null,\"activation\":null,"
		     "\"epoch\":null,\"revision\":1,\"acked_at\":1}",
		"without generation");
	refused(HEAD ",\"state\":\"absent\",\"generation\":7,\"activation\":1,\"epoch\":4,"
		     "\"revision\":1,\"acked_at\":1}",
		"absent with a generation");
	refused("{\"schema_version\":1,\"worker\":\"" W "\",\"sandbox\":\"" S "\"," SEL
		",\"state\":\"absent\",\"generation\":null,\"activation\":null,\"epoch\":null,"
		"\"revision\":1,\"acked_at\":1}",
		"schema_version 1");
	refused("{\"schema_version\":2,\"worker\":\"AAAAAAAA-0000-4000-8000-00000000000A\","
		"\"sandbox\":\"" S "\"," SEL
		",\"state\":\"absent\",\"generation\":null,\"activation\":null,\"epoch\":null,"
		"\"revision\":1,\"acked_at\":1}",
		"worker is not a lowercase UUID");
	refused("{\"schema_version\":2,\"worker\":\"" W "\",\"sandbox\":\"" S "\","
		"\"selection\":{\"worker\":\"" O "\",\"generation\":8,\"activation\":1},"
		"\"state\":\"absent\",\"generation\":null,\"activation\":null,\"epoch\":null,"
		"\"revision\":1,\"acked_at\":1}",
		"missing revision in selection");
	/* one line, bounded */
	ack(buf, sizeof(buf), W, S, 8, "retired", "7");
	buf[strlen(buf) - 1] = '\n';
	refused(buf, "not one line");
	{
		static char big[EG_ACK_MAX_LEN + 2];

		memset(big, ' ', sizeof(big) - 1);
		refused(big, "longer than");
	}
	/* a NUL inside the value */
	{
		struct eg_ack a;
		char err[160];

		ack(buf, sizeof(buf), W, S, 8, "retired", "7");
		cr_assert_eq(eg_ack_parse(buf, strlen(buf) + 1, &a, err, sizeof(err)), -EINVAL);
	}
}
