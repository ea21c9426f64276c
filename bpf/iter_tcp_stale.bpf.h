/* SPDX-License-Identifier: GPL-2.0-only */
/* The one staleness test of the iter/tcp revokers (iter_tcp_revoke.bpf.c
 * destroys, iter_tcp_find.bpf.c reports for sock_diag): a TCP socket whose
 * eg_inet_tags entry names an execution that is no longer current (the
 * record's epoch or generation moved, it was retired, or it is gone). */
#ifndef EXECGATE_ITER_TCP_STALE_BPF_H
#define EXECGATE_ITER_TCP_STALE_BPF_H

#include "execgate_common.bpf.h"

/* The stale socket's tag, or NULL (not inet, no full socket, untagged,
 * current, or a raced record the next pass decides). *audit: its sandbox
 * decides in audit (the record's own mode, else the global mode; a gone
 * record takes the global one): the revokers leave it running and report
 * it (docs/design.md §19). */
EG_INLINE struct eg_inet_tag *eg_tcp_stale_tag(struct sock_common *skc, bool *audit)
{
	struct eg_record_snap rec;
	struct eg_inet_tag *tag;
	struct tcp_sock *tp;
	int rc;

	if (!skc || (skc->skc_family != 2 && skc->skc_family != 10))
		return NULL; /* AF_INET, AF_INET6 */
	tp = bpf_skc_to_tcp_sock(skc);
	if (!tp)
		return NULL; /* request and TIME_WAIT sockets carry no storage */
	tag = bpf_sk_storage_get(&eg_inet_tags, (struct sock *)tp, NULL, 0);
	if (!tag)
		return NULL;
	rc = eg_record_copy(tag->sandbox, &rec);
	if (rc == EG_COPY_OK && rec.state == EG_RECORD_ACTIVE && rec.epoch == tag->epoch &&
	    rec.generation == tag->generation)
		return NULL;
	if (rc == EG_COPY_RACED)
		return NULL; /* raced a delete and re-use: the next pass decides */
	*audit = eg_decide_audit(rc == EG_COPY_OK ? rec.mode : EG_MODE_INHERIT);
	return tag;
}

#endif
