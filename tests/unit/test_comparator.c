/* SPDX-License-Identifier: Apache-2.0 */
/* The comparator table of docs/capability.md, row by row, through eg_admit
 * (signature included), plus the worked example and the clock edges. */
#include <criterion/criterion.h>
#include <string.h>
#include "core/admission.h"
#include "core/comparator.h"
#include "helpers.h"

static struct test_key key;
static struct eg_keyset ks;
static struct eg_admission adm;
static struct eg_capability cap;
static struct eg_record rec;
static struct eg_request req;

static void setup(void)
{
	test_key(&key, 2);
	eg_keyset_init(&ks);
	cr_assert_eq(eg_keyset_add(&ks, key.pk, NULL), EG_KEY_OK);
	adm.keys = &ks;
	adm.cache = NULL;
	test_cap(&cap, &key);
	test_record_for(&cap, &rec);
	memset(&req, 0, sizeof(req));
	req.scope = EG_SCOPE_FILE_READ;
}

TestSuite(comparator, .init = setup);

/* Sign the current template and admit it against rec (or no record). */
static struct eg_decision admit_at(const struct eg_record *r, uint64_t now)
{
	uint8_t raw[EG_CAP_LEN];

	test_sign(&cap, &key, raw);
	return eg_admit(&adm, raw, sizeof(raw), r, now, &req, NULL);
}

#define expect(d, v, r)                                                                            \
	do {                                                                                       \
		struct eg_decision d_ = (d);                                                       \
		cr_assert_eq(d_.verdict, (v), "verdict %s, want %s (reason %s)",                   \
			     eg_verdict_name(d_.verdict), eg_verdict_name(v),                      \
			     eg_reason_name(d_.reason));                                           \
		cr_assert_eq(d_.reason, (r), "reason %s, want %s", eg_reason_name(d_.reason),      \
			     eg_reason_name(r));                                                   \
	} while (0)

Test(comparator, everything_matches_allows)
{
	expect(admit_at(&rec, T0), EG_ALLOW, EG_REASON_OK);
	req.scope = EG_SCOPE_FILE_READ | EG_SCOPE_EXEC;
	expect(admit_at(&rec, T0), EG_ALLOW, EG_REASON_OK);
	req.scope = 0;
	expect(admit_at(&rec, T0), EG_ALLOW, EG_REASON_OK);
}

/* Row 1: permanent denials. */
Test(comparator, bad_signature_denies)
{
	uint8_t raw[EG_CAP_LEN];

	test_sign(&cap, &key, raw);
	raw[EG_OFF_SIGNATURE + 10] ^= 0x01;
	expect(eg_admit(&adm, raw, sizeof(raw), &rec, T0, &req, NULL), EG_DENY,
	       EG_REASON_BAD_SIGNATURE);
	/* Signed by a key that is not in the set but claims one that is. */
	struct test_key other;

	test_key(&other, 3);
	test_sign(&cap, &other, raw);
	memcpy(raw + EG_OFF_KEY_ID, key.kid, EG_KEY_ID_LEN);
	expect(eg_admit(&adm, raw, sizeof(raw), &rec, T0, &req, NULL), EG_DENY,
	       EG_REASON_BAD_SIGNATURE);
	/* The body is signed with the context: a signature over the bare body
	 * does not verify. */
	test_sign(&cap, &key, raw);
	crypto_sign_detached(raw + EG_OFF_SIGNATURE, NULL, raw, EG_CAP_BODY_LEN, key.sk);
	expect(eg_admit(&adm, raw, sizeof(raw), &rec, T0, &req, NULL), EG_DENY,
	       EG_REASON_BAD_SIGNATURE);
}

Test(comparator, unknown_key_denies)
{
	struct test_key other;
	uint8_t raw[EG_CAP_LEN];

	test_key(&other, 4);
	test_sign(&cap, &other, raw);
	expect(eg_admit(&adm, raw, sizeof(raw), &rec, T0, &req, NULL), EG_DENY,
	       EG_REASON_UNKNOWN_KEY);
}

