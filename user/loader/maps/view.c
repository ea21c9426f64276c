// SPDX-License-Identifier: Apache-2.0
/* Public value types <-> map layout (loader/maps/view.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "core/identity.h"
#include "loader/maps/view.h"

/* EG_PORTS_COPY below truncates silently: the public record must hold
 * every port the kernel's record can (both arrays are sized by sizes.h
 * today; this catches one of them moving alone). */
#define EG_VIEW_LEN(a) (sizeof(a) / sizeof((a)[0]))
_Static_assert(EG_VIEW_LEN(((struct eg_exec_record *)0)->ports) ==
		   EG_VIEW_LEN(((struct eg_runtime_record *)0)->ports),
	       "the public runtime record holds every port of eg_exec_record");

void eg_process_of(const struct eg_proc_id *k, struct eg_process *out)
{
	memset(out, 0, sizeof(*out));
	out->tgid = k->tgid;
	out->exe_dev = k->exe_dev;
	out->start_boottime_ns = k->start_boottime_ns;
	out->exe_ino = k->exe_ino;
}

void eg_proc_id_of(const struct eg_process *p, struct eg_proc_id *out)
{
	memset(out, 0, sizeof(*out));
	out->tgid = p->tgid;
	out->exe_dev = p->exe_dev;
	out->start_boottime_ns = p->start_boottime_ns;
	out->exe_ino = p->exe_ino;
}

void eg_runtime_record_of(const struct eg_exec_record *k, struct eg_runtime_record *out)
{
	memset(out, 0, sizeof(*out));
	/* Field by field, and no struct eg_identity between: both layouts
	 * hold substrate in 32 bits, and a listing shows what the map holds,
	 * even a substrate the internal identity refuses (core/identity.h). */
	memcpy(out->sandbox, k->sandbox, EG_ID_BYTES);
	memcpy(out->worker, k->worker, EG_ID_BYTES);
	memcpy(out->pod_uid, k->pod_uid, EG_ID_BYTES);
	out->substrate = k->substrate;
	out->generation = k->generation;
	out->activation = k->activation;
	out->epoch = k->epoch;
	out->retired = k->state == EG_RECORD_RETIRED;
	out->cut_pending = k->cut_pending != 0;
	eg_process_of(&k->bridge, &out->bridge);
	eg_process_of(&k->vmm, &out->vmm);
	EG_PORTS_COPY(out->ports, out->n_ports, k->ports, k->nports);
}

void eg_grant_info_of(const struct eg_grant *g, struct eg_grant_info *out)
{
	memset(out, 0, sizeof(*out));
	eg_process_of(&g->key.proc, &out->proc);
	memcpy(out->sandbox, g->key.sandbox, EG_ID_BYTES);
	out->scope = g->scope;
	out->generation = g->generation;
	out->epoch = g->epoch;
	out->expiry_ns = g->expiry_ns;
}

void eg_vsock_key_of(const struct eg_vsock_addr *a, struct eg_vsock_key *out)
{
	out->cid = a->cid;
	out->port = a->port;
}

void eg_inet_addr_of(const struct eg_inet_key *k, struct eg_inet_addr *out)
{
	memset(out, 0, sizeof(*out));
	out->family = k->family;
	memcpy(out->addr, k->addr, sizeof(out->addr));
}

void eg_inet_key_of(const struct eg_inet_addr *a, struct eg_inet_key *out)
{
	memset(out, 0, sizeof(*out));
	out->family = a->family;
	memcpy(out->addr, a->addr, sizeof(out->addr));
}

void eg_stream_cuts_of(const struct eg_revoke_report *r, struct eg_stream_cuts *out)
{
	memset(out, 0, sizeof(*out));
	out->unix_cut = r->kind[EG_REVOKE_UNIX].cut;
	out->unix_unreachable = r->kind[EG_REVOKE_UNIX].unreachable;
	out->unix_method = r->kind[EG_REVOKE_UNIX].method;
	out->tcp_cut = r->kind[EG_REVOKE_TCP].cut;
	out->tcp_unreachable = r->kind[EG_REVOKE_TCP].unreachable;
	out->tcp_method = r->kind[EG_REVOKE_TCP].method;
	out->error = r->kind[EG_REVOKE_UNIX].error ? r->kind[EG_REVOKE_UNIX].error
						   : r->kind[EG_REVOKE_TCP].error;
	out->unix_error = r->kind[EG_REVOKE_UNIX].error;
	out->tcp_error = r->kind[EG_REVOKE_TCP].error;
	out->would_cut = r->kind[EG_REVOKE_UNIX].would_cut + r->kind[EG_REVOKE_TCP].would_cut;
	if (!out->error && r->err[0])
		out->error = -EIO; /* the streams were cut, the intent not cleared */
	snprintf(out->error_text, sizeof(out->error_text), "%s", r->err);
}
