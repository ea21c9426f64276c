/* SPDX-License-Identifier: GPL-2.0-only */
/* The one decision of every connect hook: cgroup connect_unix
 * (cgroup_connect_unix.bpf.c), LSM socket_connect for VSOCK and, on kernels
 * without connect_unix, Unix paths, LSM unix_stream_connect for an inode
 * endpoint reached by another name (lsm.bpf.c), and the inet connect and
 * sendmsg hooks (cgroup_inet.bpf.c). A hook turns its arguments into an
 * endpoint copy, a destination (struct eg_dest) and the caller, then calls
 *
 *   eg_connect_decide()   the order of the checks, below
 *   eg_connect_admit()    an allow: tag, count, remember (Unix and VSOCK;
 *                         the inet hooks tag by cookie, cgroup_inet.bpf.c)
 *   eg_connect_deny()     a denial: counted, reported, let through in audit
 *
 * so that one situation gives one reason, one counter, one event and one
 * audit behaviour on every hook (tests/kernel/test_situations.c holds the
 * table). The order:
 *
 *   1. the endpoint's copy raced            deny-inconsistent
 *   2. the admission cache's generation word, before any state it guards
 *   3. the record: missing, retired, not active, or a role it cannot have
 *                                           deny-no-record, deny-retired,
 *                                           deny-inconsistent
 *   4. the caller's identity unreadable     deny-no-task
 *   5. the caller: the bridge (VMM socket), a live grant (bridge socket),
 *      a live ServicePort grant (guest address)
 *
 * The record comes before the caller: a situation the record already
 * decides (a retired execution) is reported as that whoever calls, and a
 * denial carries the record's mode, so a sandbox's own audit mode governs
 * every denial at its endpoints, the unknown caller's included.
 *
 * Include after execgate_maps.bpf.h (every map, declared once). */
#ifndef EXECGATE_CONNECT_BPF_H
#define EXECGATE_CONNECT_BPF_H

#include "execgate_unix_path.bpf.h"
#include "execgate_admit_cache.bpf.h"
#include "execgate_inet.bpf.h"

/* Where a connect goes, as its decision and its event see it. At most one
 * of path, vsock and inet is set; none for an inode endpoint, whose event
 * names the sandbox only. */
struct eg_dest {
	/* Unix: the endpoint key's path (struct eg_path_key), NUL padded to
	 * its 108 bytes, so the event reads a constant size whatever the
	 * caller passed after the path's end (6.1's verifier refused a
	 * variable one that clang had reloaded with unknown upper bits) */
	const void *path;
	const struct eg_vsock_key *vsock;
	const struct eg_inet_key *inet;
	__u64 now_ns; /* inet: the grant clock, read once by the hook */
	__u16 port;   /* inet: host byte order */
	__u8 proto;
};

/* The ServicePort caller half: a live grant of the caller's for (sandbox,
 * port, protocol) at the record's execution. */
EG_INLINE __u32 eg_service_caller_verdict(const struct eg_endpoint_snap *ep,
					  const struct eg_dest *d, const struct eg_proc_id *caller,
					  const struct eg_record_snap *rec)
{
	struct eg_service_grant_key gkey;
	struct eg_service_grant_snap grant;
	int rc;

	__builtin_memset(&gkey, 0, sizeof(gkey));
	gkey.proc = *caller;
	__builtin_memcpy(gkey.sandbox, ep->sandbox, EG_ID_BYTES);
	gkey.port = d->port;
	gkey.proto = d->proto;
	rc = eg_service_grant_copy(&gkey, &grant);
	if (rc == EG_COPY_MISSING)
		return EG_K_DENY_NO_GRANT;
	if (rc != EG_COPY_OK)
		return EG_K_DENY_INCONSISTENT;
	if (grant.epoch != rec->epoch || grant.generation != rec->generation)
		return EG_K_DENY_GRANT_EPOCH;
	if (d->now_ns >= grant.expiry_ns)
		return EG_K_DENY_GRANT_EXPIRED;
	return EG_K_ALLOW_GRANT;
}