Test(comparator, malformed_denies)
{
	uint8_t raw[EG_CAP_LEN];
	struct eg_decision d;

	cap.version = 2;
	test_sign(&cap, &key, raw); /* validly signed, still refused */
	d = eg_admit(&adm, raw, sizeof(raw), &rec, T0, &req, NULL);
	expect(d, EG_DENY, EG_REASON_MALFORMED);
	cr_assert_eq(d.decode_err, EG_DECODE_BAD_VERSION);
	cap.version = 1;
	cap.expiry = T0 + 121;
	test_sign(&cap, &key, raw);
	d = eg_admit(&adm, raw, sizeof(raw), &rec, T0, &req, NULL);
	expect(d, EG_DENY, EG_REASON_MALFORMED);
	cr_assert_eq(d.decode_err, EG_DECODE_TTL_TOO_LONG);
}

Test(comparator, scope_not_allowed_denies)
{
	req.scope = EG_SCOPE_TERMINAL;
	expect(admit_at(&rec, T0), EG_DENY, EG_REASON_SCOPE_NOT_ALLOWED);
	req.scope = EG_SCOPE_FILE_READ | EG_SCOPE_FILE_WRITE;
	expect(admit_at(&rec, T0), EG_DENY, EG_REASON_SCOPE_NOT_ALLOWED);
}

static void serviceport_cap(uint16_t port, uint8_t proto)
{
	cap.scope |= EG_SCOPE_SERVICEPORT;
	cap.port = port;
	cap.proto = proto;
}

Test(comparator, port_and_protocol_must_be_in_profile)
{
	serviceport_cap(8080, EG_PROTO_TCP);
	rec.ports[0] = (struct eg_port_rule){.port = 8080, .proto = EG_PROTO_TCP};
	rec.nports = 1;
	req.scope = EG_SCOPE_SERVICEPORT;
	req.port = 8080;
	req.proto = EG_PROTO_TCP;
	expect(admit_at(&rec, T0), EG_ALLOW, EG_REASON_OK);

	req.port = 8081;
	expect(admit_at(&rec, T0), EG_DENY, EG_REASON_PORT_NOT_ALLOWED);
	req.port = 8080;
	req.proto = EG_PROTO_UDP;
	expect(admit_at(&rec, T0), EG_DENY, EG_REASON_PORT_NOT_ALLOWED);
	req.proto = EG_PROTO_TCP;

	/* The token names 8080/tcp but the execution no longer serves it. */
	rec.ports[0] = (struct eg_port_rule){.port = 9090, .proto = EG_PROTO_TCP};
	expect(admit_at(&rec, T0), EG_DENY, EG_REASON_PORT_NOT_ALLOWED);
	rec.ports[0] = (struct eg_port_rule){.port = 8080, .proto = EG_PROTO_UDP};
	expect(admit_at(&rec, T0), EG_DENY, EG_REASON_PORT_NOT_ALLOWED);
	rec.nports = 0;
	expect(admit_at(&rec, T0), EG_DENY, EG_REASON_PORT_NOT_ALLOWED);
	/* Among several rules. */
	rec.ports[0] = (struct eg_port_rule){.port = 53, .proto = EG_PROTO_UDP};
	rec.ports[1] = (struct eg_port_rule){.port = 8080, .proto = EG_PROTO_TCP};
	rec.nports = 2;
	expect(admit_at(&rec, T0), EG_ALLOW, EG_REASON_OK);

	/* ServicePort traffic with a token that has no port. */
	setup();
	req.port = 8080;
	req.proto = EG_PROTO_TCP;
	expect(admit_at(&rec, T0), EG_DENY, EG_REASON_PORT_NOT_ALLOWED);
}

/* Permanent denials win over anything the identity comparison would say:
 * they must never turn into a refresh. */
