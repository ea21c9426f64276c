/* SPDX-License-Identifier: Apache-2.0 */
/* The install rule every writer obeys (core/fleet_gate.h): another worker
 * is refused whether the fleet is on or off, and with the fleet on only
 * the execution the selection in force names installs; the stored
 * selection's line is read strictly. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <criterion/criterion.h>
#include <sodium.h>
#include "core/fleet_gate.h"
#include "core/ids.h"

static const uint8_t self[EG_ID_BYTES] = {0xaa, [15] = 0x0a};
static const uint8_t other[EG_ID_BYTES] = {0xbb, [15] = 0x0b};
static const uint8_t pod[EG_ID_BYTES] = {0x0e, [15] = 0x5b};

static struct eg_selection sel(const uint8_t *worker, uint64_t g, uint32_t a)
{
	struct eg_selection s = {
	    .version = 2, .id.substrate = 1, .id.generation = g, .id.activation = a};

	memset(s.id.sandbox, 0x5f, sizeof(s.id.sandbox));
	memcpy(s.id.worker, worker, EG_ID_BYTES);
	memcpy(s.id.pod_uid, pod, EG_ID_BYTES);
	memcpy(s.audience, self, EG_ID_BYTES);
	return s;
}

Test(fleet_gate, another_worker_is_refused_fleet_on_or_off)
{
	struct eg_selection s = sel(self, 7, 1);
	const char *why = NULL;

	cr_assert_eq(eg_fleet_gate(self, false, false, NULL, other, 7, 1, pod, &why),
		     EG_GATE_WRONG_WORKER);
	cr_assert_str_eq(why, "\"worker\" is not this worker's id");
	/* before not-selected: the selection in force does not matter */
	cr_assert_eq(eg_fleet_gate(self, true, true, &s, other, 7, 1, pod, &why),
		     EG_GATE_WRONG_WORKER);
	/* this worker, fleet off: anything installs */
	cr_assert_eq(eg_fleet_gate(self, false, false, NULL, self, 9, 4, pod, &why), EG_GATE_OK);
	/* no id known and the fleet off: no worker check can be made */
	cr_assert_eq(eg_fleet_gate(NULL, false, false, NULL, other, 7, 1, pod, &why), EG_GATE_OK);
}

Test(fleet_gate, fleet_on_needs_the_selection_in_force)
{
	struct eg_selection s = sel(self, 7, 1), moved = sel(other, 8, 1);
	const char *why = NULL;

	cr_assert_eq(eg_fleet_gate(self, true, true, &s, self, 7, 1, pod, &why), EG_GATE_OK);
	cr_assert_eq(eg_fleet_gate(self, true, false, NULL, self, 7, 1, pod, &why),
		     EG_GATE_NOT_SELECTED);
	cr_assert_str_eq(why, "no signed selection for this sandbox yet");
	cr_assert_eq(eg_fleet_gate(self, true, true, &s, self, 8, 1, pod, &why),
		     EG_GATE_NOT_SELECTED);
	cr_assert_str_eq(why, "\"generation\" is not the selection's");
	cr_assert_eq(eg_fleet_gate(self, true, true, &s, self, 7, 2, pod, &why),
		     EG_GATE_NOT_SELECTED);
	cr_assert_str_eq(why, "\"activation\" is not the selection's");
	cr_assert_eq(eg_fleet_gate(self, true, true, &s, self, 7, 1, other, &why),
		     EG_GATE_NOT_SELECTED);
	cr_assert_str_eq(why, "\"pod_uid\" is not the selection's");
	/* moved away (the fleet retired this worker's execution) */
	cr_assert_eq(eg_fleet_gate(self, true, true, &moved, self, 7, 1, pod, &why),
		     EG_GATE_NOT_SELECTED);
	cr_assert_str_eq(why, "the selection names another worker");
	/* the fleet on and no id known: nothing matches */
	cr_assert_eq(eg_fleet_gate(NULL, true, true, &s, self, 7, 1, pod, &why),
		     EG_GATE_NOT_SELECTED);
}

