/* SPDX-License-Identifier: Apache-2.0 */
/* The comparator: the table of docs/capability.md ("Comparator") as code.
 * The order of the checks is part of the contract: permanent denials first,
 * so that a token that could never be honoured is never answered with a
 * refresh. */
#include <stdbool.h>
#include <string.h>
#include "core/comparator.h"

static const char *const reason_names[EG_REASON__COUNT] = {
    [EG_REASON_OK] = "ok",
    [EG_REASON_MALFORMED] = "malformed",
    [EG_REASON_UNKNOWN_KEY] = "unknown-key",
    [EG_REASON_BAD_SIGNATURE] = "bad-signature",
    [EG_REASON_SCOPE_NOT_ALLOWED] = "scope-not-allowed",
    [EG_REASON_PORT_NOT_ALLOWED] = "port-not-allowed",
    [EG_REASON_EXPIRED] = "expired",
    [EG_REASON_NOT_YET_VALID] = "not-yet-valid",
    [EG_REASON_SANDBOX_MISMATCH] = "sandbox-mismatch",
    [EG_REASON_NO_RECORD] = "no-record",
    [EG_REASON_WORKER_MISMATCH] = "worker-mismatch",
    [EG_REASON_SUBSTRATE_MISMATCH] = "substrate-mismatch",
    [EG_REASON_POD_UID_MISMATCH] = "pod-uid-mismatch",
    [EG_REASON_GENERATION_MISMATCH] = "generation-mismatch",
    [EG_REASON_GENERATION_RETIRED] = "generation-retired",
    [EG_REASON_ACTIVATION_MISMATCH] = "activation-mismatch",
};

const char *eg_verdict_name(enum eg_verdict v)
{
	switch (v) {
	case EG_ALLOW:
		return "allow";
	case EG_REFRESH_ROUTE:
		return "refresh-route";
	case EG_DENY:
		return "deny";
	}
	return "unknown";
}

const char *eg_reason_name(enum eg_reason r)
{
	if ((unsigned)r >= EG_REASON__COUNT)
		return "unknown";
	return reason_names[r];
}

enum eg_verdict eg_reason_verdict(enum eg_reason r)
{
	switch (r) {
	case EG_REASON_OK:
		return EG_ALLOW;
	case EG_REASON_NO_RECORD:
	case EG_REASON_WORKER_MISMATCH:
	case EG_REASON_SUBSTRATE_MISMATCH:
	case EG_REASON_POD_UID_MISMATCH:
	case EG_REASON_GENERATION_MISMATCH:
	case EG_REASON_GENERATION_RETIRED:
	case EG_REASON_ACTIVATION_MISMATCH:
		return EG_REFRESH_ROUTE;
	default:
		/* Every other reason, and any value outside the enum, denies. */
		return EG_DENY;
	}
}

enum eg_reason eg_check_time(const struct eg_capability *cap, uint64_t now)
{
	/* Written as differences so that no sum can wrap near UINT64_MAX. */
	if (now > cap->expiry && now - cap->expiry > EG_CLOCK_SKEW)
		return EG_REASON_EXPIRED;
	if (now < cap->not_before && cap->not_before - now > EG_CLOCK_SKEW)
		return EG_REASON_NOT_YET_VALID;
	return EG_REASON_OK;
}

static bool profile_has(const struct eg_record *rec, uint16_t port, uint8_t proto)
{
	for (unsigned i = 0; i < rec->nports && i < EG_RECORD_MAX_PORTS; i++)
		if (rec->ports[i].port == port && rec->ports[i].proto == proto)
			return true;
	return false;
}

static enum eg_reason compare_reason(const struct eg_capability *cap, const struct eg_record *rec,
				     uint64_t now, const struct eg_request *req)
{
	enum eg_reason r;

	r = eg_check_time(cap, now);
	if (r != EG_REASON_OK)
		return r;
	if (req->scope & ~cap->scope)
		return EG_REASON_SCOPE_NOT_ALLOWED;
	if (req->port != 0 && (req->port != cap->port || req->proto != cap->proto))
		return EG_REASON_PORT_NOT_ALLOWED;
	if (cap->port != 0 && rec && !profile_has(rec, cap->port, cap->proto))
		return EG_REASON_PORT_NOT_ALLOWED;
	if (!rec)
		return EG_REASON_NO_RECORD;
	if (memcmp(cap->id.sandbox, rec->id.sandbox, EG_ID_BYTES) != 0)
		return EG_REASON_SANDBOX_MISMATCH;
	/* Before the route fields: on the receiver that replaced it, a retired
	 * generation is the precise answer even though the worker (and the
	 * generation) differ as well. */
	if (cap->id.generation < rec->retired_below)
		return EG_REASON_GENERATION_RETIRED;
	if (memcmp(cap->id.worker, rec->id.worker, EG_ID_BYTES) != 0)
		return EG_REASON_WORKER_MISMATCH;
	if (cap->id.substrate != rec->id.substrate)
		return EG_REASON_SUBSTRATE_MISMATCH;
	if (memcmp(cap->id.pod_uid, rec->id.pod_uid, EG_ID_BYTES) != 0)
		return EG_REASON_POD_UID_MISMATCH;
	if (cap->id.generation != rec->id.generation)
		return EG_REASON_GENERATION_MISMATCH;
	/* Same route and generation: a new activation attempt must not tear
	 * down streams that are already bound, but new opens need it. */
	if (cap->id.activation != rec->id.activation && req->open_kind != EG_OPEN_ESTABLISHED)
		return EG_REASON_ACTIVATION_MISMATCH;
	return EG_REASON_OK;
}

struct eg_decision eg_compare(const struct eg_capability *cap, const struct eg_record *rec,
			      uint64_t now, const struct eg_request *req)
{
	static const struct eg_request any = {0};
	struct eg_decision d = {0};

	d.reason = compare_reason(cap, rec, now, req ? req : &any);
	d.verdict = eg_reason_verdict(d.reason);
	d.decode_err = EG_DECODE_OK;
	return d;
}
