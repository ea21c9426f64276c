/* SPDX-License-Identifier: Apache-2.0 */
/* The ack reader and the fence rule (user/fleet/ack.h): every clause of
 * the rule in docs/fleet.md, "Fence", and the reader's refusals. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include "fleet/ack.h"

#define W "aaaaaaaa-0000-4000-8000-00000000000a"
#define S "5f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6f7"
#define O "bbbbbbbb-0000-4000-8000-00000000000b"

/* The test's node keys: K (the writer's) and K2 (another worker's). */
static uint8_t pk1[32], sk1[64], pk2[32], sk2[64];

static void keys(void)
{
	uint8_t seed[32];

	cr_assert_geq(sodium_init(), 0);
	memset(seed, 0x11, sizeof(seed));
	crypto_sign_seed_keypair(pk1, sk1, seed);
	memset(seed, 0x22, sizeof(seed));
	crypto_sign_seed_keypair(pk2, sk2, seed);
}

/* Signs the unsigned ack in buf in place with sk. */
static void sign_with(char *buf, size_t len, const uint8_t *sk)
{
	char *out = NULL;

	cr_assert_eq(eg_ack_sign(buf, strlen(buf), sk, &out), 0, "%s", buf);
	cr_assert_lt(strlen(out), len);
	strcpy(buf, out);
	free(out);
}

/* An ack as the contract writes it, signed by K; gen NULL: the three
 * record numbers null. */
static void ack_mode(char *buf, size_t len, const char *worker, const char *sandbox, int sel_gen,
		     const char *state, const char *gen, const char *mode)
{
	const char *num = gen ? "1" : "null";

	keys();
	snprintf(buf, len,
		 "{\"schema_version\":3,\"worker\":\"%s\",\"sandbox\":\"%s\",\"selection\":{"
		 "\"worker\":\"" O "\",\"generation\":%d,\"activation\":1,\"revision\":1234},"
		 "\"state\":\"%s\",\"generation\":%s,\"activation\":%s,\"epoch\":%s,"
		 "\"mode\":\"%s\",\"revision\":1240,\"acked_at\":1767225600}",
		 worker, sandbox, sel_gen, state, gen ? gen : "null", num, gen ? "4" : "null",
		 mode);
	sign_with(buf, len, sk1);
}

