/* SPDX-License-Identifier: Apache-2.0 */
/* Fixtures shared by the unit tests: deterministic keys, tokens built from
 * a template, and the records that match them. */
#ifndef EXECGATE_TESTS_UNIT_HELPERS_H
#define EXECGATE_TESTS_UNIT_HELPERS_H

#include <stddef.h>
#include <stdint.h>
#include <sodium.h>
#include "core/admission.h"
#include "core/capability.h"
#include "core/keyset.h"
#include "core/record.h"

/* A fixed "now" that every template token is issued at. */
#define T0 1767225600ull /* 2026-01-01T00:00:00Z */

struct test_key {
	uint8_t pk[crypto_sign_PUBLICKEYBYTES];
	uint8_t sk[crypto_sign_SECRETKEYBYTES];
	uint8_t kid[EG_KEY_ID_LEN];
};

/* Key number n, from a fixed seed, so failures reproduce. */
void test_key(struct test_key *k, uint8_t n);

/* The worked example's ids: sandbox S, workers A and B. */
extern const uint8_t SANDBOX_S[EG_ID_BYTES], SANDBOX_T[EG_ID_BYTES];
extern const uint8_t WORKER_A[EG_ID_BYTES], WORKER_B[EG_ID_BYTES];
extern const uint8_t POD_P[EG_ID_BYTES], POD_Q[EG_ID_BYTES];

/* Template: sandbox S on worker A, generation 7, activation 1,
 * firecracker-host, scope file.read|exec, issued and valid at T0 for 120 s,
 * signed by k. */
void test_cap(struct eg_capability *cap, const struct test_key *k);
/* Sets key_id from k and signs; raw gets the 184 token bytes. */
void test_sign(struct eg_capability *cap, const struct test_key *k, uint8_t raw[EG_CAP_LEN]);
/* The record of a receiver running exactly what cap names. */
void test_record_for(const struct eg_capability *cap, struct eg_record *rec);

/* tests/vectors (from the project root), or $EXECGATE_VECTORS_DIR. */
const char *test_vectors_dir(void);
/* Hex into a fresh buffer (criterion asserts on bad hex); *len set. */
uint8_t *test_unhex(const char *hex, size_t *len);

/* A temporary directory removed (with its files) by test_rmtree. */
char *test_tmpdir(void);
void test_rmtree(const char *dir);
void test_write_file(const char *dir, const char *name, const char *content);

#endif
