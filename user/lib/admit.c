// SPDX-License-Identifier: Apache-2.0
/* admit / check / revoke on the worker handle. The token is decoded once:
 * authentication yields the capability, whose sandbox picks the lock stripe
 * and the record to compare with. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "lib/worker.h"
#include "loader/endpoints/inet.h"
#include "loader/process/proc_id.h"
#include "loader/maps/view.h"

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int grant_write(struct eg_worker *w, struct eg_grant *g)
{
	unsigned dropped;
	int rc;

	rc = eg_grant_admit_write(&w->rt.maps, g);
	if (rc == -E2BIG || rc == -ENOMEM || rc == -ENOSPC) {
		/* Full: dead grants are the only thing that can go. */
		eg_grants_gc(&w->rt, NULL, &dropped);
		rc = eg_grant_admit_write(&w->rt.maps, g);
	}
	return rc == -E2BIG || rc == -ENOMEM ? -ENOSPC : rc;
}

/* The ServicePort side of a grant (TCP tier): the same process, sandbox,
 * epoch and expiry, for the capability's port and protocol only. */
static int service_grant_write(struct eg_worker *w, const struct eg_grant *g, uint16_t port,
			       uint8_t proto)
{
	struct eg_service_grant sg;
	unsigned dropped = 0;
	int rc;

	memset(&sg, 0, sizeof(sg));
	sg.key.proc = g->key.proc;
	memcpy(sg.key.sandbox, g->key.sandbox, EG_ID_BYTES);
	sg.key.port = port;
	sg.key.proto = proto;
	sg.generation = g->generation;
	sg.epoch = g->epoch;
	sg.expiry_ns = g->expiry_ns;
	rc = eg_service_grant_write(&w->rt.maps, &sg);
	if (rc == -E2BIG || rc == -ENOMEM || rc == -ENOSPC) {
		eg_service_grants_gc(&w->rt.maps, NULL, eg_boottime_ns(), &dropped);
		rc = eg_service_grant_write(&w->rt.maps, &sg);
	}
	return rc == -E2BIG || rc == -ENOMEM ? -ENOSPC : rc;
}

/* The verdict, and with subject the grant. */
static int decide(struct eg_worker *w, const struct eg_proc_id *subject,
		  const struct eg_admit_args *a, struct eg_verdict_result *res, char *err,
		  size_t err_size)
{
	uint8_t buf[EG_CAP_TEXT_MAX];
	const uint8_t *raw = a->token;
	size_t len = a->token_len;
	struct eg_admission adm = {.cache = w->cache, .cache_lock = &w->cache_lock};
	struct eg_capability cap;
	struct eg_exec_record krec;
	struct eg_record rec;
	struct eg_grant g;
	pthread_mutex_t *stripe;
	uint64_t now_ns, now, gen, boot_ns, expiry_ns;
	char s[EG_UUID_TEXT_LEN];
	bool hit;
	int rc = 0;

	memset(res, 0, sizeof(*res));
	memset(&krec, 0, sizeof(krec));
	memset(&g, 0, sizeof(g));
	if (subject)
		eg_process_of(subject, &res->subject);
	if (a->token_text) {
		if (eg_cap_text_to_bin(a->token_text, strlen(a->token_text), buf, sizeof(buf),
				       &len) != EG_DECODE_OK) {
			res->d.verdict = EG_DENY;
			res->d.reason = EG_REASON_MALFORMED;
			res->d.decode_err = EG_DECODE_BAD_TEXT;
			return 0;
		}
		raw = buf;
	}
	now_ns = a->now_unix ? a->now_unix * 1000000000ULL : realtime_ns();
	now = now_ns / 1000000000ULL;

	pthread_rwlock_rdlock(&w->keys_lock);
	adm.keys = w->keys;
	gen = w->keys->generation;
	res->d = eg_authenticate(&adm, raw, len, now, &cap, &hit);
	pthread_rwlock_unlock(&w->keys_lock);
	if (res->d.reason != EG_REASON_OK) {
		/* unknown-key and bad-signature decoded: say which token was
		 * refused, signed, though nothing in it is authenticated. */
		if (res->d.reason != EG_REASON_MALFORMED) {
			atomic_fetch_add(&w->cache_misses, 1);
			eg_admission_result_cap(res, &cap);
			eg_wk_sign_verdict(w, res, now);
		}
		return 0;
	}
	atomic_fetch_add(hit ? &w->cache_hits : &w->cache_misses, 1);
	res->cache_hit = hit;
	eg_admission_result_cap(res, &cap);

	/* From here to the grant, no install/retire/forget of this sandbox
	 * runs in this process: the record compared is the record granted
	 * against, and it was published whole. */
	stripe = eg_wk_stripe(w, cap.id.sandbox);
	pthread_mutex_lock(stripe);
	rc = eg_wk_maps_enter(w, err, err_size);
	if (rc) {
		pthread_mutex_unlock(stripe);
		return rc;
	}
	rc = eg_record_read(&w->rt.maps, cap.id.sandbox, &krec);
	if (rc && rc != -ENOENT) {
		snprintf(err, err_size, "sandbox %s: reading eg_records: %s",
			 (eg_uuid_format(cap.id.sandbox, s), s), strerror(-rc));
		goto out;
	}
	res->had_record = rc == 0;
	rc = 0;
	if (res->had_record) {
		eg_runtime_record_of(&krec, &res->record);
		/* A substrate the identity cannot hold fails as an unreadable
		 * record does: no verdict, never one on a truncated value. */
		rc = eg_record_from_kernel(&krec, &rec, err, err_size);
		if (rc)
			goto out;
	}
	res->d = eg_compare(&cap, res->had_record ? &rec : NULL, now, &a->req);
	if (res->d.verdict != EG_ALLOW)
		goto out;
	if (!hit) {
		pthread_mutex_lock(&w->cache_lock);
		eg_token_cache_put(w->cache, raw, &cap, gen);
		pthread_mutex_unlock(&w->cache_lock);
	}
	if (!subject)
		goto out;

	/* The grant dies with the token: at the instant the verifier stops
	 * accepting it (core/comparator.h: now <= expiry + EG_CLOCK_SKEW, in
	 * whole seconds, so up to expiry + EG_CLOCK_SKEW + 1), so that an
	 * allow inside the skew is a grant the kernel honours, never an allow
	 * whose connect fails. Mapped from the wall clock to CLOCK_BOOTTIME,
	 * which is what BPF reads and which never jumps. It carries the epoch
	 * of the record just compared. */
	boot_ns = eg_boottime_ns();
	g.scope = cap.scope;
	g.key.proc = *subject;
	memcpy(g.key.sandbox, cap.id.sandbox, EG_ID_BYTES);
	g.generation = krec.generation;
	g.epoch = krec.epoch;
	expiry_ns = (cap.expiry + EG_CLOCK_SKEW + 1) * 1000000000ULL;
	g.expiry_ns = expiry_ns > now_ns ? boot_ns + (expiry_ns - now_ns) : boot_ns;
	eg_grant_info_of(&g, &res->grant);
	rc = grant_write(w, &g);
	if (rc) {
		snprintf(err, err_size, "grant for pid %u: writing eg_grants: %s", subject->tgid,
			 rc == -ENOSPC ? "map full (no dead grant to drop)" : strerror(-rc));
		goto out;
	}
	if ((cap.scope & EG_SCOPE_SERVICEPORT) && cap.port) {
		rc = service_grant_write(w, &g, cap.port, cap.proto);
		if (rc) {
			snprintf(err, err_size, "grant for pid %u: writing eg_service_grants: %s",
				 subject->tgid,
				 rc == -ENOSPC ? "map full (no dead grant to drop)"
					       : strerror(-rc));
			goto out;
		}
	}
	res->granted = true;
out:
	eg_wk_maps_exit(w);
	pthread_mutex_unlock(stripe);
	if (!rc)
		eg_wk_sign_verdict(w, res, now);
	return rc;
}

