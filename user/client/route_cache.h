/* SPDX-License-Identifier: Apache-2.0 */
/* Client-side route cache: what a front end keeps per sandbox to reach its
 * current execution, and the only way a refusal may change it. A client
 * module (user/client/, libexecgate-client.a): the worker never links it.
 * Built on the core's signed verdicts; no I/O, no root. The retry policy is
 * client/retry.h, the replay set client/replay_set.h.
 *
 * An entry is installed by eg_route_cache_put after caller authentication:
 * it holds the route (worker, substrate, generation, activation, pod UID),
 * the authentication expiry, and a route version drawn from one counter per
 * cache, so a version is never reused, not even after eviction (no ABA).
 *
 * After a RefreshRoute, eg_route_cache_on_refresh repairs the entry only on
 * a worker-signed verdict (core/signed_verdict.h) that
 *   - verifies under the node key of the worker it names (eg_node_keys);
 *   - is a refresh-route verdict (a deny never moves a route);
 *   - names the rejected attempt's sandbox, token id and worker;
 *   - is fresh: now - EG_ROUTE_VERDICT_MAX_AGE - EG_CLOCK_SKEW <= issued_at
 *     <= now + EG_CLOCK_SKEW (a verdict answers a request just made; 30 s
 *     covers a slow round trip, 15 s the two clocks);
 *   - was never seen before (the replay set, client/replay_set.h);
 * and then by compare-and-swap: the entry is replaced by the fresh route
 * only while it still is the rejected one (same version), so a late
 * rejection never evicts a newer entry. The replacement keeps the entry's
 * expiry: route repair is not re-authentication.
 *
 * Threads: the route table is split into stripes of buckets, one mutex per
 * stripe; the replay set has its own mutex; the version counter is atomic.
 * Every call may come from any thread. Signature checks run outside locks.
 * The node key set is the caller's and is only read during the call.
 *
 * Memory: everything is allocated by eg_route_cache_new; no call after it
 * allocates. Eviction (4-way buckets keyed by SipHash of the sandbox under a
 * key drawn at creation): a free slot, else an expired entry, else the
 * entry whose authentication expires first, else the oldest. */
#ifndef EXECGATE_CLIENT_ROUTE_CACHE_H
#define EXECGATE_CLIENT_ROUTE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sodium.h>
#include "core/capability.h"

#define EG_ROUTE_VERDICT_MAX_AGE 30 /* seconds, before EG_CLOCK_SKEW */

/* The route identity a front end sends an operation to. */
struct eg_route {
	uint8_t worker[EG_ID_BYTES];
	uint8_t pod_uid[EG_ID_BYTES]; /* all-zero outside Kubernetes */
	uint8_t substrate;	      /* enum eg_substrate */
	uint64_t generation;
	uint32_t activation;
};

struct eg_route_entry {
	uint8_t sandbox[EG_ID_BYTES];
	struct eg_route route;
	uint64_t version; /* >= 1; 0 means "no entry" in outputs */
	uint64_t expiry;  /* authentication expiry, unix seconds: valid while now < expiry */
};

/* What one operation used and was refused on. */
struct eg_route_attempt {
	struct eg_route_entry entry;   /* as eg_route_cache_lookup returned it */
	uint8_t token_id[EG_ID_BYTES]; /* the capability the operation carried */
};

/* Node public keys of the workers, each bound to the worker id it speaks
 * for: a key of worker B cannot vouch for a verdict naming worker A. A
 * worker may have several keys (rotation). */
struct eg_node_key {
	uint8_t worker[EG_ID_BYTES];
	uint8_t kid[EG_KEY_ID_LEN];
	uint8_t pk[crypto_sign_PUBLICKEYBYTES];
};

struct eg_node_keys {
	const struct eg_node_key *keys;
	size_t n;
};

/* Fills k from a worker id and a public key (kid computed). 0, or -EINVAL
 * for a zero worker id or a key eg_key_check refuses. */
int eg_route_node_key_init(struct eg_node_key *k, const uint8_t worker[EG_ID_BYTES],
			   const uint8_t pk[crypto_sign_PUBLICKEYBYTES]);
/* The same from a worker's node.pub (typed key-file form,
 * docs/capability.md). 0, or -EINVAL for a file that does not load. */
int eg_route_node_key_read(struct eg_node_key *k, const uint8_t worker[EG_ID_BYTES],
			   const char *pub_path);

/* Sets a->token_id from the text form of the capability the operation
 * carries. The front end holds no verification key: the token is only
 * decoded, so that a signed verdict can be matched to the attempt it
 * answers. 0, or -EINVAL for text that does not decode. */