/* The decision for a connect to a registered endpoint, in the order above.
 * copy_rc: what the endpoint's copy into *ep returned (never
 * EG_COPY_MISSING: unregistered is the hook's, before this). known: whether
 * *caller could be read. Fills *rec (zeroed first: without a record, a
 * denial has the global mode). gen, where the hook keeps an admission cache,
 * receives the stripe's word read before the record; until, the allow's
 * end for the cache. Both may be NULL. Returns an enum eg_kreason. */
EG_INLINE __u32 eg_connect_decide(int copy_rc, const struct eg_endpoint_snap *ep,
				  const struct eg_dest *d, bool known,
				  const struct eg_proc_id *caller, struct eg_record_snap *rec,
				  __u64 *gen, __u64 *until)
{
	__u64 end;
	__u32 reason;

	__builtin_memset(rec, 0, sizeof(*rec));
	if (copy_rc != EG_COPY_OK)
		return EG_K_DENY_INCONSISTENT;
	if (gen)
		*gen = eg_admit_gen_begin(ep->sandbox); /* before the state it guards */
	reason = eg_record_state_verdict(ep, rec);
	if (reason)
		return reason;
	if (d->inet)
		reason = ep->role == EG_ROLE_SERVICE ? 0 : EG_K_DENY_INCONSISTENT;
	else
		reason = eg_record_role_verdict(ep, rec);
	if (reason)
		return reason;
	if (!known)
		return EG_K_DENY_NO_TASK;
	if (d->inet)
		return eg_service_caller_verdict(ep, d, caller, rec);
	reason = eg_caller_verdict_until(ep, caller, rec, &end);
	if (until)
		*until = end;
	return reason;
}

/* The end of every denial: in enforce counted under its reason, in audit
 * as a would-deny of (hook, reason); the event either way, marked in audit.
 * True: audit, the hook lets the connect through (untagged: docs/design.md,
 * "Modes"). */
EG_INLINE bool eg_connect_deny(__u32 hook, __u32 reason, const struct eg_endpoint_snap *ep,
			       const struct eg_record_snap *rec, const struct eg_dest *d)
{
	bool audit = eg_decide_audit(rec->mode);

	if (audit)
		eg_count_would_deny(hook, reason);
	else
		eg_count(reason);
	eg_emit_denial_to(hook, reason, ep->sandbox, rec->epoch, d->path,
			  d->path ? EG_UNIX_PATH_MAX : 0, d->vsock, d->inet, d->port, d->proto,
			  audit ? EG_EVENT_AUDIT : 0);
	return audit;
}

/* An admission cache hit: the socket tagged as the full checks tagged it
 * the first time, and counted with the same reason. False when the tag
 * cannot be made: the full checks decide then. */
EG_INLINE bool eg_connect_hit(void *sk, const struct eg_sk_tag *tag)
{
	if (!eg_tag_socket_as(sk, tag))
		return false;
	eg_count(tag->role == EG_ROLE_VMM ? EG_K_ALLOW_BRIDGE : EG_K_ALLOW_GRANT);
	return true;
}

/* After eg_connect_decide() allowed a Unix or VSOCK connect: tag sk,
 * count, and remember the allow under ak when the endpoint still names
 * what was decided on (path: the Unix endpoint's key, or NULL for VSOCK).
 * True: the connect goes on; false: denied for want of a tag, or let
 * through in audit (then true). */
EG_INLINE bool eg_connect_admit(void *sk, __u32 hook, __u32 reason,
				const struct eg_endpoint_snap *ep, const struct eg_record_snap *rec,
				const struct eg_proc_id *caller, __u64 gen, __u64 until,
				const struct eg_admit_key *ak, const struct eg_path_key *path,
				const struct eg_dest *d)
{
	if (!eg_tag_socket(sk, rec, ep->role))
		return eg_connect_deny(hook, EG_K_DENY_NO_TAG, ep, rec, d);
	eg_count(reason);
	if (d->vsock && eg_endpoint_still(&eg_vsock_endpoints, d->vsock, ep))
		eg_admit_remember_vsock(ak, d->vsock, caller, gen, until, rec, ep->role);
	if (path && eg_unix_endpoint_still(path, ep))
		eg_admit_remember(ak, path, caller, gen, until, rec, ep->role);
	return true;
}

#endif
