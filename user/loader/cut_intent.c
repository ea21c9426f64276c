// SPDX-License-Identifier: Apache-2.0
/* Finishing a stream cut, and finding the ones a killed writer left
 * (loader/cut_intent.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include "loader/cut_intent.h"
#include "loader/runtime.h"

int eg_cut_finish(struct eg_runtime *rt, struct eg_exec_record *rec, struct eg_revoke_report *rep)
{
	struct eg_exec_record now;
	int rc;

	rc = eg_revoke_stale(rt, rec->sandbox, rec->epoch, rec->state == EG_RECORD_RETIRED, rep);
	if (rc)
		return rc; /* the intent stays: the next writer tries again */
	rc = eg_record_read(&rt->maps, rec->sandbox, &now);
	if (!rc && now.cut_pending && now.epoch == rec->epoch && now.state == rec->state &&
	    now.generation == rec->generation) {
		now.cut_pending = 0;
		rc = eg_record_write(&rt->maps, &now);
	}
	if (rc == -ENOENT)
		rc = 0; /* no record, no intent (forget deletes it after this) */
	if (rc) {
		snprintf(rep->err, sizeof(rep->err),
			 "streams cut, but clearing the pending cut in eg_records failed: %s "
			 "(the next writer cuts again)",
			 strerror(-rc));
		return rc;
	}
	rec->cut_pending = 0;
	return 0;
}

#define SCAN_BATCH 256

static void note(const struct eg_sandbox_key *key, const struct eg_exec_record *rec,
		 struct eg_sandbox_key *out, size_t max, size_t *n)
{
	if (!rec->cut_pending)
		return;
	if (*n < max)
		out[*n] = *key;
	(*n)++;
}

/* One key at a time: kernels or maps without batch lookups. */
static int scan_by_key(int fd, struct eg_sandbox_key *out, size_t max, size_t *n)
{
	struct eg_sandbox_key key, next;
	struct eg_exec_record rec;
	bool have = false;

	*n = 0;
	while (!bpf_map_get_next_key(fd, have ? &key : NULL, &next)) {
		key = next;
		have = true;
		if (bpf_map_lookup_elem_flags(fd, &key, &rec, BPF_F_LOCK)) {
			if (errno == ENOENT)
				continue; /* forgotten while we walked */
			return -errno;
		}
		note(&key, &rec, out, max, n);
	}
	return errno == ENOENT ? 0 : -errno;
}

int eg_cut_pending_list(struct eg_runtime *rt, struct eg_sandbox_key *out, size_t max, size_t *n)
{
	static __thread struct eg_sandbox_key keys[SCAN_BATCH];
	static __thread struct eg_exec_record vals[SCAN_BATCH];
	LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = BPF_F_LOCK);
	int fd = rt->maps.fd[EG_MAP_RECORDS];
	__u32 batch = 0, count;
	bool first = true;
	int rc;

	/* Every CLI call runs this: a batch read keeps it to a few syscalls
	 * with all 16 384 records present. */
	*n = 0;
	for (;;) {
		count = SCAN_BATCH;
		rc = bpf_map_lookup_batch(fd, first ? NULL : &batch, &batch, keys, vals, &count,
					  &opts);
		if (rc && errno != ENOENT)
			return first ? scan_by_key(fd, out, max, n) : -errno;
		for (__u32 i = 0; i < count; i++)
			note(&keys[i], &vals[i], out, max, n);
		if (rc)
			return 0; /* ENOENT: the last batch */
		first = false;
	}
}
