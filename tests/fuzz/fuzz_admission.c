/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer harness over decode (binary and text) + verify + compare.
 *
 * Input: a token (the first 184 bytes) followed by optional control bytes
 * that choose how the receiver's record, the clock and the request differ
 * from what the token names. Besides "no crash, no sanitizer report" it
 * checks invariants that must hold for every input:
 *   - a verdict and its reason agree; only a decoded, verified token is
 *     ever allowed;
 *   - decoding is canonical: an accepted byte string re-encodes to itself,
 *     an accepted text is exactly the text form of its bytes;
 *   - the cache never changes a decision;
 *   - a body re-signed with the harness key gets exactly eg_compare's
 *     answer (so the comparator is explored with fuzzer-chosen fields even
 *     though the fuzzer cannot forge signatures). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include "core/admission.h"
#include "core/capability.h"
#include "core/comparator.h"
#include "fuzz.h"

/* Public on purpose: the seed corpus is signed with it. */
static const uint8_t fuzz_seed[crypto_sign_SEEDBYTES] = "execgate fuzz key, public: test";

static struct eg_keyset keys;
static uint8_t pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
static uint8_t kid[EG_KEY_ID_LEN];
static struct eg_token_cache *cache;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init(argc, argv);
	crypto_sign_seed_keypair(pk, sk, fuzz_seed);
	eg_keyset_init(&keys);
	CHECK(eg_keyset_add(&keys, pk, kid) == EG_KEY_OK);
	cache = eg_token_cache_new(64);
	CHECK(cache != NULL);
	return 0;
}

struct ctl {
	const uint8_t *p;
	size_t n;
};

static uint8_t ctl_byte(const struct ctl *c, size_t i)
{
	return i < c->n ? c->p[i] : 0;
}

/* The receiver's view, derived from the token and the control bytes. */
static const struct eg_record *make_world(const struct eg_capability *cap, bool decoded,
					  const struct ctl *c, struct eg_record *rec, uint64_t *now,
					  struct eg_request *req)
{
	uint8_t f = ctl_byte(c, 0), p = ctl_byte(c, 1);

	memset(rec, 0, sizeof(*rec));
	memset(req, 0, sizeof(*req));
	if (decoded) {
		rec->id = cap->id;
		if (cap->port && !(p & 1)) {
			rec->ports[0].port = cap->port;
			rec->ports[0].proto = cap->proto;
			rec->nports = 1;
		}
	}
	if (f & 0x01)
		rec->id.sandbox[0] ^= 1;
	if (f & 0x02)
		rec->id.worker[15] ^= 1;
	if (f & 0x04)
		rec->id.substrate ^= 3;
	if (f & 0x08)
		rec->id.pod_uid[3] ^= 0x80;
	if (f & 0x10)
		rec->id.generation++;
	if (f & 0x20)
		rec->id.activation++;
	if (f & 0x40)
		rec->retired_below = rec->id.generation + (p >> 4);
	if (p & 2) {
		rec->ports[rec->nports].port = (uint16_t)(ctl_byte(c, 2) << 8 | ctl_byte(c, 3));
		rec->ports[rec->nports].proto = (p & 4) ? EG_PROTO_UDP : EG_PROTO_TCP;
		rec->nports++;
	}

	/* Around not-before or expiry, so that the skew edges are hit often. */
	uint64_t base = (ctl_byte(c, 4) & 1) ? cap->expiry : cap->not_before;

	*now = base + (uint64_t)(int64_t)(int8_t)ctl_byte(c, 5);
	req->scope = ctl_byte(c, 6);
	if (ctl_byte(c, 7) & 1) {
		req->port = (ctl_byte(c, 7) & 2) ? cap->port : (uint16_t)(ctl_byte(c, 8) << 8);
		req->proto = (ctl_byte(c, 7) & 4) ? EG_PROTO_UDP : cap->proto;
	}
	req->open_kind = (ctl_byte(c, 7) & 8) ? EG_OPEN_ESTABLISHED : EG_OPEN_NEW;
	return (f & 0x80) ? NULL : rec;
}

static bool same(struct eg_decision a, struct eg_decision b)
{
	return a.verdict == b.verdict && a.reason == b.reason && a.decode_err == b.decode_err;
}

static void check_decision(struct eg_decision d)
{
	CHECK((unsigned)d.reason < EG_REASON__COUNT);
	CHECK(d.verdict == eg_reason_verdict(d.reason));
	CHECK((d.reason == EG_REASON_MALFORMED) == (d.decode_err != EG_DECODE_OK));
	CHECK(eg_reason_name(d.reason) != NULL);
	CHECK(eg_decode_err_name(d.decode_err) != NULL);
}

