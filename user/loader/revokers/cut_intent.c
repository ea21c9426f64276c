// SPDX-License-Identifier: Apache-2.0
/* Finishing a stream cut, and finding the ones a killed writer left
 * (loader/revokers/cut_intent.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include "loader/revokers/cut_intent.h"
#include "loader/records/runtime.h"

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

struct pending_scan {
	struct eg_sandbox_key *out;
	size_t max, *n;
};

static int note(const void *key, const void *value, void *arg)
{
	const struct eg_exec_record *rec = value;
	struct pending_scan *p = arg;

	if (!rec->cut_pending)
		return 0;
	if (*p->n < p->max)
		memcpy(&p->out[*p->n], key, sizeof(*p->out));
	(*p->n)++;
	return 0;
}

int eg_cut_pending_list(struct eg_runtime *rt, struct eg_sandbox_key *out, size_t max, size_t *n)
{
	struct pending_scan p = {.out = out, .max = max, .n = n};

	/* Every CLI call runs this: a batch read keeps it to a few syscalls
	 * with all 16 384 records present. */
	*n = 0;
	return eg_map_walk(rt->maps.fd[EG_MAP_RECORDS], BPF_F_LOCK, note, &p);
}
