// SPDX-License-Identifier: Apache-2.0
/* The table of revokers (loader/revokers/revoke.h). A new kind of stream is one row
 * here and one file: revoke_<kind>.c defining its struct eg_revoker. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "loader/maps/maps.h"
#include "loader/records/mode.h"
#include "loader/revokers/revoke.h"
#include "loader/records/runtime.h"

static const struct eg_revoker *const revokers[] = {
    &eg_revoker_unix,
    &eg_revoker_tcp,
};

int eg_revoke_stale(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES], __u64 current_epoch,
		    bool retired, struct eg_revoke_report *rep)
{
	struct eg_revoke_target t;
	int first = 0;

	memset(rep, 0, sizeof(*rep));
	memset(&t, 0, sizeof(t));
	memcpy(t.sandbox, sandbox, EG_ID_BYTES);
	t.current_epoch = current_epoch;
	t.retired = retired;
	t.audit = eg_revoke_audits(rt, sandbox);
	for (size_t i = 0; i < sizeof(revokers) / sizeof(revokers[0]); i++) {
		const struct eg_revoker *r = revokers[i];
		struct eg_revoke_count *c = &rep->kind[r->kind];
		char err[256] = "";
		int rc;

		rc = r->run(rt, &t, c, err, sizeof(err));
		/* A stale stream seen and left running is a failure of the
		 * guarantee, whatever the revoker's own return said. */
		if (!rc && c->unreachable) {
			rc = -EPERM;
			snprintf(
			    err, sizeof(err),
			    "%u stale stream(s) could not be cut (holder refused pidfd_getfd or "
			    "the socket refused destruction: CAP_SYS_PTRACE? CAP_NET_ADMIN?)",
			    c->unreachable);
		}
		if (rc) {
			c->error = rc;
			if (!first) {
				first = rc;
				snprintf(rep->err, sizeof(rep->err), "%s streams: %s", r->name,
					 err[0] ? err : strerror(-rc));
			}
		}
	}
	return first;
}

unsigned eg_revoke_total_cut(const struct eg_revoke_report *rep)
{
	unsigned n = 0;

	for (int k = 0; k < EG_REVOKE__COUNT; k++)
		n += rep->kind[k].cut;
	return n;
}

unsigned eg_revoke_total_would_cut(const struct eg_revoke_report *rep)
{
	unsigned n = 0;

	for (int k = 0; k < EG_REVOKE__COUNT; k++)
		n += rep->kind[k].would_cut;
	return n;
}

bool eg_revoke_audits(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES])
{
	bool audit = false;

	/* The record the writer just published carries the mode (an install
	 * keeps the replaced record's unless it sets one). Forget cuts before
	 * it deletes, so a record is there; without one, the global mode. A
	 * mode that cannot be read enforces. */
	return !eg_mode_of_sandbox(&rt->maps, sandbox, &audit) && audit;
}

unsigned eg_revoke_total_unreachable(const struct eg_revoke_report *rep)
{
	unsigned n = 0;

	for (int k = 0; k < EG_REVOKE__COUNT; k++)
		n += rep->kind[k].unreachable;
	return n;
}
