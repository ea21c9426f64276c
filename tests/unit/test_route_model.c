/* SPDX-License-Identifier: Apache-2.0 */
/* Exhaustive interleavings of the route cache (docs/design.md §11): two concurrent
 * refreshes and one late rejection, every atomic step a real call into
 * client/route_cache.c with real signed verdicts, every ordering explored.
 *
 * The world is the worked example. Sandbox S ran as execution 7 on worker
 * A (X7) and was restored on worker B (X8 = gen 8 act 1); the cache still
 * holds X7. During the run the control plane moves S once more, to a new
 * activation attempt on B (X9 = gen 8 act 2): step M.
 *   R1  an idempotent read:    lookup, send, [refresh, send]...
 *   R2  an at-most-once write: lookup, send, [refresh, send]...
 *   L   a late rejection: a write sent on X7 before the run, whose signed
 *       refusal from A and whose fresh route (X8, looked up back then)
 *       arrive only now: refresh, send, [refresh, send]...
 *   M   the control plane installs X9 on B (one step).
 * send: the worker the entry names judges it against what it runs: a match
 * is allowed (the operation ends there, on that route); anything else is a
 * refresh-route verdict signed with that worker's node key, and the fresh
 * route is the control plane's current execution at that moment.
 * refresh: eg_route_cache_on_refresh, then eg_route_retry_action decides.
 *
 * Invariants after every step: the entry exists and its expiry never moved;
 * its version and its (generation, activation) never go down; a refresh
 * whose attempt is not the current entry changes nothing (a late rejection
 * never evicts a newer entry); a repair installs exactly the fresh route.
 * At the end: every operation was allowed, on a route its worker runs,
 * within EG_ROUTE_MAX_RETRIES retries, and the entry's version is the
 * highest ever installed.
 *
 * A second run replaces the compare-and-swap by what a cache without it
 * would do (install the fresh route whenever the verdict is valid) and
 * must see invariants fail: the checker is not vacuous. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include "client/retry.h"
#include "client/route_cache.h"
#include "core/signed_verdict.h"
#include "helpers.h"

#define NOW	(T0 + 1)
#define EXPIRY	(T0 + 600)
#define NACTORS 4
#define MAXSTEP 32

enum actor { R1, R2, L, M };
enum pc { PC_LOOKUP, PC_SEND, PC_REFRESH, PC_DONE };

static const struct eg_route X7 = {
    .substrate = EG_SUBSTRATE_FC_HOST, .generation = 7, .activation = 1};
static const struct eg_route X8 = {
    .substrate = EG_SUBSTRATE_FC_HOST, .generation = 8, .activation = 1};
static const struct eg_route X9 = {
    .substrate = EG_SUBSTRATE_FC_HOST, .generation = 8, .activation = 2};

struct op {
	enum pc pc;
	enum eg_op_kind kind;
	unsigned retries, attempt;
	bool ok;		    /* ended allowed */
	struct eg_route_attempt at; /* the attempt in flight */
	struct eg_route fresh;	    /* what the control plane said after the refusal */
	uint8_t verdict[EG_SV_LEN]; /* the refusal */
	struct eg_route_entry used; /* the entry it ended on */
};

struct world {
	struct eg_route_cache *cache;
	struct eg_route truth;	/* the control plane's current execution */
	struct eg_route runs_b; /* what worker B runs (A runs nothing for S) */
	struct op op[3];
	bool moved;
	uint64_t max_version;	    /* highest version ever installed */
	struct eg_route_entry last; /* entry after the previous step */
	bool naive;		    /* the cache without compare-and-swap */
	bool move;		    /* whether step M is part of the run */
	unsigned park_after;	    /* retries an operation interleaves; the rest is run whole */
	unsigned violations;
	unsigned late_lost, late_repaired, lost_races;
};

static struct test_key key_a, key_b;
static struct eg_node_key node_key[2];
static const struct eg_node_keys NODE_KEYS = {node_key, 2};

static struct eg_route route_on(struct eg_route r, const uint8_t worker[EG_ID_BYTES])
{
	memcpy(r.worker, worker, EG_ID_BYTES);
	return r;
}

