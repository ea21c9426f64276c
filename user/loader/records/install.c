// SPDX-License-Identifier: Apache-2.0
/* install / retire: the only writers of eg_records and the endpoint maps.
 *
 * Publication order keeps every intermediate state fail-closed: the record
 * is written (in place, under its lock) before any endpoint that points at
 * it; a new path becomes visible to BPF only when its filter entry is added,
 * after its endpoint; an endpoint taken over from a retired sandbox is
 * re-pointed in place. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "core/epoch_rule.h"
#include "core/ids.h"
#include "loader/revokers/cut_intent.h"
#include "loader/fault.h"
#include "loader/records/install_plan.h"
#include "execgate/verdict.h"
#include "loader/endpoints/path_filter.h"
#include "loader/process/proc_id.h"
#include "loader/endpoints/lsm_unix_inode.h"
#include "loader/endpoints/inet.h"
#include "loader/revokers/revoke.h"
#include "loader/records/runtime.h"
#include "loader/maps/view.h"

static const char *sandbox_text(const __u8 *id, char buf[EG_UUID_TEXT_LEN])
{
	eg_uuid_format(id, buf);
	return buf;
}

static bool proc_eq(const struct eg_proc_id *a, const struct eg_proc_id *b)
{
	return a->tgid == b->tgid && a->start_boottime_ns == b->start_boottime_ns &&
	       a->exe_ino == b->exe_ino && a->exe_dev == b->exe_dev;
}

/* Same route, processes and profile: installing it again changes nothing. */
static bool same_execution(const struct eg_exec_record *a, const struct eg_exec_record *b)
{
	return !memcmp(a->worker, b->worker, EG_ID_BYTES) &&
	       !memcmp(a->pod_uid, b->pod_uid, EG_ID_BYTES) && a->substrate == b->substrate &&
	       proc_eq(&a->bridge, &b->bridge) && proc_eq(&a->vmm, &b->vmm) &&
	       a->nports == b->nports && !memcmp(a->ports, b->ports, sizeof(a->ports));
}

static int plan_endpoint(struct eg_runtime *rt, struct eg_endpoint_plan *p, const __u8 *sandbox,
			 char *err, size_t err_size)
{
	char a[EG_UUID_TEXT_LEN], b[EG_UUID_TEXT_LEN];
	struct eg_exec_record owner;
	struct eg_endpoint ep;
	int rc;

	rc = eg_endpoint_read(&rt->maps, p->map, &p->key, &ep);
	if (rc == -ENOENT) {
		p->exists = false;
		return 0;
	}
	if (rc) {
		snprintf(err, err_size, "endpoint %s: reading %s: %s", p->text,
			 eg_map_names[p->map], strerror(-rc));
		return rc;
	}
	p->exists = true;
	p->same = !memcmp(ep.sandbox, sandbox, EG_ID_BYTES) && ep.role == p->role;
	if (!memcmp(ep.sandbox, sandbox, EG_ID_BYTES))
		return 0;
	/* One rule for every kind of endpoint: what an active sandbox owns is
	 * not taken, whatever name reaches it (a second path, a hard link, a
	 * path through a directory the jail controls). */
	rc = eg_record_read(&rt->maps, ep.sandbox, &owner);
	if (rc == 0 && owner.state == EG_RECORD_ACTIVE && p->map == EG_MAP_INODE_ENDPOINTS) {
		snprintf(err, err_size,
			 "endpoint %s: its socket (inode %llu, device %u:%u) is registered to "
			 "active sandbox %s (retire it first); not installing sandbox %s",
			 p->text, (unsigned long long)p->key.inode.ino, p->key.inode.dev >> 20,
			 p->key.inode.dev & 0xfffff, sandbox_text(ep.sandbox, a),
			 sandbox_text(sandbox, b));
		return -EEXIST;
	}
	if (rc == 0 && owner.state == EG_RECORD_ACTIVE) {
		snprintf(err, err_size,
			 "endpoint %s: registered to active sandbox %s (retire it first); "
			 "not installing sandbox %s",
			 p->text, sandbox_text(ep.sandbox, a), sandbox_text(sandbox, b));
		return -EEXIST;
	}
	return 0;
}

