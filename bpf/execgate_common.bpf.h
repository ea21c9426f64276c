/* SPDX-License-Identifier: GPL-2.0-only */
/* The logic every execgate hook shares: who is calling, what the maps say
 * about an endpoint, counters, events and socket tags. The order of a
 * connect's checks is not here but in one function, eg_connect_decide()
 * (execgate_connect.bpf.h), which every connect hook calls.
 *
 * Reading map values (no torn reads, docs/operators.md "Consistency"):
 * userspace writes every locked value with BPF_F_LOCK, which updates an
 * existing element in place under its bpf_spin_lock; we copy under the same
 * lock. Deleting an element and re-using its memory for another key is not
 * under that lock, so after the copy we check the key embedded in the value
 * and look the key up again: a different (or no) element means we raced a
 * delete, and the caller fails closed. Everything here is always_inline:
 * bpf_spin_lock must be taken and released in the same frame.
 *
 * Usable from cgroup sock_addr and (non-sleepable) LSM programs. Include
 * after execgate_maps.bpf.h. */
#ifndef EXECGATE_COMMON_BPF_H
#define EXECGATE_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "abi/abi.h"
#include "execgate_maps.bpf.h"

#define EG_INLINE static __always_inline

/* Lock-free copies of locked map values. */
struct eg_record_snap {
	__u32 state;
	__u32 activation;
	__u64 generation;
	__u64 epoch;
	__u8 sandbox[EG_ID_BYTES];
	struct eg_proc_id bridge;
	struct eg_proc_id vmm;
	__u32 mode; /* enum eg_mode; EG_MODE_ENFORCE when the copy raced */
	__u32 pad;
};

struct eg_endpoint_snap {
	__u32 role;
	__u32 pad;
	__u8 sandbox[EG_ID_BYTES];
};

struct eg_grant_snap {
	__u32 scope;
	__u32 pad;
	__u64 generation;
	__u64 epoch;
	__u64 expiry_ns;
};

enum eg_copy_rc {
	EG_COPY_OK = 0,
	EG_COPY_MISSING = 1,
	EG_COPY_RACED = 2, /* embedded key mismatch or element re-used */
};

EG_INLINE bool eg_id_eq(const __u8 *a, const __u8 *b)
{
	/* Both sides are 8-byte aligned in every ABI struct. */
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;

	return x[0] == y[0] && x[1] == y[1];
}

EG_INLINE bool eg_proc_eq(const struct eg_proc_id *a, const struct eg_proc_id *b)
{
	return a->tgid == b->tgid && a->start_boottime_ns == b->start_boottime_ns &&
	       a->exe_ino == b->exe_ino && a->exe_dev == b->exe_dev;
}

/* The calling process, as eg_proc_id. Returns false for tasks without an
 * address space or executable (kernel threads, exiting tasks): callers deny
 * with EG_K_DENY_NO_TASK. The start time is the group leader's, which is
 * what /proc/PID/stat reports for PID == tgid. */
EG_INLINE bool eg_current_proc(struct eg_proc_id *id)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct task_struct *leader;
	struct mm_struct *mm;
	struct file *exe;
	struct inode *inode;

	leader = t->group_leader;
	mm = t->mm;
	if (!leader || !mm)
		return false;
	exe = mm->exe_file;
	if (!exe)
		return false;
	inode = exe->f_inode;
	if (!inode)
		return false;
	id->tgid = t->tgid;
	id->exe_dev = inode->i_sb->s_dev;
	id->start_boottime_ns =
	    leader->start_boottime; /* ns, as loader/process/task_start.c reads it */
	id->exe_ino = inode->i_ino;
	return true;
}

EG_INLINE int eg_record_copy(const __u8 sandbox[EG_ID_BYTES], struct eg_record_snap *out)
{
	struct eg_exec_record *v;

	v = bpf_map_lookup_elem(&eg_records, sandbox);
	if (!v)
		return EG_COPY_MISSING;
	bpf_spin_lock(&v->lock);
	out->state = v->state;
	out->activation = v->activation;
	out->generation = v->generation;
	out->epoch = v->epoch;
	__builtin_memcpy(out->sandbox, v->sandbox, EG_ID_BYTES);
	out->bridge = v->bridge;
	out->vmm = v->vmm;
	out->mode = v->mode;
	bpf_spin_unlock(&v->lock);
	/* A raced copy's mode may be another sandbox's, and this sandbox's
	 * own may be enforce under a global audit: fail closed. */
	if (!eg_id_eq(out->sandbox, sandbox) || bpf_map_lookup_elem(&eg_records, sandbox) != v) {
		out->mode = EG_MODE_ENFORCE;
		return EG_COPY_RACED;
	}
	return EG_COPY_OK;
}