static bool same_route(const struct eg_route *a, const struct eg_route *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

static void setup_keys(void)
{
	test_key(&key_a, 20);
	test_key(&key_b, 21);
	cr_assert_eq(eg_route_node_key_init(&node_key[0], WORKER_A, key_a.pk), 0);
	cr_assert_eq(eg_route_node_key_init(&node_key[1], WORKER_B, key_b.pk), 0);
}

/* The worker named by r judges it; true: allowed. Otherwise out gets the
 * refusal the worker signs. */
static bool worker_send(const struct world *w, const struct eg_route *r,
			const uint8_t token[EG_ID_BYTES], uint64_t issued_at,
			uint8_t out[EG_SV_LEN])
{
	bool on_b = memcmp(r->worker, WORKER_B, EG_ID_BYTES) == 0;
	struct eg_signed_verdict v;

	if (on_b && same_route(r, &w->runs_b))
		return true;
	memset(&v, 0, sizeof(v));
	v.version = EG_SV_VERSION;
	v.verdict = EG_REFRESH_ROUTE;
	memcpy(v.node_key_id, on_b ? key_b.kid : key_a.kid, EG_KEY_ID_LEN);
	memcpy(v.token_id, token, EG_ID_BYTES);
	memcpy(v.sandbox, SANDBOX_S, EG_ID_BYTES);
	memcpy(v.worker, r->worker, EG_ID_BYTES);
	v.issued_at = issued_at;
	if (on_b) {
		v.reason = r->generation != w->runs_b.generation ? EG_REASON_GENERATION_MISMATCH
								 : EG_REASON_ACTIVATION_MISMATCH;
		v.has_record = true;
		v.generation = w->runs_b.generation;
		v.activation = w->runs_b.activation;
	} else {
		v.reason = EG_REASON_NO_RECORD;
	}
	eg_sv_sign(&v, on_b ? key_b.sk : key_a.sk, out);
	return false;
}

static void token_of(uint8_t token[EG_ID_BYTES], int op, unsigned attempt)
{
	memset(token, 0x5a, EG_ID_BYTES);
	token[0] = (uint8_t)(0x70 + op);
	token[1] = (uint8_t)attempt;
}

#define CHECK(w, cond, ...)                                                                        \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			if (!(w)->naive)                                                           \
				cr_assert_fail(__VA_ARGS__);                                       \
			(w)->violations++;                                                         \
		}                                                                                  \
	} while (0)

struct config {
	bool naive, move;
	unsigned park_after;
};

static void world_init(struct world *w, const struct config *cfg)
{
	struct eg_route_entry e;
	struct eg_route x7;

	memset(w, 0, sizeof(*w));
	w->naive = cfg->naive;
	w->move = cfg->move;
	w->park_after = cfg->park_after;
	w->cache = eg_route_cache_new(16, 16);
	cr_assert_not_null(w->cache);
	w->truth = route_on(X8, WORKER_B);
	w->runs_b = w->truth;
	x7 = route_on(X7, WORKER_A);
	cr_assert_eq(eg_route_cache_put(w->cache, SANDBOX_S, &x7, EXPIRY, NOW, &e), 0);
	w->last = e;
	w->max_version = e.version;
	w->op[R1].kind = EG_OP_IDEMPOTENT;
	w->op[R2].kind = EG_OP_AT_MOST_ONCE;
	w->op[L].kind = EG_OP_AT_MOST_ONCE;
	/* L was sent on X7 before the run; A refused it 20 s ago, and the
	 * front end looked up X8 back then. */
	w->op[L].at.entry = e;
	token_of(w->op[L].at.token_id, L, 0);
	cr_assert_eq(worker_send(w, &e.route, w->op[L].at.token_id, NOW - 20, w->op[L].verdict),
		     false);
	w->op[L].fresh = route_on(X8, WORKER_B);
	w->op[L].pc = PC_REFRESH;
}

/* Choices 0..NACTORS-1 are single steps; FINISH + a runs operation a to
 * its end in one go, once no single step is left (every operation parked
 * or done, M done). */
#define FINISH	 NACTORS
#define NCHOICES (2 * NACTORS)

static bool parked(const struct world *w, const struct op *o)
{
	return o->pc == PC_SEND && o->retries >= w->park_after;
}