static int filter_add(struct eg_runtime *rt, const struct eg_path_key *key)
{
	struct eg_path_filter_key fk;
	__u32 count = 0;
	int fd = rt->maps.fd[EG_MAP_PATH_FILTER];

	eg_path_filter_key_make(key, &fk);
	if (bpf_map_lookup_elem(fd, &fk, &count) && errno != ENOENT)
		return -errno;
	count++;
	if (bpf_map_update_elem(fd, &fk, &count, BPF_ANY))
		return -errno;
	/* last: the bit is what sends a connect to the two entries above */
	return eg_path_hint_set(rt->maps.fd[EG_MAP_PATH_HINT], &fk);
}

static int write_endpoint(struct eg_runtime *rt, const struct eg_endpoint_plan *p,
			  const __u8 *sandbox, struct eg_install_result *res, char *err,
			  size_t err_size)
{
	struct eg_endpoint ep;
	int rc;

	if (p->map == EG_MAP_INODE_ENDPOINTS)
		res->inodes++; /* registered by this install, written now or before */
	if (p->exists && p->same)
		return 0;
	memset(&ep, 0, sizeof(ep));
	ep.role = p->role;
	memcpy(ep.sandbox, sandbox, EG_ID_BYTES);
	rc = eg_endpoint_write(&rt->maps, p->map, &p->key, &ep);
	if (!rc && !p->exists && p->map == EG_MAP_ENDPOINTS)
		rc = filter_add(rt, &p->key.path);  /* publishes the path to BPF */
	if (!rc && p->map == EG_MAP_INET_ENDPOINTS) /* the hint bit last, as for paths */
		rc = eg_inet_hint_set(rt->maps.fd[EG_MAP_INET_HINT], &p->key.inet);
	if (rc) {
		snprintf(err, err_size, "endpoint %s: writing %s: %s", p->text,
			 eg_map_names[p->map], strerror(-rc));
		return rc;
	}
	if (p->map == EG_MAP_INODE_ENDPOINTS)
		return 0;
	if (p->exists)
		res->endpoints_claimed++;
	else
		res->endpoints_added++;
	return 0;
}

/* The epoch rule (core/epoch_rule.h) on the installed record old (NULL:
 * none): sets nr's epoch and *kind, or refuses with -ESTALE and why. */
static int decide(const struct eg_exec_record *old, struct eg_exec_record *nr,
		  enum eg_install_outcome *kind, char *err, size_t err_size)
{
	struct eg_epoch_installed in;
	struct eg_epoch_asked asked = {
	    .generation = nr->generation,
	    .activation = nr->activation,
	    .same_execution = old && same_execution(old, nr),
	};
	enum eg_epoch_outcome outcome;
	char s[EG_UUID_TEXT_LEN];
	uint64_t epoch = 0;