/* Admit with and without the cache (twice, so the second is a hit when the
 * first was cached) and demand one answer. */
static struct eg_decision admit_all(const uint8_t *raw, size_t len, const struct eg_record *rec,
				    uint64_t now, const struct eg_request *req)
{
	struct eg_admission plain = {.keys = &keys}, cached = {.keys = &keys, .cache = cache};
	struct eg_capability cap;
	struct eg_decision d = eg_admit(&plain, raw, len, rec, now, req, &cap);

	check_decision(d);
	CHECK(same(d, eg_admit(&cached, raw, len, rec, now, req, NULL)));
	CHECK(same(d, eg_admit(&cached, raw, len, rec, now, req, NULL)));
	if (d.verdict == EG_ALLOW) {
		uint8_t msg[EG_CAP_SIGNED_LEN];

		CHECK(len == EG_CAP_LEN);
		eg_cap_signed_message(raw, msg);
		CHECK(crypto_sign_verify_detached(raw + EG_OFF_SIGNATURE, msg, sizeof(msg), pk) ==
		      0);
		CHECK(same(d, eg_compare(&cap, rec, now, req)));
	}
	return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t tok_len = size < EG_CAP_LEN ? size : EG_CAP_LEN;
	struct ctl c = {.p = data + tok_len, .n = size - tok_len};
	struct eg_capability cap, cap2;
	struct eg_record rec;
	struct eg_request req;
	const struct eg_record *r;
	uint8_t again[EG_CAP_LEN], body[EG_CAP_LEN], msg[EG_CAP_SIGNED_LEN];
	enum eg_decode_err derr;
	struct eg_decision d;
	uint64_t now;

	/* 1. The input as one binary token: anything but 184 bytes is
	 * malformed, whatever it holds. */
	derr = eg_cap_decode(data, size, &cap);
	CHECK((size < EG_CAP_LEN) == (derr == EG_DECODE_TRUNCATED));
	CHECK((size > EG_CAP_LEN) == (derr == EG_DECODE_TRAILING));
	if (derr == EG_DECODE_OK) {
		eg_cap_encode(&cap, again);
		CHECK(memcmp(again, data, EG_CAP_LEN) == 0);
	}

	/* 2. The token part against a world shaped by the control bytes. */
	derr = eg_cap_decode(data, tok_len, &cap);
	r = make_world(&cap, derr == EG_DECODE_OK, &c, &rec, &now, &req);
	d = admit_all(data, tok_len, r, now, &req);
	if (size != tok_len)
		CHECK(admit_all(data, size, r, now, &req).decode_err == EG_DECODE_TRAILING);

	/* 3. The same body, re-signed with the harness key. */
	memset(body, 0, sizeof(body));
	memcpy(body, data, tok_len < EG_CAP_BODY_LEN ? tok_len : EG_CAP_BODY_LEN);
	memcpy(body + EG_OFF_KEY_ID, kid, EG_KEY_ID_LEN);
	eg_cap_signed_message(body, msg);
	crypto_sign_detached(body + EG_OFF_SIGNATURE, NULL, msg, sizeof(msg), sk);
	derr = eg_cap_decode(body, sizeof(body), &cap2);
	r = make_world(&cap2, derr == EG_DECODE_OK, &c, &rec, &now, &req);
	d = admit_all(body, sizeof(body), r, now, &req);
	if (derr != EG_DECODE_OK) {
		CHECK(d.reason == EG_REASON_MALFORMED && d.decode_err == derr);
	} else {
		CHECK(same(d, eg_compare(&cap2, r, now, &req)));
		/* Removing the key kills it at once, cached or not. */
		if (ctl_byte(&c, 9) & 1) {
			struct eg_admission cached = {.keys = &keys, .cache = cache};

			CHECK(eg_keyset_remove(&keys, kid) == EG_KEY_OK);
			d = eg_admit(&cached, body, sizeof(body), r, now, &req, NULL);
			CHECK(d.reason == EG_REASON_UNKNOWN_KEY);
			CHECK(eg_keyset_add(&keys, pk, NULL) == EG_KEY_OK);
		}
	}

	/* 4. The input as text: accepted text is the one spelling of its
	 * bytes. */
	{
		uint8_t raw[EG_CAP_LEN];
		char text[EG_CAP_TEXT_MAX];

		derr = eg_cap_decode_text((const char *)data, size, &cap, raw);
		if (derr == EG_DECODE_OK) {
			CHECK(eg_cap_to_text(raw, text) == size);
			CHECK(memcmp(text, data, size) == 0);
		}
	}
	if (ctl_byte(&c, 9) & 2)
		eg_token_cache_flush(cache);
	return 0;
}
