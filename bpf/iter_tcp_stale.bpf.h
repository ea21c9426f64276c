/* SPDX-License-Identifier: GPL-2.0-only */
/* The one staleness test of the iter/tcp revokers (iter_tcp_revoke.bpf.c
 * destroys, iter_tcp_find.bpf.c reports for sock_diag): a TCP socket whose
 * eg_inet_tags entry names an execution that is no longer current (the
 * record's epoch or generation moved, it was retired, or it is gone). */
#ifndef EXECGATE_ITER_TCP_STALE_BPF_H
#define EXECGATE_ITER_TCP_STALE_BPF_H

#include "execgate_common.bpf.h"

/* Whether skc is stale; then *out is a copy of its tag. False: not inet,
 * no full socket, untagged, current, or a raced record the next pass
 * decides. *audit: its sandbox decides in audit (the record's own mode,
 * else the global mode; a gone record takes the global one): the revokers
 * leave it running and report it (docs/design.md §19).
 *
 * The tag is found by the socket's cookie, read from the socket rather
 * than through bpf_get_socket_cookie(), which would give a cookie to every
 * socket the iterator walks: a socket without one was never tagged. */
EG_INLINE bool eg_tcp_stale_tag(struct sock_common *skc, struct eg_inet_tag *out, bool *audit)
{
	struct eg_record_snap rec;
	struct eg_inet_tag *tag;
	struct tcp_sock *tp;
	__u64 cookie;
	int rc;

	if (!skc || (skc->skc_family != 2 && skc->skc_family != 10))
		return false; /* AF_INET, AF_INET6 */
	tp = bpf_skc_to_tcp_sock(skc);
	if (!tp)
		return false; /* request and TIME_WAIT sockets: no longer streams */
	cookie = BPF_CORE_READ(skc, skc_cookie.counter);
	if (!cookie)
		return false;
	tag = bpf_map_lookup_elem(&eg_inet_tags, &cookie);
	if (!tag)
		return false;
	*out = *tag;
	rc = eg_record_copy(out->sandbox, &rec);
	if (rc == EG_COPY_OK && rec.state == EG_RECORD_ACTIVE && rec.epoch == out->epoch &&
	    rec.generation == out->generation)
		return false;
	if (rc == EG_COPY_RACED)
		return false; /* raced a delete and re-use: the next pass decides */
	*audit = eg_decide_audit(rc == EG_COPY_OK ? rec.mode : EG_MODE_INHERIT);
	return true;
}

#endif