static int identify(const struct eg_subject *who, struct eg_proc_id *out, char *err,
		    size_t err_size)
{
	return who->pidfd >= 0 ? eg_proc_identify_pidfd(who->pidfd, out, err, err_size)
			       : eg_proc_identify(who->pid, out, err, err_size);
}

int eg_worker_admit(struct eg_worker *w, const struct eg_subject *who,
		    const struct eg_admit_args *a, struct eg_verdict_result *res, char *err,
		    size_t err_size)
{
	struct eg_proc_id proc;
	int rc;

	EG_WK_ERRBUF(err, err_size);
	memset(res, 0, sizeof(*res));
	/* The process first: a verdict for a process that is not there is
	 * worth nothing, and its identity must be fixed before the grant. */
	if (who->known && who->pidfd >= 0) {
		eg_proc_id_of(who->known, &proc);
		rc = eg_proc_pidfd_alive(who->pidfd);
		if (rc)
			snprintf(err, err_size, "pid %u: the process has exited", proc.tgid);
	} else {
		rc = identify(who, &proc, err, err_size);
	}
	if (rc)
		return rc;
	return decide(w, &proc, a, res, err, err_size);
}

int eg_worker_identify(const struct eg_subject *who, struct eg_process *out, char *err,
		       size_t err_size)
{
	struct eg_proc_id id;
	int rc;

	EG_WK_ERRBUF(err, err_size);
	rc = identify(who, &id, err, err_size);
	if (!rc)
		eg_process_of(&id, out);
	return rc;
}

int eg_worker_check(struct eg_worker *w, const struct eg_admit_args *a,
		    struct eg_verdict_result *res, char *err, size_t err_size)
{

	EG_WK_ERRBUF(err, err_size);
	return decide(w, NULL, a, res, err, err_size);
}

int eg_worker_revoke(struct eg_worker *w, pid_t pid, const uint8_t sandbox[EG_ID_BYTES],
		     unsigned *removed, char *err, size_t err_size)
{
	int rc;

	EG_WK_ERRBUF(err, err_size);
	pthread_mutex_lock(eg_wk_stripe(w, sandbox));
	rc = eg_wk_maps_enter(w, err, err_size);
	if (!rc) {
		rc = eg_revoke(&w->rt, pid, sandbox, removed, err, err_size);
		eg_wk_maps_exit(w);
	}
	pthread_mutex_unlock(eg_wk_stripe(w, sandbox));
	return rc;
}