int eg_route_attempt_token(struct eg_route_attempt *a, const char *token_text, size_t len);

/* Stable: the names appear in logs. */
enum eg_route_outcome {
	EG_ROUTE_REPAIRED = 0,	    /* entry replaced by the fresh route */
	EG_ROUTE_LOST_RACE,	    /* valid verdict, but a newer entry is there already */
	EG_ROUTE_NO_ENTRY,	    /* valid verdict, no entry any more: authenticate again */
	EG_ROUTE_EXPIRED,	    /* valid verdict, authentication expired: authenticate again */
	EG_ROUTE_IGNORED_UNSIGNED,  /* no signed verdict came with the refusal */
	EG_ROUTE_IGNORED_MALFORMED, /* not a v1 signed verdict (core/signed_verdict.h) */
	EG_ROUTE_IGNORED_UNKNOWN_NODE,	/* no node key with that id for the worker named */
	EG_ROUTE_IGNORED_BAD_SIGNATURE, /* the signature does not verify */
	EG_ROUTE_IGNORED_NOT_REFRESH,	/* a deny: never turns into a refresh */
	EG_ROUTE_IGNORED_MISMATCH,	/* other sandbox, token id or worker than the attempt */
	/* issued_at outside the window, or its replay slot already taken by a
	 * later second (a caller's clock went back) */
	EG_ROUTE_IGNORED_STALE,
	EG_ROUTE_IGNORED_BAD_FRESH,   /* fresh route zero-worker, or older than the rejected one */
	EG_ROUTE_IGNORED_REPLAYED,    /* this verdict was used before */
	EG_ROUTE_IGNORED_REPLAY_FULL, /* replay set full for that second: fail closed */
	EG_ROUTE__COUNT,
};

const char *eg_route_outcome_name(enum eg_route_outcome o); /* "repaired", "lost-race", ... */

struct eg_route_cache;

/* capacity: entries (rounded up to a power of two, at least 4; at most
 * 2^20). per_second: verdicts the replay set remembers per second of
 * issued_at (1..4096). NULL on bad sizes or no memory. libsodium must be
 * initialised (sodium_init). */
struct eg_route_cache *eg_route_cache_new(size_t capacity, size_t per_second);
void eg_route_cache_free(struct eg_route_cache *c);

/* After caller authentication: installs or refreshes the sandbox's entry
 * with expiry (the authentication's). The same route keeps its version (only
 * the expiry moves); another route gets a new version. out (may be NULL)
 * gets the entry. 0, or -EINVAL (zero sandbox or worker, expiry <= now). */
int eg_route_cache_put(struct eg_route_cache *c, const uint8_t sandbox[EG_ID_BYTES],
		       const struct eg_route *route, uint64_t expiry, uint64_t now,
		       struct eg_route_entry *out);
/* 0 and a copy in out; -ENOENT (no entry); -EKEYEXPIRED (authentication
 * expired: authenticate again; out untouched). */
int eg_route_cache_lookup(struct eg_route_cache *c, const uint8_t sandbox[EG_ID_BYTES],
			  uint64_t now, struct eg_route_entry *out);
/* 0 or -ENOENT. */
int eg_route_cache_forget(struct eg_route_cache *c, const uint8_t sandbox[EG_ID_BYTES]);

/* The refusal of `rejected` came with `verdict` (len bytes, NULL/0 when
 * none came); `fresh` is the sandbox's current execution as the control
 * plane's lookup returned it after the refusal. Checks in the order of the
 * outcome enum's IGNORED values, then the compare-and-swap. current (may be
 * NULL) gets the sandbox's entry after the call, whatever the outcome
 * (version 0: none, or expired). */
enum eg_route_outcome eg_route_cache_on_refresh(struct eg_route_cache *c, const uint8_t *verdict,
						size_t len, const struct eg_node_keys *node_keys,
						const struct eg_route_attempt *rejected,
						const struct eg_route *fresh, uint64_t now,
						struct eg_route_entry *current);
/* The same with the verdict as base64url text (the signed_verdict field of
 * execgate admit/check --json). */
enum eg_route_outcome eg_route_cache_on_refresh_text(struct eg_route_cache *c, const char *text,
						     size_t len,
						     const struct eg_node_keys *node_keys,
						     const struct eg_route_attempt *rejected,
						     const struct eg_route *fresh, uint64_t now,
						     struct eg_route_entry *current);

size_t eg_route_cache_size(struct eg_route_cache *c);
size_t eg_route_cache_capacity(const struct eg_route_cache *c);

#endif