	if (old) {
		in.generation = old->generation;
		in.activation = old->activation;
		in.retired = old->state == EG_RECORD_RETIRED;
		in.epoch = old->epoch;
	}
	sandbox_text(nr->sandbox, s);
	outcome = eg_epoch_rule(old ? &in : NULL, &asked, &epoch);
	if (!eg_epoch_refused(outcome))
		nr->epoch = epoch;
	switch (outcome) {
	case EG_EPOCH_NEW:
		*kind = EG_INSTALLED_NEW;
		return 0;
	case EG_EPOCH_REPLACED:
		*kind = EG_INSTALLED_REPLACED;
		return 0;
	case EG_EPOCH_REACTIVATED:
		*kind = EG_INSTALLED_REACTIVATED;
		return 0;
	case EG_EPOCH_ACTIVATION:
		*kind = EG_INSTALLED_ACTIVATION;
		return 0;
	case EG_EPOCH_UNCHANGED:
		*kind = EG_INSTALLED_UNCHANGED;
		return 0;
	case EG_EPOCH_STALE_GENERATION:
		snprintf(err, err_size,
			 "sandbox %s: generation %llu is older than installed generation %llu: "
			 "refused as stale",
			 s, (unsigned long long)nr->generation,
			 (unsigned long long)old->generation);
		return -ESTALE;
	case EG_EPOCH_STALE_ACTIVATION:
	case EG_EPOCH_STALE_RETIRED:
		snprintf(err, err_size,
			 "sandbox %s: generation %llu attempt %u is %s (installed attempt %u%s): "
			 "refused as stale",
			 s, (unsigned long long)nr->generation, nr->activation,
			 nr->activation < old->activation ? "older than installed" : "retired",
			 old->activation, old->state == EG_RECORD_RETIRED ? ", retired" : "");
		return -ESTALE;
	case EG_EPOCH_CHANGED_EXECUTION:
		break;
	}
	snprintf(err, err_size,
		 "sandbox %s: generation %llu attempt %u is installed with another route or "
		 "other processes: a change needs a new --activation",
		 s, (unsigned long long)nr->generation, nr->activation);
	return -ESTALE;
}

/* Decide: the installed record against the plan (the epoch rule, the
 * mode kept or set) and each endpoint against its map. Reads the maps,
 * writes nothing. */
static int decide_install(struct eg_runtime *rt, struct eg_install_plan *pl, int mode,
			  struct eg_install_result *res, char *err, size_t err_size)
{
	int rc;

	rc = eg_record_read(&rt->maps, pl->nr.sandbox, &res->before);
	if (rc && rc != -ENOENT) {
		snprintf(err, err_size, "map eg_records: %s", strerror(-rc));
		return rc;
	}
	res->had_before = rc == 0;
	/* A replacement keeps the sandbox's mode: an install never silently
	 * moves it between audit and enforce (docs/design.md, "Modes"). */
	if (mode >= 0)
		pl->nr.mode = (__u32)mode;
	else
		pl->nr.mode = res->had_before ? res->before.mode : EG_MODE_INHERIT;
	rc = decide(res->had_before ? &res->before : NULL, &pl->nr, &res->outcome, err, err_size);
	if (rc)
		return rc;
	for (size_t i = 0; i < pl->n; i++) {
		rc = plan_endpoint(rt, &pl->ep[i], pl->nr.sandbox, err, err_size);
		if (rc)
			return rc;
	}
	return 0;
}

/* Publish: what was decided, in the order that keeps every step
 * fail-closed, then the cleanup and the cut an epoch move needs. */
static int publish_install(struct eg_runtime *rt, struct eg_install_plan *pl,
			   struct eg_install_result *res, char *err, size_t err_size)
{
	struct eg_exec_record *nr = &pl->nr;
	bool moved, mode_only;
	int rc;