static void ack(char *buf, size_t len, const char *worker, const char *sandbox, int sel_gen,
		const char *state, const char *gen)
{
	ack_mode(buf, len, worker, sandbox, sel_gen, state, gen, "enforce");
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
	cr_assert_eq(a.mode, EG_ACK_ENFORCE);
	cr_assert_eq(a.revision, 1240);
	cr_assert_eq(a.acked_at, 1767225600);
	cr_assert_eq(eg_ack_verify(buf, strlen(buf), pk1), EG_ACK_SIG_OK);
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

/* text, signed by K when it ends in '}' (so that only the named member
 * is wrong), is refused by the reader naming why. */
static void refused(const char *text, const char *why)
{
	struct eg_ack a;
	char err[160] = "", buf[EG_ACK_MAX_LEN + 200];

	keys();
	snprintf(buf, sizeof(buf), "%s", text);
	if (strlen(text) > 1 && text[strlen(text) - 1] == '}' &&
	    strlen(text) < EG_ACK_MAX_LEN - 110)
		sign_with(buf, sizeof(buf), sk1);
	text = buf;
	cr_assert_eq(eg_ack_parse(text, strlen(text), &a, err, sizeof(err)), -EINVAL, "%s", text);
	cr_assert(strstr(err, why), "'%s': err '%s' lacks '%s'", text, err, why);
	cr_assert(!eg_ack_fenced(&a, W, S, 0), "a refused ack counts");
}

#define SEL  "\"selection\":{\"worker\":\"" O "\",\"generation\":8,\"activation\":1,\"revision\":1}"
#define HEAD "{\"schema_version\":3,\"worker\":\"" W "\",\"sandbox\":\"" S "\"," SEL

Test(ack, refusals)
{
	char buf[600];

	refused("", "does not end with the signature member");
	refused("[]", "does not end with the signature member");
	refused("{\"a\":1}", "unknown member");
	refused(HEAD ",\"state\":\"retired\",\"generation\":7,\"activation\":1,\"epoch\":4,"
		     "\"mode\":\"enforce\",\"revision\":1,\"acked_at\":1,\"x\":0}",
		"unknown member 'x'");
	refused(HEAD ",\"state\":\"retired\",\"generation\":7,\"activation\":1,\"epoch\":4,"
		     "\"mode\":\"enforce\",\"revision\":1}",
		"missing acked_at");
	refused(HEAD
		",\"state\":\"retired\",\"state\":\"retired\",\"generation\":7,"
		"\"activation\":1,\"epoch\":4,\"mode\":\"enforce\",\"revision\":1,\"acked_at\":1}",
		"not a JSON object");
	refused(HEAD ",\"state\":\"gone\",\"generation\":7,\"activation\":1,\"epoch\":4,"
		     "\"mode\":\"enforce\",\"revision\":1,\"acked_at\":1}",
		"state 'gone'");
	refused(HEAD ",\"state\":\"retired\",\"generation\":\"7\",\"activation\":1,\"epoch\":4,"
		     "\"mode\":\"enforce\",\"revision\":1,\"acked_at\":1}",
		"generation is not an integer");
	refused(HEAD ",\"state\":\"retired\",\"generation\":-1,\"activation\":1,\"epoch\":4,"
		     "\"mode\":\"enforce\",\"revision\":1,\"acked_at\":1}",
		"generation is not an integer");
	refused(HEAD ",\"state\":\"retired\",\"generation\":9007199254740992,\"activation\":1,"
		     "\"epoch\":4,\"mode\":\"enforce\",\"revision\":1,\"acked_at\":1}",
		"generation is not an integer");
	refused(HEAD ",\"state\":\"retired\",\"generation\":7,\"activation\":4294967296,"
		     "\"epoch\":4,\"mode\":\"enforce\",\"revision\":1,\"acked_at\":1}",
		"activation is not an integer");
	refused(HEAD ",\"state\":\"retired\",\"generation\":7,\"activation\":null,\"epoch\":4,"
		     "\"mode\":\"enforce\",\"revision\":1,\"acked_at\":1}",
		"not all null");
	refused(HEAD ",\"state\":\"active\",\"generation\":null,\"activation\":null,"
		     "\"epoch\":null,\"mode\":\"enforce\",\"revision\":1,\"acked_at\":1}",
		"without generation");
	refused(HEAD ",\"state\":\"absent\",\"generation\":7,\"activation\":1,\"epoch\":4,"
		     "\"mode\":\"enforce\",\"revision\":1,\"acked_at\":1}",
		"absent with a generation");
	refused("{\"schema_version\":1,\"worker\":\"" W "\",\"sandbox\":\"" S "\"," SEL
		",\"state\":\"absent\",\"generation\":null,\"activation\":null,\"epoch\":null,"
		"\"mode\":\"enforce\",\"revision\":1,\"acked_at\":1}",
		"schema_version 1");
	refused("{\"schema_version\":3,\"worker\":\"AAAAAAAA-0000-4000-8000-00000000000A\","
		"\"sandbox\":\"" S "\"," SEL
		",\"state\":\"absent\",\"generation\":null,\"activation\":null,\"epoch\":null,"
		"\"mode\":\"enforce\",\"revision\":1,\"acked_at\":1}",
		"worker is not a lowercase UUID");
	refused("{\"schema_version\":3,\"worker\":\"" W "\",\"sandbox\":\"" S "\","
		"\"selection\":{\"worker\":\"" O "\",\"generation\":8,\"activation\":1},"
		"\"state\":\"absent\",\"generation\":null,\"activation\":null,\"epoch\":null,"
		"\"mode\":\"enforce\",\"revision\":1,\"acked_at\":1}",
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

#define TAIL ",\"mode\":\"enforce\",\"revision\":1,\"acked_at\":1"
#define BODY HEAD ",\"state\":\"retired\",\"generation\":7,\"activation\":1,\"epoch\":4"

Test(ack, refusals_of_mode_and_signature_members)
{
	char buf[EG_ACK_MAX_LEN + 200], sig[EG_ACK_SIG_TEXT_LEN + 1];

	refused(BODY ",\"mode\":\"inherit\",\"revision\":1,\"acked_at\":1}",
		"mode is not \"enforce\" or \"audit\"");
	refused(BODY ",\"mode\":null,\"revision\":1,\"acked_at\":1}", "mode is not");
	refused(BODY ",\"revision\":1,\"acked_at\":1}", "missing mode");
	/* a signature member that is not the one at the end: signed, and
	 * then a second one inside */
	memset(sig, 'A', EG_ACK_SIG_TEXT_LEN);
	sig[EG_ACK_SIG_TEXT_LEN] = '\0';
	snprintf(buf, sizeof(buf), BODY TAIL ",\"signature\":\"%s\"}", sig);
	refused(buf, "not a JSON object"); /* signed again: the member twice */
	snprintf(buf, sizeof(buf), BODY TAIL ",\"signature\":1}");
	refused(buf, "not a JSON object");
	/* unsigned: the reader wants the signature at the end */
	{
		struct eg_ack a;
		char err[160] = "";

		snprintf(buf, sizeof(buf), BODY TAIL "}");
		cr_assert_eq(eg_ack_parse(buf, strlen(buf), &a, err, sizeof(err)), -EINVAL);
		cr_assert(strstr(err, "does not end with the signature member"), "%s", err);
		/* the tail's shape, with a short signature */
		snprintf(buf, sizeof(buf), BODY TAIL ",\"signature\":\"AAAA\"}");
		cr_assert_eq(eg_ack_parse(buf, strlen(buf), &a, err, sizeof(err)), -EINVAL);
		cr_assert(strstr(err, "does not end with the signature member"), "%s", err);
	}
}

Test(ack, mode_audit_is_never_fenced)
{
	struct eg_ack a;
	char buf[EG_ACK_MAX_LEN], err[160];

	ack_mode(buf, sizeof(buf), W, S, 8, "retired", "7", "audit");
	cr_assert_eq(eg_ack_parse(buf, strlen(buf), &a, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(a.mode, EG_ACK_AUDIT);
	cr_assert_str_eq(eg_ack_mode_name(a.mode), "audit");
	cr_assert(!eg_ack_fenced(&a, W, S, 8));
	cr_assert(eg_ack_fenced_state(&a, W, S, 8));
	ack_mode(buf, sizeof(buf), W, S, 8, "retired", "7", "enforce");
	cr_assert_eq(eg_ack_parse(buf, strlen(buf), &a, err, sizeof(err)), 0, "%s", err);
	cr_assert(eg_ack_fenced(&a, W, S, 8));
}

/* The signed form: sign, verify, and each reason a signature is refused. */
Test(ack, signature)
{
	char buf[EG_ACK_MAX_LEN + 200], plain[EG_ACK_MAX_LEN], *out = NULL;
	size_t n;

	keys();
	snprintf(plain, sizeof(plain), BODY TAIL "}");
	cr_assert_eq(eg_ack_sign(plain, strlen(plain), sk1, &out), 0);
	n = strlen(out);
	/* the signed bytes are the unsigned ack's, the signature appended */
	cr_assert_eq(n, strlen(plain) - 1 + EG_ACK_SIG_TAIL_LEN);
	cr_assert_eq(memcmp(out, plain, strlen(plain) - 1), 0);
	cr_assert_eq(memcmp(out + strlen(plain) - 1, ",\"signature\":\"", 14), 0);
	cr_assert_str_eq(out + n - 2, "\"}");
	cr_assert_eq(eg_ack_verify(out, n, pk1), EG_ACK_SIG_OK);
	/* another worker's key */
	cr_assert_eq(eg_ack_verify(out, n, pk2), EG_ACK_SIG_BAD_SIGNATURE);
	cr_assert_str_eq(eg_ack_sig_err_name(EG_ACK_SIG_BAD_SIGNATURE), "bad-signature");
	/* one byte of the body changed: retired -> retiree */
	snprintf(buf, sizeof(buf), "%s", out);
	*strstr(buf, "retired\"") = 'R';
	cr_assert_eq(eg_ack_verify(buf, n, pk1), EG_ACK_SIG_BAD_SIGNATURE);
	/* unsigned: no tail, or a tail cut */
	cr_assert_eq(eg_ack_verify(plain, strlen(plain), pk1), EG_ACK_SIG_UNSIGNED);
	cr_assert_eq(eg_ack_verify(out, n - 1, pk1), EG_ACK_SIG_UNSIGNED);
	cr_assert_eq(eg_ack_verify(out, 3, pk1), EG_ACK_SIG_UNSIGNED);
	cr_assert_str_eq(eg_ack_sig_err_name(EG_ACK_SIG_UNSIGNED), "unsigned");
	/* not exact base64url: a '+' (standard alphabet), and a last
	 * character whose unused bits are set (A -> B: same 64 bytes
	 * otherwise, not the one encoding) */
	snprintf(buf, sizeof(buf), "%s", out);
	buf[n - 3 - 10] = '+';
	cr_assert_eq(eg_ack_verify(buf, n, pk1), EG_ACK_SIG_BAD_TEXT);
	snprintf(buf, sizeof(buf), "%s", out);
	{
		static const char b64[] =
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
		int v = (int)(strchr(b64, buf[n - 3]) - b64);

		/* 86 characters carry 516 bits for 512: the last one's low
		 * 4 bits are unused and must be 0 */
		cr_assert_eq(v & 15, 0);
		buf[n - 3] = b64[v | 1];
		cr_assert_eq(eg_ack_verify(buf, n, pk1), EG_ACK_SIG_BAD_TEXT);
	}
	cr_assert_str_eq(eg_ack_sig_err_name(EG_ACK_SIG_BAD_TEXT), "bad-signature-text");
	/* longer than an ack may be */
	cr_assert_eq(eg_ack_verify(out, EG_ACK_MAX_LEN + 1, pk1), EG_ACK_SIG_UNSIGNED);
	/* signed under another context: the same key, a signed verdict's */
	{
		uint8_t msg[EG_ACK_MAX_LEN + 64], sig[64];
		static const char ctx[] = "execgate signed verdict v1";
		char s64[EG_ACK_SIG_TEXT_LEN + 1];

		memcpy(msg, ctx, sizeof(ctx));
		memcpy(msg + sizeof(ctx), plain, strlen(plain));
		crypto_sign_detached(sig, NULL, msg, sizeof(ctx) + strlen(plain), sk1);
		sodium_bin2base64(s64, sizeof(s64), sig, sizeof(sig),
				  sodium_base64_VARIANT_URLSAFE_NO_PADDING);
		snprintf(buf, sizeof(buf), "%.*s,\"signature\":\"%s\"}", (int)strlen(plain) - 1,
			 plain, s64);
		cr_assert_eq(strlen(buf), n);
		cr_assert_eq(eg_ack_verify(buf, n, pk1), EG_ACK_SIG_BAD_SIGNATURE);
	}
	free(out);
	/* what eg_ack_sign refuses */
	cr_assert_eq(eg_ack_sign("[]", 2, sk1, &out), -EINVAL);
	cr_assert_null(out);
	cr_assert_eq(eg_ack_sign("}", 1, sk1, &out), -EINVAL);
	{
		static char big[EG_ACK_MAX_LEN];
		size_t len = EG_ACK_MAX_LEN - EG_ACK_SIG_TAIL_LEN + 1; /* signed: the most */

		memset(big, ' ', sizeof(big));
		big[0] = '{';
		big[len - 1] = '}';
		cr_assert_eq(eg_ack_sign(big, len, sk1, &out), 0);
		cr_assert_eq(strlen(out), EG_ACK_MAX_LEN);
		free(out);
		big[len] = '}';
		cr_assert_eq(eg_ack_sign(big, len + 1, sk1, &out), -EINVAL);
		cr_assert_null(out);
	}
}