Test(fleet_gate, stored_line_is_read_strictly)
{
	uint8_t raw[EG_SEL_MAX_LEN], body[EG_SEL_V2_LEN];
	char text[EG_SEL_TEXT_MAX], line[400];
	size_t raw_len = 0;
	long long rev = 0;

	memset(body, 0x11, sizeof(body));
	body[0] = 2;
	eg_sel_to_text(body, sizeof(body), text);
	snprintf(line, sizeof(line), "42 %s\n", text);
	cr_assert_eq(eg_fleet_stored_parse(line, raw, &raw_len, &rev), 0);
	cr_assert_eq(rev, 42);
	cr_assert_eq(raw_len, sizeof(body));
	cr_assert_eq(memcmp(raw, body, sizeof(body)), 0);
	snprintf(line, sizeof(line), "0 %s\n", text);
	cr_assert_eq(eg_fleet_stored_parse(line, raw, &raw_len, &rev), -EINVAL);
	snprintf(line, sizeof(line), "%s\n", text);
	cr_assert_eq(eg_fleet_stored_parse(line, raw, &raw_len, &rev), -EINVAL);
	snprintf(line, sizeof(line), "42 %.100s\n", text);
	cr_assert_eq(eg_fleet_stored_parse(line, raw, &raw_len, &rev), -EINVAL);
	cr_assert_eq(eg_fleet_stored_parse("42 !!!\n", raw, &raw_len, &rev), -EINVAL);
}

/* eg_fleet_gate_check: the rule on the selection stored under a state dir,
 * verified against the caller's keys and addressed to this worker, as the
 * library's install path and the hollow workers both read it. */
static void stored(const char *dir, const struct eg_selection *s,
		   const uint8_t sk[crypto_sign_SECRETKEYBYTES])
{
	uint8_t raw[EG_SEL_MAX_LEN];
	char text[EG_SEL_TEXT_MAX], path[512], u[EG_UUID_TEXT_LEN];
	size_t len = eg_sel_sign(s, sk, raw);
	FILE *f;

	eg_sel_to_text(raw, len, text);
	eg_uuid_format(s->id.sandbox, u);
	snprintf(path, sizeof(path), "%s/%s/%s", dir, EG_FLEET_SELECTIONS_DIR, u);
	f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fprintf(f, "42 %s\n", text);
	fclose(f);
}

Test(fleet_gate, check_reads_the_stored_selection_and_its_audience)
{
	uint8_t pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
	char dir[] = "/tmp/eg-gate-XXXXXX", sub[600], err[4500];
	struct eg_selection s = sel(self, 7, 1);
	struct eg_install_spec spec;
	struct eg_keyset keys;

	cr_assert_eq(sodium_init() >= 0, true);
	crypto_sign_keypair(pk, sk);
	eg_keyset_init(&keys);
	cr_assert_eq(eg_keyset_add(&keys, pk, s.key_id), EG_KEY_OK);
	cr_assert_not_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/fleet", dir);
	cr_assert_eq(mkdir(sub, 0700), 0);
	snprintf(sub, sizeof(sub), "%s/%s", dir, EG_FLEET_SELECTIONS_DIR);
	cr_assert_eq(mkdir(sub, 0700), 0);
	memset(&spec, 0, sizeof(spec));
	memcpy(spec.sandbox, s.id.sandbox, EG_ID_BYTES);
	memcpy(spec.worker, self, EG_ID_BYTES);
	memcpy(spec.pod_uid, pod, EG_ID_BYTES);
	spec.generation = 7;
	spec.activation = 1;

	/* nothing stored: not selected */
	cr_assert_eq(eg_fleet_gate_check(dir, self, true, &keys, &spec, err, sizeof(err)), -ENOMSG);
	cr_assert(strstr(err, "no signed selection"), "%s", err);
	/* the fleet off: this worker installs without one */
	cr_assert_eq(eg_fleet_gate_check(dir, self, false, &keys, &spec, err, sizeof(err)), 0);
	/* stored, signed by a key of the set, addressed here: installs */
	stored(dir, &s, sk);
	cr_assert_eq(eg_fleet_gate_check(dir, self, true, &keys, &spec, err, sizeof(err)), 0, "%s",
		     err);
	/* the same, addressed to another worker: a copy is refused, named */
	memcpy(s.audience, other, EG_ID_BYTES);
	stored(dir, &s, sk);
	cr_assert_eq(eg_fleet_gate_check(dir, self, true, &keys, &spec, err, sizeof(err)), -ENOMSG);
	cr_assert(strstr(err, "not addressed to this worker"), "%s", err);
	/* addressed here, but its key withdrawn: no selection */
	memcpy(s.audience, self, EG_ID_BYTES);
	stored(dir, &s, sk);
	eg_keyset_init(&keys);
	cr_assert_eq(eg_fleet_gate_check(dir, self, true, &keys, &spec, err, sizeof(err)), -ENOMSG);
	cr_assert(strstr(err, "no signed selection"), "%s", err);
	/* another worker named by the install: wrong worker, before anything */
	memcpy(spec.worker, other, EG_ID_BYTES);
	cr_assert_eq(eg_fleet_gate_check(dir, self, true, &keys, &spec, err, sizeof(err)), -EXDEV);
	snprintf(sub, sizeof(sub), "rm -rf %s", dir);
	cr_assert_eq(system(sub), 0);
}