static int choices_of(const struct world *w, int out[NCHOICES])
{
	int n = 0;

	for (int a = R1; a <= L; a++)
		if (w->op[a].pc != PC_DONE && !parked(w, &w->op[a]))
			out[n++] = a;
	if (w->move && !w->moved)
		out[n++] = M;
	if (n > 0)
		return n;
	for (int a = R1; a <= L; a++)
		if (w->op[a].pc != PC_DONE)
			out[n++] = FINISH + a;
	return n;
}

static void check_entry(struct world *w)
{
	struct eg_route_entry e;

	CHECK(w, eg_route_cache_lookup(w->cache, SANDBOX_S, NOW, &e) == 0, "entry gone");
	CHECK(w, e.expiry == EXPIRY, "expiry moved to %llu", (unsigned long long)e.expiry);
	CHECK(w, e.version >= w->last.version, "version went down");
	CHECK(w,
	      e.route.generation > w->last.route.generation ||
		  (e.route.generation == w->last.route.generation &&
		   e.route.activation >= w->last.route.activation),
	      "route went back from %llu.%u to %llu.%u",
	      (unsigned long long)w->last.route.generation, w->last.route.activation,
	      (unsigned long long)e.route.generation, e.route.activation);
	if (e.version > w->max_version)
		w->max_version = e.version;
	w->last = e;
}

static void step_refresh(struct world *w, int a)
{
	struct op *o = &w->op[a];
	struct eg_route_entry before = w->last, cur;
	enum eg_route_outcome out;
	enum eg_retry_action act;
	bool late = o->at.entry.version != before.version;

	out = eg_route_cache_on_refresh(w->cache, o->verdict, sizeof(o->verdict), &NODE_KEYS,
					&o->at, &o->fresh, NOW, &cur);
	if (w->naive && out == EG_ROUTE_LOST_RACE)
		cr_assert_eq(eg_route_cache_put(w->cache, SANDBOX_S, &o->fresh, EXPIRY, NOW, &cur),
			     0);
	if (late) {
		CHECK(w, out == EG_ROUTE_LOST_RACE, "late refresh of op %d: %s", a,
		      eg_route_outcome_name(out));
		CHECK(w, memcmp(&cur, &before, sizeof(cur)) == 0, "late refresh evicted the entry");
		w->lost_races++;
		if (a == L && o->attempt == 0)
			w->late_lost++;
	} else {
		CHECK(w, out == EG_ROUTE_REPAIRED, "refresh of op %d: %s", a,
		      eg_route_outcome_name(out));
		CHECK(w, same_route(&cur.route, &o->fresh) && cur.version > before.version,
		      "repair did not install the fresh route");
		if (a == L && o->attempt == 0)
			w->late_repaired++;
	}
	act = eg_route_retry_action(o->kind, out, o->retries, cur.version != o->at.entry.version);
	CHECK(w, act == EG_RETRY_CURRENT, "op %d after %s: %s", a, eg_route_outcome_name(out),
	      eg_retry_action_name(act));
	if (act != EG_RETRY_CURRENT) {
		o->pc = PC_DONE;
		return;
	}
	/* A regenerated attempt: the current entry, a new capability. */
	o->retries++;
	o->attempt++;
	o->at.entry = cur;
	token_of(o->at.token_id, a, o->attempt);
	o->pc = PC_SEND;
}

static void step(struct world *w, int a)
{
	struct op *o;

	if (a >= FINISH) {
		for (int n = 0; w->op[a - FINISH].pc != PC_DONE; n++) {
			cr_assert_lt(n, 4 * EG_ROUTE_MAX_RETRIES + 4, "op %d never ends",
				     a - FINISH);
			step(w, a - FINISH);
		}
		return;
	}
	o = &w->op[a];
	if (a == M) {
		w->truth = route_on(X9, WORKER_B);
		w->runs_b = w->truth;
		w->moved = true;
	} else if (o->pc == PC_LOOKUP) {
		CHECK(w, eg_route_cache_lookup(w->cache, SANDBOX_S, NOW, &o->at.entry) == 0,
		      "lookup");
		token_of(o->at.token_id, a, o->attempt);
		o->pc = PC_SEND;
	} else if (o->pc == PC_SEND) {
		if (worker_send(w, &o->at.entry.route, o->at.token_id, NOW, o->verdict)) {
			o->ok = true;
			o->used = o->at.entry;
			o->pc = PC_DONE;
		} else {
			o->fresh = w->truth;
			o->pc = PC_REFRESH;
		}
	} else {
		step_refresh(w, a);
	}
	check_entry(w);
}