/* map is one of eg_endpoints, eg_vsock_endpoints, eg_inode_endpoints, and
 * v the element a lookup of key returned. The endpoint value does not
 * repeat its key (a path is 108 bytes), so the second lookup alone detects
 * a re-used element. */
EG_INLINE int eg_endpoint_copy_at(void *map, const void *key, struct eg_endpoint *v,
				  struct eg_endpoint_snap *out)
{
	bpf_spin_lock(&v->lock);
	out->role = v->role;
	__builtin_memcpy(out->sandbox, v->sandbox, EG_ID_BYTES);
	bpf_spin_unlock(&v->lock);
	if (bpf_map_lookup_elem(map, key) != v)
		return EG_COPY_RACED;
	return EG_COPY_OK;
}

/* The same, from the lookup. */
EG_INLINE int eg_endpoint_copy(void *map, const void *key, struct eg_endpoint_snap *out)
{
	struct eg_endpoint *v = bpf_map_lookup_elem(map, key);

	return v ? eg_endpoint_copy_at(map, key, v, out) : EG_COPY_MISSING;
}

/* Whether two copies of an endpoint name the same sandbox and role. */
EG_INLINE bool eg_endpoint_same(const struct eg_endpoint_snap *a, const struct eg_endpoint_snap *b)
{
	return a->role == b->role && eg_id_eq(a->sandbox, b->sandbox);
}

/* Whether key still names the endpoint *ep was copied from: the admission
 * cache's check that no re-pointing slipped in before its generation word
 * was read (execgate_admit_cache.bpf.h). */
EG_INLINE bool eg_endpoint_still(void *map, const void *key, const struct eg_endpoint_snap *ep)
{
	struct eg_endpoint_snap now;

	return eg_endpoint_copy(map, key, &now) == EG_COPY_OK && eg_endpoint_same(&now, ep);
}

EG_INLINE int eg_grant_copy(const struct eg_grant_key *key, struct eg_grant_snap *out)
{
	struct eg_grant_key seen;
	struct eg_grant *v;

	v = bpf_map_lookup_elem(&eg_grants, key);
	if (!v)
		return EG_COPY_MISSING;
	bpf_spin_lock(&v->lock);
	out->scope = v->scope;
	out->generation = v->generation;
	out->epoch = v->epoch;
	out->expiry_ns = v->expiry_ns;
	seen = v->key;
	bpf_spin_unlock(&v->lock);
	if (!eg_proc_eq(&seen.proc, &key->proc) || !eg_id_eq(seen.sandbox, key->sandbox))
		return EG_COPY_RACED;
	if (bpf_map_lookup_elem(&eg_grants, key) != v)
		return EG_COPY_RACED;
	return EG_COPY_OK;
}

/* The record half of every connect decision (execgate_connect.bpf.h): the
 * record ep points at, copied to *rec. Returns 0 when it is active, else the
 * denial reason. Missing or inconsistent state denies: a registered
 * endpoint never falls through as unregistered. */
EG_INLINE __u32 eg_record_state_verdict(const struct eg_endpoint_snap *ep,
					struct eg_record_snap *rec)
{
	int rc;

	rc = eg_record_copy(ep->sandbox, rec);
	if (rc == EG_COPY_MISSING)
		return EG_K_DENY_NO_RECORD;
	if (rc != EG_COPY_OK)
		return EG_K_DENY_INCONSISTENT;
	if (rec->state == EG_RECORD_RETIRED)
		return EG_K_DENY_RETIRED;
	if (rec->state != EG_RECORD_ACTIVE)
		return EG_K_DENY_INCONSISTENT;
	return 0;
}

/* The role a Unix or VSOCK endpoint may have, against its active record: a
 * VMM socket needs the record's bridge to admit. */
EG_INLINE __u32 eg_record_role_verdict(const struct eg_endpoint_snap *ep,
				       const struct eg_record_snap *rec)
{
	if (ep->role == EG_ROLE_VMM)
		return rec->bridge.tgid ? 0 : EG_K_DENY_INCONSISTENT;
	return ep->role == EG_ROLE_BRIDGE ? 0 : EG_K_DENY_INCONSISTENT;
}

