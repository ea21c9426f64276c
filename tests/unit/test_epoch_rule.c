// SPDX-License-Identifier: Apache-2.0
/* core/epoch_rule.h: one case per row of its table (and the edges of the
 * comparisons), each named by its row. */
#include <stdint.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include "core/epoch_rule.h"

#define G	 8
#define A	 3
#define E	 5 /* the installed epoch */
#define NO_EPOCH UINT64_MAX

/* Criterion hands each case to a fresh process: the name is held in the
 * case, not pointed to. */
struct epoch_case {
	char row[64];
	bool has_record;
	struct eg_epoch_installed installed;
	struct eg_epoch_asked asked;
	enum eg_epoch_outcome want;
	uint64_t want_epoch; /* NO_EPOCH: a refusal leaves it as it was */
};

static const struct epoch_case cases[] = {
    {"1 none: new, epoch 1", false, {0}, {G, A, false}, EG_EPOCH_NEW, 1},
    {"1 none, generation 0: new, epoch 1", false, {0}, {0, 0, true}, EG_EPOCH_NEW, 1},
    {"2 older generation: stale",
     true,
     {G, A, false, E},
     {G - 1, A + 9, true},
     EG_EPOCH_STALE_GENERATION,
     NO_EPOCH},
    {"2 older generation of a retired record: stale",
     true,
     {G, A, true, E},
     {G - 1, A, true},
     EG_EPOCH_STALE_GENERATION,
     NO_EPOCH},
    {"3 newer generation: replaced",
     true,
     {G, A, false, E},
     {G + 1, 0, false},
     EG_EPOCH_REPLACED,
     E + 1},
    {"3 newer generation of a retired record: replaced",
     true,
     {G, A, true, E},
     {G + 1, A, true},
     EG_EPOCH_REPLACED,
     E + 1},
    {"4 older activation: stale",
     true,
     {G, A, false, E},
     {G, A - 1, true},
     EG_EPOCH_STALE_ACTIVATION,
     NO_EPOCH},
    {"4 older activation of a retired record: stale",
     true,
     {G, A, true, E},
     {G, A - 1, true},
     EG_EPOCH_STALE_ACTIVATION,
     NO_EPOCH},
    {"5 retired, same activation: stale",
     true,
     {G, A, true, E},
     {G, A, true},
     EG_EPOCH_STALE_RETIRED,
     NO_EPOCH},
    {"6 retired, newer activation: reactivated",
     true,
     {G, A, true, E},
     {G, A + 1, false},
     EG_EPOCH_REACTIVATED,
     E + 1},
    {"7 active, newer activation: activation, epoch kept",
     true,
     {G, A, false, E},
     {G, A + 1, false},
     EG_EPOCH_ACTIVATION,
     E},
    {"8 active, same activation, same execution: unchanged",
     true,
     {G, A, false, E},
     {G, A, true},
     EG_EPOCH_UNCHANGED,
     E},
    {"9 active, same activation, another execution: refused",
     true,
     {G, A, false, E},
     {G, A, false},
     EG_EPOCH_CHANGED_EXECUTION,
     E},
};

ParameterizedTestParameters(epoch_rule, every_row)
{
	return cr_make_param_array(struct epoch_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(const struct epoch_case *c, epoch_rule, every_row)
{
	uint64_t epoch = NO_EPOCH;
	enum eg_epoch_outcome got =
	    eg_epoch_rule(c->has_record ? &c->installed : NULL, &c->asked, &epoch);

	cr_assert_eq(got, c->want, "row %s: outcome %d, want %d", c->row, got, c->want);
	if (!eg_epoch_refused(got))
		cr_assert_eq(epoch, c->want_epoch, "row %s: epoch %llu, want %llu", c->row,
			     (unsigned long long)epoch, (unsigned long long)c->want_epoch);
}

Test(epoch_rule, refusals_and_moves)
{
	cr_assert(eg_epoch_refused(EG_EPOCH_STALE_GENERATION));
	cr_assert(eg_epoch_refused(EG_EPOCH_STALE_ACTIVATION));
	cr_assert(eg_epoch_refused(EG_EPOCH_STALE_RETIRED));
	cr_assert(eg_epoch_refused(EG_EPOCH_CHANGED_EXECUTION));
	cr_assert(!eg_epoch_refused(EG_EPOCH_NEW));
	cr_assert(!eg_epoch_refused(EG_EPOCH_REPLACED));
	cr_assert(!eg_epoch_refused(EG_EPOCH_REACTIVATED));
	cr_assert(!eg_epoch_refused(EG_EPOCH_ACTIVATION));
	cr_assert(!eg_epoch_refused(EG_EPOCH_UNCHANGED));
	cr_assert(eg_epoch_moves(EG_EPOCH_REPLACED));
	cr_assert(eg_epoch_moves(EG_EPOCH_REACTIVATED));
	cr_assert(!eg_epoch_moves(EG_EPOCH_NEW));
	cr_assert(!eg_epoch_moves(EG_EPOCH_ACTIVATION));
	cr_assert(!eg_epoch_moves(EG_EPOCH_UNCHANGED));
}
