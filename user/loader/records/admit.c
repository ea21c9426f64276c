// SPDX-License-Identifier: Apache-2.0
/* revoke / grant garbage collection and counting: the walkers of eg_grants.
 * Grants are written by the worker handle's admit (user/lib/admit.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include "core/ids.h"
#include "loader/process/proc_id.h"
#include "loader/endpoints/inet.h"
#include "loader/records/runtime.h"

/* Walks eg_grants calling fn on every entry; fn returns true to delete. */
static int grants_walk(struct eg_runtime *rt,
		       bool (*fn)(struct eg_runtime *, const struct eg_grant *, void *), void *arg,
		       unsigned *removed)
{
	int fd = rt->maps.fd[EG_MAP_GRANTS];
	struct eg_grant_key key, next;
	struct eg_grant g;
	bool have = false;
	int rc = 0, del;

	*removed = 0;
	while (!bpf_map_get_next_key(fd, have ? &key : NULL, &next)) {
		have = true;
		key = next;
		if (eg_grant_read(&rt->maps, &key, &g))
			continue; /* deleted meanwhile */
		if (!fn(rt, &g, arg))
			continue;
		/* Tombstone in place (under the element lock) before deleting.
		 * A BPF reader that raced the delete and the element's re-use
		 * for the same key then mixes the new value with one whose
		 * epoch, generation and expiry are all zero: any field taken
		 * from the tombstone makes the copy dead. Re-use for another
		 * key is caught by the reader's embedded-key and re-lookup
		 * checks (bpf/execgate_common.bpf.h). */
		g.generation = g.epoch = g.expiry_ns = 0;
		g.scope = 0;
		if (eg_grant_write(&rt->maps, &g) && errno != ENOENT)
			continue;
		del = eg_map_delete_counted(fd, &key, removed);
		rc = del ? del : rc;
		/* Iteration restarts from the deleted key's successor search; a
		 * missing key makes get_next_key start over, which is fine for
		 * a full sweep (deleted keys are not revisited). */
	}
	return rc;
}

struct revoke_arg {
	pid_t pid;
	const __u8 *sandbox;
};

static bool revoke_match(struct eg_runtime *rt, const struct eg_grant *g, void *arg)
{
	const struct revoke_arg *a = arg;

	(void)rt;
	return g->key.proc.tgid == (__u32)a->pid &&
	       !memcmp(g->key.sandbox, a->sandbox, EG_ID_BYTES);
}

int eg_revoke(struct eg_runtime *rt, pid_t pid, const __u8 sandbox[EG_ID_BYTES], unsigned *removed,
	      char *err, size_t err_size)
{
	struct revoke_arg a = {.pid = pid, .sandbox = sandbox};
	char s[EG_UUID_TEXT_LEN];
	int rc;

	rc = grants_walk(rt, revoke_match, &a, removed);
	/* and its ServicePort grants, which a TCP connect checks */
	if (!rc)
		rc = eg_service_grants_revoke(&rt->maps, (__u32)pid, sandbox, removed);
	if (rc) {
		snprintf(err, err_size, "grants of pid %d: %s", (int)pid, strerror(-rc));
		return rc;
	}
	if (!*removed) {
		eg_uuid_format(sandbox, s);
		snprintf(err, err_size, "pid %d: no grant for sandbox %s", (int)pid, s);
		return -ENOENT;
	}
	return 0;
}

struct gc_arg {
	const __u8 *sandbox;
	uint64_t boot_ns;
};

static bool gc_match(struct eg_runtime *rt, const struct eg_grant *g, void *arg)
{
	const struct gc_arg *a = arg;
	struct eg_exec_record rec;

	if (a->sandbox && memcmp(g->key.sandbox, a->sandbox, EG_ID_BYTES))
		return false;
	if (g->expiry_ns <= a->boot_ns)
		return true;
	if (eg_record_read(&rt->maps, g->key.sandbox, &rec))
		return true;
	return rec.state != EG_RECORD_ACTIVE || rec.epoch != g->epoch ||
	       rec.generation != g->generation;
}

int eg_grants_gc(struct eg_runtime *rt, const __u8 *sandbox, unsigned *removed)
{
	struct gc_arg a = {.sandbox = sandbox, .boot_ns = eg_boottime_ns()};

	return grants_walk(rt, gc_match, &a, removed);
}

static bool count_match(struct eg_runtime *rt, const struct eg_grant *g, void *arg)
{
	unsigned *n = ((void **)arg)[1];

	(void)rt;
	if (!memcmp(g->key.sandbox, ((void **)arg)[0], EG_ID_BYTES))
		(*n)++;
	return false;
}

int eg_grants_count(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES], unsigned *n)
{
	void *arg[2] = {(void *)sandbox, n};
	unsigned removed;

	*n = 0;
	return grants_walk(rt, count_match, arg, &removed);
}