Test(comparator, permanent_denials_never_become_refresh)
{
	struct eg_record other = rec;
	uint8_t raw[EG_CAP_LEN];

	memcpy(other.id.worker, WORKER_B, EG_ID_BYTES);
	other.id.generation = 8;
	req.scope = EG_SCOPE_CONTROL;
	expect(admit_at(&other, T0), EG_DENY, EG_REASON_SCOPE_NOT_ALLOWED);
	expect(admit_at(NULL, T0), EG_DENY, EG_REASON_SCOPE_NOT_ALLOWED);
	req.scope = 0;
	serviceport_cap(8080, EG_PROTO_TCP);
	expect(admit_at(&other, T0), EG_DENY, EG_REASON_PORT_NOT_ALLOWED);
	test_sign(&cap, &key, raw);
	raw[EG_OFF_SIGNATURE] ^= 0x80;
	expect(eg_admit(&adm, raw, sizeof(raw), NULL, T0, &req, NULL), EG_DENY,
	       EG_REASON_BAD_SIGNATURE);
	expect(eg_admit(&adm, raw, sizeof(raw), &other, T0, &req, NULL), EG_DENY,
	       EG_REASON_BAD_SIGNATURE);
}

/* Row 2: time, with the skew allowance, inclusive at both edges. */
Test(comparator, clock_edges)
{
	cap.not_before = T0 + 30;
	cap.expiry = T0 + 120;
	expect(admit_at(&rec, T0 + 120 + 15), EG_ALLOW, EG_REASON_OK);
	expect(admit_at(&rec, T0 + 120 + 16), EG_DENY, EG_REASON_EXPIRED);
	expect(admit_at(&rec, T0 + 30 - 15), EG_ALLOW, EG_REASON_OK);
	expect(admit_at(&rec, T0 + 30 - 16), EG_DENY, EG_REASON_NOT_YET_VALID);
	expect(admit_at(&rec, 0), EG_DENY, EG_REASON_NOT_YET_VALID);
	expect(admit_at(&rec, UINT64_MAX), EG_DENY, EG_REASON_EXPIRED);
	/* Time is judged before identity: an expired token for another worker
	 * must re-authenticate, not refresh. */
	memcpy(rec.id.worker, WORKER_B, EG_ID_BYTES);
	expect(admit_at(&rec, T0 + 136), EG_DENY, EG_REASON_EXPIRED);
	expect(admit_at(NULL, T0 + 136), EG_DENY, EG_REASON_EXPIRED);
}

Test(comparator, check_time_does_not_wrap)
{
	struct eg_capability c = {.not_before = UINT64_MAX - 1, .expiry = UINT64_MAX};

	cr_assert_eq(eg_check_time(&c, UINT64_MAX), EG_REASON_OK);
	cr_assert_eq(eg_check_time(&c, UINT64_MAX - 16), EG_REASON_OK);
	cr_assert_eq(eg_check_time(&c, UINT64_MAX - 17), EG_REASON_NOT_YET_VALID);
	c.not_before = 0;
	c.expiry = 5;
	cr_assert_eq(eg_check_time(&c, 0), EG_REASON_OK);
	cr_assert_eq(eg_check_time(&c, 20), EG_REASON_OK);
	cr_assert_eq(eg_check_time(&c, 21), EG_REASON_EXPIRED);
}

/* Row 3. */
Test(comparator, sandbox_mismatch_denies)
{
	memcpy(rec.id.sandbox, SANDBOX_T, EG_ID_BYTES);
	expect(admit_at(&rec, T0), EG_DENY, EG_REASON_SANDBOX_MISMATCH);
	/* Even when everything else differs too. */
	memcpy(rec.id.worker, WORKER_B, EG_ID_BYTES);
	rec.id.generation = 9;
	rec.retired_below = 9;
	expect(admit_at(&rec, T0), EG_DENY, EG_REASON_SANDBOX_MISMATCH);
}