/* Now, in CLOCK_BOOTTIME as grants' expiry_ns, for an expiry check
 * (abi.h, struct eg_clock_word): the coarse monotonic clock plus the boot
 * offset eg_clock keeps, read as one word; CLOCK_BOOTTIME itself while
 * nothing keeps it. Up to one tick behind CLOCK_BOOTTIME: a grant ends at
 * its expiry or within the tick after it. */
EG_INLINE __u64 eg_grant_clock_ns(void)
{
#ifdef EG_GRANT_CLOCK_BOOTTIME_ONLY /* a program type without the coarse clock */
	return bpf_ktime_get_boot_ns();
#else
	struct eg_clock_word *c;
	__u32 zero = 0;
	__u64 w;

	c = bpf_map_lookup_elem(&eg_clock, &zero);
	w = c ? *(volatile __u64 *)&c->word : 0; /* once */
	if (w & EG_CLOCK_KEPT)
		return bpf_ktime_get_coarse_ns() + (w & ~EG_CLOCK_KEPT);
	return bpf_ktime_get_boot_ns();
#endif
}

/* The caller half of a Unix or VSOCK decision, after the record half
 * returned 0: a VMM socket admits the record's bridge, a bridge socket a
 * live grant. Returns an enum eg_kreason. The clock is read only for a grant
 * that passed its epoch check, the one check that needs it. */
EG_INLINE __u32 eg_caller_verdict_until(const struct eg_endpoint_snap *ep,
					const struct eg_proc_id *caller,
					const struct eg_record_snap *rec, __u64 *until)
{
	struct eg_grant_key gkey;
	struct eg_grant_snap grant;
	int rc;

	*until = EG_ADMIT_NO_EXPIRY;
	if (ep->role == EG_ROLE_VMM)
		return eg_proc_eq(caller, &rec->bridge) ? EG_K_ALLOW_BRIDGE : EG_K_DENY_NOT_BRIDGE;
	gkey.proc = *caller;
	__builtin_memcpy(gkey.sandbox, ep->sandbox, EG_ID_BYTES);
	rc = eg_grant_copy(&gkey, &grant);
	if (rc == EG_COPY_MISSING)
		return EG_K_DENY_NO_GRANT;
	if (rc != EG_COPY_OK)
		return EG_K_DENY_INCONSISTENT;
	if (grant.epoch != rec->epoch || grant.generation != rec->generation)
		return EG_K_DENY_GRANT_EPOCH;
	if (eg_grant_clock_ns() >= grant.expiry_ns)
		return EG_K_DENY_GRANT_EXPIRED;
	*until = grant.expiry_ns;
	return EG_K_ALLOW_GRANT;
}

EG_INLINE bool eg_reason_allows(__u32 reason)
{
	return reason <= EG_K_ALLOW_GRANT;
}

EG_INLINE void eg_count(__u32 reason)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct eg_cpu_counters *c = bpf_map_lookup_elem(&eg_counters, &cpu);

	if (c && reason < EG_COUNTER_SLOTS)
		c->n[reason] += 1; /* this CPU's slot: no atomics (abi.h) */
}

/* Whether a denial is let through: the record's mode when it has one, else
 * the global mode, read here once per decision (one aligned load). Only
 * EG_MODE_AUDIT audits; anything else enforces (docs/design.md, "Modes"). */
EG_INLINE bool eg_decide_audit(__u32 record_mode)
{
	struct eg_mode_word *w;
	__u32 zero = 0, mode;

	if (record_mode != EG_MODE_INHERIT)
		return record_mode == EG_MODE_AUDIT;
	w = bpf_map_lookup_elem(&eg_mode, &zero);
	if (!w)
		return false;
	mode = *(volatile __u32 *)&w->mode; /* once per decision */
	return mode == EG_MODE_AUDIT;
}

/* A denial audit let through: counted by hook and reason, not in
 * eg_counters (whose deny reasons count refused connects only). */
EG_INLINE void eg_count_would_deny(__u32 hook, __u32 reason)
{
	__u32 key = EG_WOULD_DENY_KEY(hook & (EG_HOOK_SLOTS - 1), reason & (EG_COUNTER_SLOTS - 1));
	__u64 *n = bpf_map_lookup_elem(&eg_would_deny, &key);

	if (n)
		*n += 1; /* this CPU's value: no atomics, as eg_count() */
}

/* One denial event. path/path_len: a kernel pointer to the Unix path bytes
 * (BTF or plain kernel memory) or NULL; vsock: the AF_VSOCK destination or
 * NULL; inet/inet_port/inet_proto: the TCP/UDP destination or NULL. When
 * the ring buffer is full the event is dropped and counted under
 * EG_K_EVENT_DROPPED: the counters stay exact, events are best effort. */