static void check_end(struct world *w)
{
	for (int a = R1; a <= L; a++) {
		CHECK(w, w->op[a].ok, "op %d ended without a route it may use", a);
		CHECK(w, w->op[a].retries <= EG_ROUTE_MAX_RETRIES, "op %d: %u retries", a,
		      w->op[a].retries);
	}
	CHECK(w, w->last.version == w->max_version, "final entry older than one installed");
}

struct explorer {
	struct config cfg;
	int sched[MAXSTEP];
	unsigned long leaves, bad_leaves, late_lost, late_repaired, lost_races, max_depth;
};

static void rebuild(struct explorer *x, struct world *w, int depth)
{
	eg_route_cache_free(w->cache);
	world_init(w, &x->cfg);
	for (int i = 0; i < depth; i++)
		step(w, x->sched[i]);
}

/* Depth-first over the choice of the next actor; the world is rebuilt by
 * replaying the schedule whenever a sibling is explored. */
static void explore(struct explorer *x, struct world *w, int depth)
{
	int choices[NCHOICES], n = choices_of(w, choices);

	if (n == 0) {
		unsigned before = w->violations;

		check_end(w);
		x->leaves++;
		x->bad_leaves += w->violations > 0 || before > 0;
		x->late_lost += w->late_lost > 0;
		x->late_repaired += w->late_repaired > 0;
		x->lost_races += w->lost_races;
		if ((unsigned long)depth > x->max_depth)
			x->max_depth = depth;
		return;
	}
	cr_assert_lt(depth, MAXSTEP, "schedule longer than %d steps", MAXSTEP);
	for (int i = 0; i < n; i++) {
		if (i > 0)
			rebuild(x, w, depth);
		x->sched[depth] = choices[i];
		step(w, choices[i]);
		explore(x, w, depth + 1);
	}
}

static void run(struct explorer *x)
{
	struct world w;

	setup_keys();
	world_init(&w, &x->cfg);
	explore(x, &w, 0);
	eg_route_cache_free(w.cache);
}

static void report(const char *what, const struct explorer *x)
{
	printf("route_model: %s: %lu interleavings checked (up to %lu choices): the late "
	       "rejection lost the race in %lu, repaired first in %lu; %lu lost races in all; %lu "
	       "break an invariant\n",
	       what, x->leaves, x->max_depth, x->late_lost, x->late_repaired, x->lost_races,
	       x->bad_leaves);
	fflush(stdout);
}

/* Every ordering of the first refresh of R1 and R2 (lookup, send, refresh),
 * the late rejection's arrival and M; then every order of running the
 * operations' retries to their end. */
Test(route_model, two_refreshes_a_late_rejection_and_a_move)
{
	struct explorer x = {.cfg = {.move = true, .park_after = 1}};

	run(&x);
	report("refreshes + late rejection + move", &x);
	cr_assert_eq(x.bad_leaves, 0);
	cr_assert_gt(x.late_lost, 0, "some interleaving must deliver the rejection late");
	cr_assert_gt(x.late_repaired, 0, "and some early");
	cr_assert_eq(x.late_lost + x.late_repaired, x.leaves, "L refreshed in every one");
}

/* No move, and every step interleaved, retries included. */
Test(route_model, two_refreshes_and_a_late_rejection_all_steps_interleaved)
{
	struct explorer x = {.cfg = {.move = false, .park_after = 1000}};

	run(&x);
	report("refreshes + late rejection, retries interleaved", &x);
	cr_assert_eq(x.bad_leaves, 0);
	cr_assert_gt(x.late_lost, 0);
	cr_assert_gt(x.late_repaired, 0);
}

Test(route_model, without_compare_and_swap_the_invariants_break)
{
	struct explorer x = {.cfg = {.naive = true, .move = true, .park_after = 1}};

	run(&x);
	report("naive cache (no compare-and-swap)", &x);
	cr_assert_gt(x.bad_leaves, 0, "the checker must see the missing compare-and-swap");
}