/* Row 4. */
Test(comparator, other_route_refreshes)
{
	struct eg_record r;

	r = rec;
	memcpy(r.id.worker, WORKER_B, EG_ID_BYTES);
	expect(admit_at(&r, T0), EG_REFRESH_ROUTE, EG_REASON_WORKER_MISMATCH);
	r = rec;
	r.id.generation = 8;
	expect(admit_at(&r, T0), EG_REFRESH_ROUTE, EG_REASON_GENERATION_MISMATCH);
	r = rec;
	r.id.generation = 6; /* the token is ahead of this receiver */
	expect(admit_at(&r, T0), EG_REFRESH_ROUTE, EG_REASON_GENERATION_MISMATCH);
	r = rec;
	r.id.substrate = EG_SUBSTRATE_FC_K8S;
	expect(admit_at(&r, T0), EG_REFRESH_ROUTE, EG_REASON_SUBSTRATE_MISMATCH);

	r = rec;
	r.id.generation = 9;
	r.retired_below = 8;
	expect(admit_at(&r, T0), EG_REFRESH_ROUTE, EG_REASON_GENERATION_RETIRED);
	r.retired_below = 7; /* 7 itself is not below 7 */
	expect(admit_at(&r, T0), EG_REFRESH_ROUTE, EG_REASON_GENERATION_MISMATCH);

	cap.id.substrate = EG_SUBSTRATE_FC_K8S;
	memcpy(cap.id.pod_uid, POD_P, EG_ID_BYTES);
	test_record_for(&cap, &r);
	expect(admit_at(&r, T0), EG_ALLOW, EG_REASON_OK);
	memcpy(r.id.pod_uid, POD_Q, EG_ID_BYTES);
	expect(admit_at(&r, T0), EG_REFRESH_ROUTE, EG_REASON_POD_UID_MISMATCH);
	memset(r.id.pod_uid, 0, EG_ID_BYTES);
	expect(admit_at(&r, T0), EG_REFRESH_ROUTE, EG_REASON_POD_UID_MISMATCH);
}

/* Row 5. */
Test(comparator, activation_change_refreshes_new_opens_only)
{
	rec.id.activation = 2;
	req.open_kind = EG_OPEN_NEW;
	expect(admit_at(&rec, T0), EG_REFRESH_ROUTE, EG_REASON_ACTIVATION_MISMATCH);
	req.open_kind = EG_OPEN_ESTABLISHED;
	expect(admit_at(&rec, T0), EG_ALLOW, EG_REASON_OK);
	/* An established stream does not survive a route change. */
	rec.id.generation = 8;
	expect(admit_at(&rec, T0), EG_REFRESH_ROUTE, EG_REASON_GENERATION_MISMATCH);
}

/* Row 6. */
Test(comparator, no_record_refreshes)
{
	expect(admit_at(NULL, T0), EG_REFRESH_ROUTE, EG_REASON_NO_RECORD);
}

/* A lifecycle handoff inside an unchanged Kubernetes resident keeps the
 * record as it was, so the token keeps working. */
Test(comparator, ownership_handoff_is_not_a_replacement)
{
	cap.id.substrate = EG_SUBSTRATE_FC_K8S;
	memcpy(cap.id.pod_uid, POD_P, EG_ID_BYTES);
	test_record_for(&cap, &rec);
	expect(admit_at(&rec, T0), EG_ALLOW, EG_REASON_OK);
	expect(admit_at(&rec, T0 + 60), EG_ALLOW, EG_REASON_OK);
}

/* docs/design.md §1: S runs as 7 on A, then is restored as 8 on B. */
Test(comparator, worked_example)
{
	struct eg_record on_a, on_b;
	struct eg_capability for7, for8;

	/* The record on A: execution 7. */
	test_cap(&for7, &key);
	test_record_for(&for7, &on_a);
	/* The restore: B installs execution 8 and retires everything older. */
	for8 = for7;
	memcpy(for8.id.worker, WORKER_B, EG_ID_BYTES);
	for8.id.generation = 8;
	memset(for8.token_id, 0x22, EG_ID_BYTES);
	test_record_for(&for8, &on_b);
	on_b.retired_below = 8;

	/* A request selected for 8 reaches 7 on A: refused although the
	 * sandbox is the same and the signature is good. */
	cap = for8;
	expect(admit_at(&on_a, T0), EG_REFRESH_ROUTE, EG_REASON_WORKER_MISMATCH);
	/* Had 8 been restored on A itself, the generation tells them apart. */
	struct eg_record a_same_worker = on_a;

	memcpy(cap.id.worker, WORKER_A, EG_ID_BYTES);
	expect(admit_at(&a_same_worker, T0), EG_REFRESH_ROUTE, EG_REASON_GENERATION_MISMATCH);

	/* A token for 7 after 8 is installed on B: rejected before it expires. */
	cap = for7;
	expect(admit_at(&on_b, T0 + 1), EG_REFRESH_ROUTE, EG_REASON_GENERATION_RETIRED);
	/* And a token for 8 on B is what is allowed. */
	cap = for8;
	expect(admit_at(&on_b, T0 + 1), EG_ALLOW, EG_REASON_OK);

	/* Checking the sandbox alone cannot tell: all three name S. */
	cr_assert_arr_eq(for7.id.sandbox, for8.id.sandbox, EG_ID_BYTES);
}