EG_INLINE void eg_emit_denial_to(__u32 hook, __u32 reason, const __u8 sandbox[EG_ID_BYTES],
				 __u64 epoch, const void *path, __u32 path_len,
				 const struct eg_vsock_key *vsock, const struct eg_inet_key *inet,
				 __u16 inet_port, __u8 inet_proto, __u8 flags)
{
	struct eg_event *ev;
	__u64 pid_tgid;

	ev = bpf_ringbuf_reserve(&eg_events, sizeof(*ev), 0);
	if (!ev) {
		eg_count(EG_K_EVENT_DROPPED);
		return;
	}
	pid_tgid = bpf_get_current_pid_tgid();
	ev->ts_ns = bpf_ktime_get_boot_ns();
	ev->pid = pid_tgid >> 32;
	ev->tid = (__u32)pid_tgid;
	ev->reason = reason;
	ev->hook = hook;
	ev->flags = flags;
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	if (sandbox)
		__builtin_memcpy(ev->sandbox, sandbox, EG_ID_BYTES);
	else
		__builtin_memset(ev->sandbox, 0, EG_ID_BYTES);
	ev->epoch = epoch;
	if (vsock)
		ev->vsock = *vsock;
	else
		ev->vsock.cid = ev->vsock.port = 0;
	__builtin_memset(ev->path, 0, sizeof(ev->path));
	if (path && path_len) {
		if (path_len > EG_UNIX_PATH_MAX)
			path_len = EG_UNIX_PATH_MAX;
		bpf_probe_read_kernel(ev->path, path_len, path);
	}
	if (inet)
		ev->inet = *inet;
	else
		__builtin_memset(&ev->inet, 0, sizeof(ev->inet));
	ev->inet_port = inet ? inet_port : 0;
	ev->inet_proto = inet ? inet_proto : 0;
	bpf_ringbuf_submit(ev, 0);
}

/* A denial at a Unix or VSOCK destination (or none). */
EG_INLINE void eg_emit_denial(__u32 hook, __u32 reason, const __u8 sandbox[EG_ID_BYTES],
			      __u64 epoch, const void *path, __u32 path_len,
			      const struct eg_vsock_key *vsock, __u8 flags)
{
	eg_emit_denial_to(hook, reason, sandbox, epoch, path, path_len, vsock, NULL, 0, 0, flags);
}

/* Tag sk with the execution it was admitted to. sk must be a socket pointer
 * the hook may pass to bpf_sk_storage_get. False when there is no tag
 * (sk NULL, or its storage could not be created): the hook then denies
 * with EG_K_DENY_NO_TAG, since an untagged stream escapes its lease.
 *
 * A new tag is created from a complete initial value, so a concurrent reader
 * (the LSM stream hooks, userspace by socket fd) never sees a half-written
 * one. An existing tag (a datagram socket connecting again) is rewritten.
 * Creating the socket's storage is most of the cost of an admitted connect
 * (~0.65-0.8 us here: the allocations of the storage and its element,
 * measured by bench-kernel; the loader creates the map outside any memory
 * cgroup, user/loader/maps/tag_maps.h, so no memcg charge); it is the price of a
 * tag that the stream leases and userspace can read. */
EG_INLINE void eg_sk_tag_of(const struct eg_record_snap *rec, __u32 role, struct eg_sk_tag *t)
{
	__builtin_memcpy(t->sandbox, rec->sandbox, EG_ID_BYTES);
	t->epoch = rec->epoch;
	t->generation = rec->generation;
	t->activation = rec->activation;
	t->role = role;
}

/* eg_tag_socket() with the tag already made (the admission cache's hit). */
EG_INLINE bool eg_tag_socket_as(void *sk, const struct eg_sk_tag *init)
{
	struct eg_sk_tag *tag;

	if (!sk)
		return false;
	tag = bpf_sk_storage_get(&eg_sk_tags, sk, (void *)init, BPF_SK_STORAGE_GET_F_CREATE);
	if (!tag)
		return false;
	if (tag->epoch == init->epoch && tag->generation == init->generation &&
	    tag->activation == init->activation && tag->role == init->role &&
	    eg_id_eq(tag->sandbox, init->sandbox))
		return true; /* just created (or already this execution) */
	*tag = *init;
	return true;
}

EG_INLINE bool eg_tag_socket(void *sk, const struct eg_record_snap *rec, __u32 role)
{
	struct eg_sk_tag init;

	eg_sk_tag_of(rec, role, &init);
	return eg_tag_socket_as(sk, &init);
}

#endif
