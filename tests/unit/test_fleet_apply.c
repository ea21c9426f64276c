/* SPDX-License-Identifier: Apache-2.0 */
/* The fleet's worker-side rules (core/fleet_apply.h): which selection is
 * newer, when the local record is retired, what the ack says, whether a
 * PUT matches. The fence rule over
 * acks is user/fleet/ack.c's. */
#include <criterion/criterion.h>
#include <string.h>
#include "core/fleet_apply.h"

static const uint8_t self[EG_ID_BYTES] = {0xaa, [15] = 0x0a};
static const uint8_t other[EG_ID_BYTES] = {0xbb, [15] = 0x0b};
static const uint8_t pod[EG_ID_BYTES] = {0x0e, [15] = 0x5b};
static const uint8_t nil[EG_ID_BYTES];

static struct eg_selection sel(const uint8_t *worker, uint64_t g, uint32_t a)
{
	struct eg_selection s = {
	    .version = 1, .id.substrate = 1, .id.generation = g, .id.activation = a};

	memset(s.id.sandbox, 0x5f, sizeof(s.id.sandbox));
	memcpy(s.id.worker, worker, EG_ID_BYTES);
	memcpy(s.id.pod_uid, pod, EG_ID_BYTES);
	return s;
}

static struct eg_fleet_local active(const uint8_t *worker, uint64_t g, uint32_t a)
{
	struct eg_fleet_local l = {
	    .has_record = true, .generation = g, .activation = a, .epoch = 3};

	memcpy(l.worker, worker, EG_ID_BYTES);
	memcpy(l.pod_uid, pod, EG_ID_BYTES);
	return l;
}

Test(fleet_apply, order)
{
	struct eg_selection a = sel(self, 7, 1), b;

	b = sel(self, 7, 1);
	cr_assert_eq(eg_fleet_order(false, NULL, &b), EG_FLEET_NEWER);
	cr_assert_eq(eg_fleet_order(true, &a, &b), EG_FLEET_SAME);
	b.issued_at = 99; /* re-signed later: still the same decision */
	cr_assert_eq(eg_fleet_order(true, &a, &b), EG_FLEET_SAME);
	b = sel(self, 7, 2);
	cr_assert_eq(eg_fleet_order(true, &a, &b), EG_FLEET_NEWER);
	b = sel(other, 8, 0);
	cr_assert_eq(eg_fleet_order(true, &a, &b), EG_FLEET_NEWER);
	b = sel(self, 7, 0);
	cr_assert_eq(eg_fleet_order(true, &a, &b), EG_FLEET_OLDER);
	b = sel(self, 6, 9);
	cr_assert_eq(eg_fleet_order(true, &a, &b), EG_FLEET_OLDER);
	/* an equal (generation, activation) naming someone else is no newer */
	b = sel(other, 7, 1);
	cr_assert_eq(eg_fleet_order(true, &a, &b), EG_FLEET_OLDER);
	b = sel(self, 7, 1);
	memset(b.id.pod_uid, 0, sizeof(b.id.pod_uid));
	cr_assert_eq(eg_fleet_order(true, &a, &b), EG_FLEET_OLDER);
}

Test(fleet_apply, decide)
{
	struct eg_selection s = sel(self, 8, 1);
	struct eg_fleet_local l = {0};

	/* nothing local: nothing to do, whoever is named */
	cr_assert_eq(eg_fleet_decide(self, &s, &l), EG_FLEET_NONE);
	l = active(self, 8, 1);
	cr_assert_eq(eg_fleet_decide(self, &s, &l), EG_FLEET_NONE);
	l.retired = true;
	cr_assert_eq(eg_fleet_decide(self, &s, &l), EG_FLEET_NONE);
	/* another worker named: retire */
	s = sel(other, 8, 1);
	l = active(self, 8, 1);
	cr_assert_eq(eg_fleet_decide(self, &s, &l), EG_FLEET_RETIRE);
	/* this worker, newer generation / activation: retire */
	s = sel(self, 9, 0);
	cr_assert_eq(eg_fleet_decide(self, &s, &l), EG_FLEET_RETIRE);
	s = sel(self, 8, 2);
	cr_assert_eq(eg_fleet_decide(self, &s, &l), EG_FLEET_RETIRE);
	/* a local record the selection does not name (older selection than
	 * a record installed before etcd was on, another pod) is retired too */
	s = sel(self, 7, 0);
	cr_assert_eq(eg_fleet_decide(self, &s, &l), EG_FLEET_RETIRE);
	s = sel(self, 8, 1);
	memset(s.id.pod_uid, 0x11, sizeof(s.id.pod_uid));
	cr_assert_eq(eg_fleet_decide(self, &s, &l), EG_FLEET_RETIRE);
}