/* The documented limit: until A learns that 7 was retired, A still runs 7
 * and a token for 7 matches it; the token's lifetime bounds the window. */
Test(comparator, known_limit_until_retirement_reaches_the_receiver)
{
	struct eg_record on_a;

	test_record_for(&cap, &on_a);
	expect(admit_at(&on_a, T0 + 60), EG_ALLOW, EG_REASON_OK);
	on_a.id.generation = 8;
	on_a.retired_below = 8; /* A learns */
	expect(admit_at(&on_a, T0 + 60), EG_REFRESH_ROUTE, EG_REASON_GENERATION_RETIRED);
	on_a.id.generation = 7;
	on_a.retired_below = 0;
	expect(admit_at(&on_a, T0 + 120 + 16), EG_DENY, EG_REASON_EXPIRED); /* or it expires */
}

Test(comparator, reasons_map_to_their_verdicts)
{
	static const struct {
		enum eg_reason r;
		enum eg_verdict v;
		const char *name;
	} table[] = {
	    {EG_REASON_OK, EG_ALLOW, "ok"},
	    {EG_REASON_MALFORMED, EG_DENY, "malformed"},
	    {EG_REASON_UNKNOWN_KEY, EG_DENY, "unknown-key"},
	    {EG_REASON_BAD_SIGNATURE, EG_DENY, "bad-signature"},
	    {EG_REASON_SCOPE_NOT_ALLOWED, EG_DENY, "scope-not-allowed"},
	    {EG_REASON_PORT_NOT_ALLOWED, EG_DENY, "port-not-allowed"},
	    {EG_REASON_EXPIRED, EG_DENY, "expired"},
	    {EG_REASON_NOT_YET_VALID, EG_DENY, "not-yet-valid"},
	    {EG_REASON_SANDBOX_MISMATCH, EG_DENY, "sandbox-mismatch"},
	    {EG_REASON_NO_RECORD, EG_REFRESH_ROUTE, "no-record"},
	    {EG_REASON_WORKER_MISMATCH, EG_REFRESH_ROUTE, "worker-mismatch"},
	    {EG_REASON_SUBSTRATE_MISMATCH, EG_REFRESH_ROUTE, "substrate-mismatch"},
	    {EG_REASON_POD_UID_MISMATCH, EG_REFRESH_ROUTE, "pod-uid-mismatch"},
	    {EG_REASON_GENERATION_MISMATCH, EG_REFRESH_ROUTE, "generation-mismatch"},
	    {EG_REASON_GENERATION_RETIRED, EG_REFRESH_ROUTE, "generation-retired"},
	    {EG_REASON_ACTIVATION_MISMATCH, EG_REFRESH_ROUTE, "activation-mismatch"},
	};

	cr_assert_eq(sizeof(table) / sizeof(table[0]), EG_REASON__COUNT);
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		cr_assert_eq(eg_reason_verdict(table[i].r), table[i].v, "%s", table[i].name);
		cr_assert_str_eq(eg_reason_name(table[i].r), table[i].name);
	}
	cr_assert_eq(eg_reason_verdict(EG_REASON__COUNT), EG_DENY);
	cr_assert_eq(eg_reason_verdict((enum eg_reason)1000), EG_DENY);
	cr_assert_str_eq(eg_verdict_name(EG_ALLOW), "allow");
	cr_assert_str_eq(eg_verdict_name(EG_REFRESH_ROUTE), "refresh-route");
	cr_assert_str_eq(eg_verdict_name(EG_DENY), "deny");
}

Test(comparator, compare_without_request_asks_nothing)
{
	struct eg_decision d;

	d = eg_compare(&cap, &rec, T0, NULL);
	expect(d, EG_ALLOW, EG_REASON_OK);
	rec.id.activation = 5;
	d = eg_compare(&cap, &rec, T0, NULL);
	expect(d, EG_REFRESH_ROUTE, EG_REASON_ACTIVATION_MISMATCH);
}
