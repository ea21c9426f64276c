/* SPDX-License-Identifier: Apache-2.0 */
/* Strict reading of a worker's ack, its signature, and the fence rule
 * (user/fleet/ack.h). libsodium directly: user/fleet/ includes nothing of
 * execgate's but its own headers (HACKING.md, "The layers"). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <sodium.h>
#include "fleet/ack.h"

#define SIG_OPEN     ",\"signature\":\""
#define SIG_OPEN_LEN (sizeof(SIG_OPEN) - 1)
#define CONTEXT_LEN  sizeof(EG_ACK_SIGN_CONTEXT) /* with its NUL */
_Static_assert(EG_ACK_SIG_TAIL_LEN == SIG_OPEN_LEN + EG_ACK_SIG_TEXT_LEN + 2, "tail");

#define MAX_SAFE ((1ull << 53) - 1) /* integers JSON carries exactly */

static int bad(char *err, size_t err_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t err_size, const char *fmt, ...)
{
	va_list ap;

	if (err && err_size) {
		va_start(ap, fmt);
		vsnprintf(err, err_size, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

bool eg_ack_uuid_ok(const char *s)
{
	size_t i;

	if (!s || strlen(s) != EG_ACK_UUID_LEN)
		return false;
	for (i = 0; i < EG_ACK_UUID_LEN; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-'
			 : !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	}
	return strcmp(s, "00000000-0000-0000-0000-000000000000") != 0;
}

const char *eg_ack_state_name(enum eg_ack_state s)
{
	switch (s) {
	case EG_ACK_ACTIVE:
		return "active";
	case EG_ACK_RETIRED:
		return "retired";
	case EG_ACK_ABSENT:
		return "absent";
	case EG_ACK_PENDING:
		return "pending";
	}
	return "?";
}

static int uuid_member(json_t *o, const char *name, char out[EG_ACK_UUID_LEN + 1], char *err,
		       size_t err_size)
{
	const char *s = json_string_value(json_object_get(o, name));

	if (!s || !eg_ack_uuid_ok(s))
		return bad(err, err_size, "ack: %s is not a lowercase UUID", name);
	memcpy(out, s, EG_ACK_UUID_LEN + 1);
	return 0;
}

/* A non-negative integer up to max; null allowed when *is_null is given. */
static int uint_member(json_t *o, const char *name, uint64_t max, uint64_t *out, bool *is_null,
		       char *err, size_t err_size)
{
	json_t *v = json_object_get(o, name);

	*out = 0;
	if (is_null)
		*is_null = json_is_null(v);
	if (is_null && *is_null)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) > max)
		return bad(err, err_size, "ack: %s is not an integer in 0..%llu%s", name,
			   (unsigned long long)max, is_null ? " or null" : "");
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int only_members(json_t *o, const char *const *names, const char *where, char *err,
			size_t err_size)
{
	const char *k;
	json_t *v;
	size_t i, n = 0;

	json_object_foreach(o, k, v)
	{
		for (i = 0; names[i] && strcmp(names[i], k); i++)
			;
		if (!names[i])
			return bad(err, err_size, "ack: unknown member '%.40s' in %s", k, where);
		n++;
	}
	for (i = 0; names[i]; i++)
		if (!json_object_get(o, names[i]))
			return bad(err, err_size, "ack: missing %s in %s", names[i], where);
	(void)n;
	return 0;
}

int eg_ack_parse(const char *text, size_t len, struct eg_ack *a, char *err, size_t err_size)
{
	static const char *const top[] = {
	    "schema_version", "worker",	    "sandbox", "selection", "state",
	    "generation",     "activation", "epoch",   "mode",	    "revision",
	    "acked_at",	      "signature",  NULL};
	static const char *const selm[] = {"worker", "generation", "activation", "revision", NULL};
	json_error_t jerr;
	json_t *j, *sel;
	const char *state, *mode, *sig;
	uint64_t v;
	bool n_gen, n_act, n_epoch;
	int rc;

	memset(a, 0, sizeof(*a));
	if (len > EG_ACK_MAX_LEN)
		return bad(err, err_size, "ack: longer than %d bytes", EG_ACK_MAX_LEN);
	if (memchr(text, '\n', len) || memchr(text, '\0', len))
		return bad(err, err_size, "ack: not one line");
	/* The signature is the last member, written exactly so: what it
	 * signs is everything before it (eg_ack_verify). */
	if (len < EG_ACK_SIG_TAIL_LEN + 2 ||
	    memcmp(text + len - EG_ACK_SIG_TAIL_LEN, SIG_OPEN, SIG_OPEN_LEN) ||
	    memcmp(text + len - 2, "\"}", 2))
		return bad(err, err_size,
			   "ack: does not end with the signature member (,\"signature\":\"%d "
			   "characters\"})",
			   EG_ACK_SIG_TEXT_LEN);
	j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(j)) {
		json_decref(j);
		return bad(err, err_size, "ack: not a JSON object (%s)",
			   j ? "other type" : jerr.text);
	}
	rc = only_members(j, top, "the ack", err, err_size);
	if (rc)
		goto out;
	rc = uint_member(j, "schema_version", 255, &v, NULL, err, err_size);
	if (!rc && v != EG_ACK_SCHEMA_VERSION)
		rc = bad(err, err_size, "ack: schema_version %llu, want %d", (unsigned long long)v,
			 EG_ACK_SCHEMA_VERSION);
	if (!rc)
		rc = uuid_member(j, "worker", a->worker, err, err_size);
	if (!rc)
		rc = uuid_member(j, "sandbox", a->sandbox, err, err_size);
	if (rc)
		goto out;
	sel = json_object_get(j, "selection");
	if (!json_is_object(sel)) {
		rc = bad(err, err_size, "ack: selection is not an object");
		goto out;
	}
	rc = only_members(sel, selm, "selection", err, err_size);
	if (!rc)
		rc = uuid_member(sel, "worker", a->selection.worker, err, err_size);
	if (!rc)
		rc = uint_member(sel, "generation", MAX_SAFE, &a->selection.generation, NULL, err,
				 err_size);
	if (!rc)
		rc = uint_member(sel, "activation", UINT32_MAX, &v, NULL, err, err_size);
	a->selection.activation = (uint32_t)v;
	if (!rc)
		rc = uint_member(sel, "revision", MAX_SAFE, &a->selection.revision, NULL, err,
				 err_size);
	if (rc)
		goto out;
	state = json_string_value(json_object_get(j, "state"));
	if (!state) {
		rc = bad(err, err_size, "ack: state is not a string");
		goto out;
	}
	if (!strcmp(state, "active"))
		a->state = EG_ACK_ACTIVE;
	else if (!strcmp(state, "retired"))
		a->state = EG_ACK_RETIRED;
	else if (!strcmp(state, "absent"))
		a->state = EG_ACK_ABSENT;
	else if (!strcmp(state, "pending"))
		a->state = EG_ACK_PENDING;
	else {
		rc = bad(err, err_size,
			 "ack: state '%.20s' is not active, retired, absent or pending", state);
		goto out;
	}
	rc = uint_member(j, "generation", MAX_SAFE, &a->generation, &n_gen, err, err_size);
	if (!rc)
		rc = uint_member(j, "activation", UINT32_MAX, &v, &n_act, err, err_size);
	a->activation = (uint32_t)v;
	if (!rc)
		rc = uint_member(j, "epoch", UINT64_MAX >> 11, &a->epoch, &n_epoch, err, err_size);
	if (!rc)
		rc = uint_member(j, "revision", MAX_SAFE, &a->revision, NULL, err, err_size);
	if (!rc)
		rc = uint_member(j, "acked_at", MAX_SAFE, &a->acked_at, NULL, err, err_size);
	if (rc)
		goto out;
	mode = json_string_value(json_object_get(j, "mode"));
	if (mode && !strcmp(mode, "enforce"))
		a->mode = EG_ACK_ENFORCE;
	else if (mode && !strcmp(mode, "audit"))
		a->mode = EG_ACK_AUDIT;
	else {
		rc = bad(err, err_size, "ack: mode is not \"enforce\" or \"audit\"");
		goto out;
	}
	sig = json_string_value(json_object_get(j, "signature"));
	if (!sig || strlen(sig) != EG_ACK_SIG_TEXT_LEN) {
		rc = bad(err, err_size, "ack: signature is not a string of %d characters",
			 EG_ACK_SIG_TEXT_LEN);
		goto out;
	}
	if (n_gen != n_act || n_gen != n_epoch) {
		rc = bad(err, err_size,
			 "ack: generation, activation and epoch are not all null or "
			 "all numbers");
		goto out;
	}
	a->has_record = !n_gen;
	if ((a->state == EG_ACK_ACTIVE || a->state == EG_ACK_RETIRED) && !a->has_record)
		rc = bad(err, err_size, "ack: state %s without generation", state);
	else if (a->state == EG_ACK_ABSENT && a->has_record)
		rc = bad(err, err_size, "ack: state absent with a generation");
out:
	json_decref(j);
	if (rc)
		memset(a, 0, sizeof(*a));
	return rc;
}

bool eg_ack_fenced_state(const struct eg_ack *a, const char *worker, const char *sandbox,
			 uint64_t generation)
{
	if (strcmp(a->worker, worker) || strcmp(a->sandbox, sandbox))
		return false;
	if (a->selection.generation < generation)
		return false;
	switch (a->state) {
	case EG_ACK_RETIRED:
	case EG_ACK_ABSENT:
	case EG_ACK_PENDING:
		return true;
	case EG_ACK_ACTIVE:
		return a->has_record && a->generation >= generation;
	}
	return false;
}

bool eg_ack_fenced(const struct eg_ack *a, const char *worker, const char *sandbox,
		   uint64_t generation)
{
	return a->mode == EG_ACK_ENFORCE && eg_ack_fenced_state(a, worker, sandbox, generation);
}

const char *eg_ack_mode_name(enum eg_ack_mode m)
{
	return m == EG_ACK_ENFORCE ? "enforce" : m == EG_ACK_AUDIT ? "audit" : "?";
}

const char *eg_ack_sig_err_name(enum eg_ack_sig_err e)
{
	static const char *const names[EG_ACK_SIG__COUNT] = {
	    [EG_ACK_SIG_OK] = "ok",
	    [EG_ACK_SIG_UNSIGNED] = "unsigned",
	    [EG_ACK_SIG_BAD_TEXT] = "bad-signature-text",
	    [EG_ACK_SIG_BAD_SIGNATURE] = "bad-signature",
	};

	return (unsigned)e < EG_ACK_SIG__COUNT ? names[e] : "unknown";
}

/* "execgate ack v1\0" || body || "}": body is the unsigned ack but its
 * closing brace. */
static uint8_t *message(const char *body, size_t body_len, size_t *len)
{
	uint8_t *m = malloc(CONTEXT_LEN + body_len + 1);

	if (!m)
		return NULL;
	memcpy(m, EG_ACK_SIGN_CONTEXT, CONTEXT_LEN);
	memcpy(m + CONTEXT_LEN, body, body_len);
	m[CONTEXT_LEN + body_len] = '}';
	*len = CONTEXT_LEN + body_len + 1;
	return m;
}

int eg_ack_sign(const char *unsigned_ack, size_t len, const uint8_t sk[64], char **out)
{
	uint8_t sig[crypto_sign_BYTES], *m;
	size_t mlen, body_len;
	char *s;

	*out = NULL;
	if (sodium_init() < 0)
		return -EIO;
	if (len < 2 || unsigned_ack[0] != '{' || unsigned_ack[len - 1] != '}' ||
	    len - 1 + EG_ACK_SIG_TAIL_LEN > EG_ACK_MAX_LEN)
		return -EINVAL;
	body_len = len - 1;
	m = message(unsigned_ack, body_len, &mlen);
	s = malloc(body_len + EG_ACK_SIG_TAIL_LEN + 1);
	if (!m || !s) {
		free(m);
		free(s);
		return -ENOMEM;
	}
	crypto_sign_detached(sig, NULL, m, mlen, sk);
	free(m);
	memcpy(s, unsigned_ack, body_len);
	memcpy(s + body_len, SIG_OPEN, SIG_OPEN_LEN);
	sodium_bin2base64(s + body_len + SIG_OPEN_LEN, EG_ACK_SIG_TEXT_LEN + 1, sig, sizeof(sig),
			  sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	memcpy(s + body_len + SIG_OPEN_LEN + EG_ACK_SIG_TEXT_LEN, "\"}", 3);
	*out = s;
	return 0;
}

enum eg_ack_sig_err eg_ack_verify(const char *text, size_t len, const uint8_t pk[32])
{
	char b64[EG_ACK_SIG_TEXT_LEN + 1], again[EG_ACK_SIG_TEXT_LEN + 1];
	uint8_t sig[crypto_sign_BYTES], *m;
	size_t sig_len = 0, mlen, body_len;
	const char *end;
	int rc;

	if (sodium_init() < 0)
		return EG_ACK_SIG_BAD_SIGNATURE; /* fails closed */
	if (len > EG_ACK_MAX_LEN || len < EG_ACK_SIG_TAIL_LEN + 2 ||
	    memcmp(text + len - EG_ACK_SIG_TAIL_LEN, SIG_OPEN, SIG_OPEN_LEN) ||
	    memcmp(text + len - 2, "\"}", 2))
		return EG_ACK_SIG_UNSIGNED;
	body_len = len - EG_ACK_SIG_TAIL_LEN;
	memcpy(b64, text + body_len + SIG_OPEN_LEN, EG_ACK_SIG_TEXT_LEN);
	b64[EG_ACK_SIG_TEXT_LEN] = '\0';
	/* exact base64url: decodes to 64 bytes and encodes back the same */
	if (sodium_base642bin(sig, sizeof(sig), b64, EG_ACK_SIG_TEXT_LEN, NULL, &sig_len, &end,
			      sodium_base64_VARIANT_URLSAFE_NO_PADDING) ||
	    sig_len != sizeof(sig) || end != b64 + EG_ACK_SIG_TEXT_LEN)
		return EG_ACK_SIG_BAD_TEXT;
	sodium_bin2base64(again, sizeof(again), sig, sizeof(sig),
			  sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	if (memcmp(again, b64, EG_ACK_SIG_TEXT_LEN))
		return EG_ACK_SIG_BAD_TEXT;
	m = message(text, body_len, &mlen);
	if (!m)
		return EG_ACK_SIG_BAD_SIGNATURE; /* fails closed */
	rc = crypto_sign_verify_detached(sig, m, mlen, pk);
	free(m);
	return rc ? EG_ACK_SIG_BAD_SIGNATURE : EG_ACK_SIG_OK;
}
