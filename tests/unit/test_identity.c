/* SPDX-License-Identifier: Apache-2.0 */
/* The identity's conversions (core/identity.h): the map's record and the
 * public runtime record hold substrate in 32 bits, the identity in 8; a
 * value that does not fit is refused, never narrowed. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include "abi/abi.h"
#include "core/identity.h"
#include "execgate/execgate.h"
#include "helpers.h"

static void sample(struct eg_identity *id)
{
	memset(id, 0, sizeof(*id));
	memcpy(id->sandbox, SANDBOX_S, EG_ID_BYTES);
	memcpy(id->worker, WORKER_A, EG_ID_BYTES);
	memcpy(id->pod_uid, POD_P, EG_ID_BYTES);
	id->substrate = EG_SUBSTRATE_FC_K8S;
	id->generation = (1ull << 53) - 1;
	id->activation = UINT32_MAX;
}

static void assert_same(const struct eg_identity *a, const struct eg_identity *b)
{
	cr_assert_arr_eq(a->sandbox, b->sandbox, EG_ID_BYTES);
	cr_assert_arr_eq(a->worker, b->worker, EG_ID_BYTES);
	cr_assert_arr_eq(a->pod_uid, b->pod_uid, EG_ID_BYTES);
	cr_assert_eq(a->substrate, b->substrate);
	cr_assert_eq(a->generation, b->generation);
	cr_assert_eq(a->activation, b->activation);
}

Test(identity, exec_round_trip_leaves_the_rest)
{
	struct eg_identity id, back;
	struct eg_exec_record k;
	char err[256] = "";

	sample(&id);
	memset(&k, 0, sizeof(k));
	k.state = EG_RECORD_RETIRED;
	k.epoch = 9;
	eg_identity_to_exec(&k, &id);
	cr_assert_eq(k.substrate, EG_SUBSTRATE_FC_K8S);
	cr_assert_eq(k.state, EG_RECORD_RETIRED);
	cr_assert_eq(k.epoch, 9);
	cr_assert_eq(eg_identity_from_exec(&back, &k, err, sizeof(err)), 0, "%s", err);
	assert_same(&id, &back);
}

/* The map is writable by whoever holds its pin: 0x101 would narrow to 1,
 * firecracker-k8s, and match a capability it never named. */
Test(identity, exec_wide_substrate_refused_not_truncated)
{
	static const uint32_t wide[] = {256, 0x101, 0x102, 0x80000001u, UINT32_MAX};
	struct eg_identity id;
	struct eg_exec_record k;
	char err[256];

	for (size_t i = 0; i < sizeof(wide) / sizeof(wide[0]); i++) {
		sample(&id);
		memset(&k, 0, sizeof(k));
		eg_identity_to_exec(&k, &id);
		k.substrate = wide[i];
		err[0] = '\0';
		cr_assert_eq(eg_identity_from_exec(&id, &k, err, sizeof(err)), -ERANGE,
			     "substrate %u", wide[i]);
		cr_assert_eq(id.substrate, 0, "substrate %u: left %u", wide[i], id.substrate);
		cr_assert_eq(id.generation, 0);
		cr_assert(strstr(err, "5f0c1a2b-3c4d-4e5f-8091-a2b3c4d5e6f7"), "%s", err);
		cr_assert(strstr(err, "eg_records"), "%s", err);
		cr_assert(strstr(err, "refused"), "%s", err);
	}
	/* The widest value that fits is kept as it is (the comparator
	 * refuses it against any capability: none decodes with it). */
	k.substrate = UINT8_MAX;
	cr_assert_eq(eg_identity_from_exec(&id, &k, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(id.substrate, UINT8_MAX);
}

Test(identity, runtime_round_trip_and_refusal)
{
	struct eg_identity id, back;
	struct eg_runtime_record r;
	char err[256] = "";

	sample(&id);
	memset(&r, 0, sizeof(r));
	r.epoch = 4;
	eg_identity_to_runtime(&r, &id);
	cr_assert_eq(r.substrate, EG_SUBSTRATE_FC_K8S);
	cr_assert_eq(r.epoch, 4);
	cr_assert_eq(eg_identity_from_runtime(&back, &r, err, sizeof(err)), 0, "%s", err);
	assert_same(&id, &back);

	r.substrate = 0x100u | EG_SUBSTRATE_FC_HOST;
	cr_assert_eq(eg_identity_from_runtime(&back, &r, err, sizeof(err)), -ERANGE);
	cr_assert_eq(back.substrate, 0);
	cr_assert(strstr(err, "substrate 258"), "%s", err);
	cr_assert(strstr(err, "runtime record"), "%s", err);
}

Test(identity, spec_round_trip)
{
	struct eg_identity id, back;
	struct eg_install_spec s;

	sample(&id);
	memset(&s, 0, sizeof(s));
	s.bridge_pid = 42;
	eg_identity_to_spec(&s, &id);
	cr_assert_eq(s.bridge_pid, 42);
	cr_assert_eq(s.substrate, EG_SUBSTRATE_FC_K8S);
	eg_identity_from_spec(&back, &s);
	assert_same(&id, &back);
}

/* The embedded struct: one assignment carries all six fields. */
Test(identity, embedded_assignment)
{
	struct eg_capability cap;
	struct eg_record rec;
	struct test_key k;

	test_key(&k, 1);
	test_cap(&cap, &k);
	memcpy(cap.id.pod_uid, POD_Q, EG_ID_BYTES);
	memset(&rec, 0, sizeof(rec));
	rec.id = cap.id;
	assert_same(&rec.id, &cap.id);
}