Test(fleet_apply, ack_state)
{
	struct eg_selection s = sel(self, 8, 1), o = sel(other, 9, 0);
	struct eg_fleet_local l = {0};

	cr_assert_eq(eg_fleet_ack_state(self, false, NULL, &l), EG_FLEET_ABSENT);
	cr_assert_eq(eg_fleet_ack_state(self, true, &s, &l), EG_FLEET_PENDING);
	cr_assert_eq(eg_fleet_ack_state(self, true, &o, &l), EG_FLEET_ABSENT);
	l = active(self, 8, 1);
	cr_assert_eq(eg_fleet_ack_state(self, true, &s, &l), EG_FLEET_ACTIVE);
	l.retired = true;
	cr_assert_eq(eg_fleet_ack_state(self, true, &s, &l), EG_FLEET_PENDING);
	cr_assert_eq(eg_fleet_ack_state(self, true, &o, &l), EG_FLEET_RETIRED);
	cr_assert_eq(eg_fleet_ack_state(self, false, NULL, &l), EG_FLEET_RETIRED);
	cr_assert_str_eq(eg_fleet_state_name(EG_FLEET_PENDING), "pending");
	cr_assert_str_eq(eg_fleet_state_name(EG_FLEET_ACTIVE), "active");
	cr_assert_str_eq(eg_fleet_state_name(EG_FLEET_RETIRED), "retired");
	cr_assert_str_eq(eg_fleet_state_name(EG_FLEET_ABSENT), "absent");
}

Test(fleet_apply, put_refusal)
{
	struct eg_selection s = sel(self, 8, 1);

	cr_assert_null(eg_fleet_put_refusal(self, true, &s, self, 8, 1, pod));
	cr_assert_not_null(eg_fleet_put_refusal(self, false, NULL, self, 8, 1, pod));
	cr_assert_not_null(eg_fleet_put_refusal(self, true, &s, other, 8, 1, pod));
	cr_assert_not_null(eg_fleet_put_refusal(self, true, &s, self, 7, 1, pod));
	cr_assert_not_null(eg_fleet_put_refusal(self, true, &s, self, 9, 1, pod));
	cr_assert_not_null(eg_fleet_put_refusal(self, true, &s, self, 8, 0, pod));
	cr_assert_not_null(eg_fleet_put_refusal(self, true, &s, self, 8, 1, nil));
	s = sel(other, 8, 1);
	cr_assert_not_null(eg_fleet_put_refusal(self, true, &s, other, 8, 1, pod));
	cr_assert(eg_fleet_matches(self, &(struct eg_selection){0}, self, 0, 0, nil) == false);
}

/* The store cannot order a cut (docs/fleet.md, "Audience"): a v2 counts
 * only when addressed to self, a v1 only when it names self. */
Test(fleet_apply, audience)
{
	struct eg_selection s = sel(other, 9, 0);

	/* v1: naming another worker, copied here, is not acted on */
	cr_assert_eq(eg_fleet_audience(self, &s), EG_FLEET_NO_AUDIENCE);
	s = sel(self, 9, 0);
	cr_assert_eq(eg_fleet_audience(self, &s), EG_FLEET_ADDRESSED);
	/* v2: the audience decides, whoever it names */
	s = sel(other, 9, 0);
	s.version = 2;
	memcpy(s.audience, other, EG_ID_BYTES);
	cr_assert_eq(eg_fleet_audience(self, &s), EG_FLEET_WRONG_AUDIENCE);
	memcpy(s.audience, self, EG_ID_BYTES);
	cr_assert_eq(eg_fleet_audience(self, &s), EG_FLEET_ADDRESSED);
	s = sel(self, 9, 0);
	s.version = 2;
	memcpy(s.audience, other, EG_ID_BYTES);
	cr_assert_eq(eg_fleet_audience(self, &s), EG_FLEET_WRONG_AUDIENCE,
		     "a copy addressed to another worker, even naming self");
	memcpy(s.audience, nil, EG_ID_BYTES);
	cr_assert_eq(eg_fleet_audience(self, &s), EG_FLEET_WRONG_AUDIENCE);
}