	/* Publish: record first (one in-place locked write), then endpoints.
	 * A move of the epoch carries the intent to cut the streams below it
	 * in the same write, and an intent a killed writer left stays set
	 * until this call has cut (loader/revokers/cut_intent.h). */
	moved = res->outcome == EG_INSTALLED_REPLACED || res->outcome == EG_INSTALLED_REACTIVATED;
	nr->cut_pending = moved || (res->had_before && res->before.cut_pending);
	/* Only the mode asked for differs: the same record with the new mode. */
	mode_only = res->outcome == EG_INSTALLED_UNCHANGED && nr->mode != res->before.mode;
	if (res->outcome != EG_INSTALLED_UNCHANGED || mode_only) {
		rc = eg_record_write(&rt->maps, nr);
		if (rc == -E2BIG) {
			/* A new sandbox and every slot taken: the kernel's E2BIG
			 * ("Argument list too long") would tell an operator nothing. */
			char s[EG_UUID_TEXT_LEN];

			snprintf(err, err_size,
				 "sandbox %s: map eg_records is full (%d records): not installed",
				 sandbox_text(nr->sandbox, s), EG_MAX_SANDBOXES);
			return -ENOSPC;
		}
		if (rc) {
			snprintf(err, err_size, "map eg_records: writing: %s", strerror(-rc));
			return rc;
		}
	}
	res->after = res->outcome == EG_INSTALLED_UNCHANGED && !mode_only ? res->before : *nr;
	for (size_t i = 0; i < pl->n; i++) {
		rc = write_endpoint(rt, &pl->ep[i], nr->sandbox, res, err, err_size);
		if (rc)
			return rc;
	}
	if (moved) {
		eg_grants_gc(rt, nr->sandbox, &res->grants_dropped); /* already dead: cleanup */
		eg_service_grants_gc(&rt->maps, nr->sandbox, eg_boottime_ns(),
				     &res->grants_dropped);
	}
	if (nr->cut_pending) {
		/* The epoch moved, now or under a writer killed before its cut:
		 * cut the streams of the old one before returning (a failure
		 * is reported in res->streams, the install stands and the
		 * intent stays for the next writer). */
		eg_fault_point("epoch-moved");
		eg_cut_finish(rt, &res->after, &res->streams);
	}
	return 0;
}

int eg_install(struct eg_runtime *rt, const struct eg_install_spec *spec,
	       struct eg_install_result *res, char *err, size_t err_size)
{
	return eg_install_mode(rt, spec, -1, res, err, err_size);
}

int eg_install_mode(struct eg_runtime *rt, const struct eg_install_spec *spec, int mode,
		    struct eg_install_result *res, char *err, size_t err_size)
{
	struct eg_install_plan pl;
	int rc;

	if (mode > EG_MODE_AUDIT) {
		snprintf(err, err_size, "install: mode %d: not inherit, enforce or audit", mode);
		return -EINVAL;
	}
	memset(res, 0, sizeof(*res));
	rc = eg_install_plan(spec, &pl, err, err_size);
	if (!rc)
		rc = decide_install(rt, &pl, mode, res, err, err_size);
	if (!rc)
		rc = publish_install(rt, &pl, res, err, err_size);
	eg_install_plan_release(&pl);
	return rc;
}

int eg_retire(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES], struct eg_exec_record *after,
	      char *err, size_t err_size)
{
	return eg_retire_report(rt, sandbox, after, NULL, err, err_size);
}

int eg_retire_report(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES],
		     struct eg_exec_record *after, struct eg_revoke_report *streams, char *err,
		     size_t err_size)
{
	struct eg_revoke_report local;
	char s[EG_UUID_TEXT_LEN];
	unsigned dropped;
	int rc;

	rc = eg_record_read(&rt->maps, sandbox, after);
	if (rc) {
		snprintf(err, err_size, "sandbox %s: %s", sandbox_text(sandbox, s),
			 rc == -ENOENT ? "no runtime record" : strerror(-rc));
		return rc;
	}
	if (!streams)
		streams = &local;
	memset(streams, 0, sizeof(*streams));
	if (after->state == EG_RECORD_RETIRED) {
		/* Retired already: by a writer killed before its cut, if the
		 * intent is still set. Finish it (loader/revokers/cut_intent.h). */
		if (after->cut_pending)
			eg_cut_finish(rt, after, streams);
		return 0;
	}
	after->state = EG_RECORD_RETIRED;
	after->epoch++; /* streams and grants of the execution die with it */
	after->cut_pending = 1;
	rc = eg_record_write(&rt->maps, after);
	if (rc) {
		snprintf(err, err_size, "sandbox %s: writing eg_records: %s",
			 sandbox_text(sandbox, s), strerror(-rc));
		return rc;
	}
	eg_grants_gc(rt, sandbox, &dropped);
	eg_service_grants_gc(&rt->maps, sandbox, eg_boottime_ns(), &dropped);
	eg_fault_point("epoch-moved");
	eg_cut_finish(rt, after, streams);
	return 0;
}
