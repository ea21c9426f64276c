// SPDX-License-Identifier: Apache-2.0
/* install / retire / forget / show / list on the worker handle: the lock
 * discipline around the loader's writers (user/loader/records/install.c, forget.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "lib/worker.h"
#include "loader/revokers/cut_intent.h"
#include "loader/records/mode.h"
#include "loader/maps/view.h"

int eg_worker_install(struct eg_worker *w, const struct eg_install_spec *spec,
		      struct eg_install_report *rep, char *err, size_t err_size)
{
	return eg_worker_install_mode(w, spec, NULL, rep, err, err_size);
}

int eg_worker_install_mode(struct eg_worker *w, const struct eg_install_spec *spec,
			   const char *mode_text, struct eg_install_report *rep, char *err,
			   size_t err_size)
{
	__u32 m = 0;
	int mode = -1;
	struct eg_install_result res;
	pthread_mutex_t *stripe;
	int rc;

	EG_WK_ERRBUF(err, err_size);
	memset(rep, 0, sizeof(*rep));
	if (mode_text) {
		if (eg_mode_parse(mode_text, true, &m)) {
			snprintf(err, err_size, "mode %s: not enforce, audit or inherit",
				 mode_text);
			return -EINVAL;
		}
		mode = (int)m;
	}
	stripe = eg_wk_stripe(w, spec->sandbox);
	pthread_mutex_lock(stripe);
	rc = eg_wk_write_begin(w, err, err_size);
	if (!rc) {
		/* Under the writer lock: a CLI and the daemon's PUT judge the
		 * same stored selection, one after the other. */
		rc = eg_wk_install_gate(w, spec, err, err_size);
		if (!rc)
			rc = eg_wk_maps_enter(w, err, err_size);
		if (!rc) {
			rc = eg_install_mode(&w->rt, spec, mode, &res, err, err_size);
			eg_wk_maps_exit(w);
		}
		eg_wk_write_end(w);
	}
	pthread_mutex_unlock(stripe);
	if (rc)
		return rc;
	rep->outcome = res.outcome;
	rep->outcome_name = eg_install_outcome_name(res.outcome);
	rep->had_before = res.had_before;
	eg_runtime_record_of(&res.before, &rep->before);
	eg_runtime_record_of(&res.after, &rep->after);
	rep->endpoints_added = res.endpoints_added;
	rep->endpoints_claimed = res.endpoints_claimed;
	rep->inodes = res.inodes;
	rep->grants_dropped = res.grants_dropped;
	eg_stream_cuts_of(&res.streams, &rep->streams);
	eg_wk_install_warnings(w, spec, rep);
	return 0;
}

/* Runs op on sandbox under its stripe and the writer locks. */
#define LOCKED_WRITE(w, sandbox, err, err_size, call)                                              \
	({                                                                                         \
		pthread_mutex_t *stripe_ = eg_wk_stripe((w), (sandbox));                           \
		int rc_;                                                                           \
		pthread_mutex_lock(stripe_);                                                       \
		rc_ = eg_wk_write_begin((w), (err), (err_size));                                   \
		if (!rc_) {                                                                        \
			rc_ = eg_wk_maps_enter((w), (err), (err_size));                            \
			if (!rc_) {                                                                \
				rc_ = (call);                                                      \
				eg_wk_maps_exit(w);                                                \
			}                                                                          \
			eg_wk_write_end(w);                                                        \
		}                                                                                  \
		pthread_mutex_unlock(stripe_);                                                     \
		rc_;                                                                               \
	})

int eg_worker_retire_report(struct eg_worker *w, const uint8_t sandbox[EG_ID_BYTES],
			    struct eg_runtime_record *after, struct eg_stream_cuts *streams,
			    char *err, size_t err_size)
{
	struct eg_exec_record rec;
	struct eg_revoke_report cuts;
	int rc;

	EG_WK_ERRBUF(err, err_size);
	memset(&rec, 0, sizeof(rec));
	rc = LOCKED_WRITE(w, sandbox, err, err_size,
			  eg_retire_report(&w->rt, sandbox, &rec, &cuts, err, err_size));
	if (after)
		eg_runtime_record_of(&rec, after);
	if (streams) {
		if (rc)
			memset(&cuts, 0, sizeof(cuts));
		eg_stream_cuts_of(&cuts, streams);
	}
	return rc;
}

int eg_worker_retire(struct eg_worker *w, const uint8_t sandbox[EG_ID_BYTES],
		     struct eg_runtime_record *after, char *err, size_t err_size)
{
	return eg_worker_retire_report(w, sandbox, after, NULL, err, err_size);
}

int eg_worker_forget(struct eg_worker *w, const uint8_t sandbox[EG_ID_BYTES], unsigned *endpoints,
		     char *err, size_t err_size)
{
	return eg_worker_forget_report(w, sandbox, endpoints, NULL, err, err_size);
}

int eg_worker_forget_report(struct eg_worker *w, const uint8_t sandbox[EG_ID_BYTES],
			    unsigned *endpoints, struct eg_stream_cuts *streams, char *err,
			    size_t err_size)
{
	struct eg_revoke_report cuts;
	unsigned local;
	int rc;

	EG_WK_ERRBUF(err, err_size);
	if (!endpoints)
		endpoints = &local;
	memset(&cuts, 0, sizeof(cuts));
	rc = LOCKED_WRITE(w, sandbox, err, err_size,
			  eg_forget_report(&w->rt, sandbox, endpoints, &cuts, err, err_size));
	if (streams)
		eg_stream_cuts_of(&cuts, streams);
	return rc;
}

/* --- stream cuts a killed writer left (loader/revokers/cut_intent.h) ------------------ */

/* Under the locks, from the record as it is now: another writer may have
 * finished it since the list was read. 1: nothing left to do. */
static int finish_one(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES],
		      struct eg_exec_record *rec, struct eg_revoke_report *cuts)
{
	int rc = eg_record_read(&rt->maps, sandbox, rec);

	if (rc == -ENOENT || (!rc && !rec->cut_pending))
		return 1;
	return rc ? rc : eg_cut_finish(rt, rec, cuts);
}

#define FINISH_MAX 64 /* per pass; a pass repeats while more are pending */

int eg_worker_finish_cuts(struct eg_worker *w, const uint8_t *skip,
			  void (*fn)(const struct eg_cut_finished *cut, void *ctx), void *ctx,
			  char *err, size_t err_size)
{
	struct eg_sandbox_key keys[FINISH_MAX];
	int finished = 0, first = 0;
	size_t n;
	int rc;

	EG_WK_ERRBUF(err, err_size);
	/* Without the writer lock: nearly always nothing is pending, and then
	 * a read-only caller takes no lock at all. */
	rc = eg_wk_maps_enter(w, err, err_size);
	if (rc)
		return rc;
	rc = eg_cut_pending_list(&w->rt, keys, FINISH_MAX, &n);
	eg_wk_maps_exit(w);
	if (rc) {
		snprintf(err, err_size, "map eg_records: looking for pending stream cuts: %s",
			 strerror(-rc));
		return rc;
	}
	for (size_t i = 0; i < n && i < FINISH_MAX; i++) {
		struct eg_cut_finished done;
		struct eg_revoke_report cuts;
		struct eg_exec_record rec;
		char u[EG_UUID_TEXT_LEN];

		if (skip && !memcmp(skip, keys[i].id, EG_ID_BYTES))
			continue;
		memset(&done, 0, sizeof(done));
		memset(&cuts, 0, sizeof(cuts));
		memset(&rec, 0, sizeof(rec));
		memcpy(done.sandbox, keys[i].id, EG_ID_BYTES);
		eg_uuid_format(keys[i].id, u);
		rc = LOCKED_WRITE(w, keys[i].id, err, err_size,
				  finish_one(&w->rt, keys[i].id, &rec, &cuts));
		if (rc == 1)
			continue;
		done.epoch = rec.epoch;
		done.retired = rec.state == EG_RECORD_RETIRED;
		eg_stream_cuts_of(&cuts, &done.streams);
		if (rc && !done.streams.error) {
			done.streams.error = rc;
			snprintf(done.streams.error_text, sizeof(done.streams.error_text), "%.200s",
				 cuts.err[0] ? cuts.err
				 : err[0]    ? err
					     : strerror(-rc));
		}
		if (fn)
			fn(&done, ctx);
		if (rc) {
			if (!first) {
				first = rc;
				snprintf(err, err_size,
					 "sandbox %s: finishing an interrupted stream cut: %s", u,
					 done.streams.error_text);
			}
			continue;
		}
		finished++;
	}
	if (!first && n > FINISH_MAX && finished) {
		/* Those just finished are no longer listed: each pass makes
		 * progress or stops. */
		rc = eg_worker_finish_cuts(w, skip, fn, ctx, err, err_size);
		return rc < 0 ? rc : finished + rc;
	}
	return first ? first : finished;
}

/* The ServicePort addresses of sandbox, as the library returns them. */
static int service_addrs_locked(struct eg_worker *w, const uint8_t sandbox[EG_ID_BYTES],
				struct eg_inet_addr *out, size_t max, size_t *n)
{
	struct eg_inet_key keys[EG_WORKER_MAX_ENDPOINTS];
	int rc;

	*n = 0;
	rc = eg_service_addrs_of(&w->rt, sandbox, keys,
				 max < EG_WORKER_MAX_ENDPOINTS ? max : EG_WORKER_MAX_ENDPOINTS, n);
	for (size_t i = 0; !rc && i < *n; i++)
		eg_inet_addr_of(&keys[i], &out[i]);
	return rc;
}

/* The record of sandbox into out and, with info, the counts show adds:
 * one maps read-lock for all of it. */
static int record_read(struct eg_worker *w, const uint8_t sandbox[EG_ID_BYTES],
		       struct eg_runtime_record *out, struct eg_sandbox_info *info, char *err,
		       size_t err_size)
{
	struct eg_exec_record rec;
	char s[EG_UUID_TEXT_LEN];
	int rc;

	memset(&rec, 0, sizeof(rec));
	EG_WK_ERRBUF(err, err_size);
	rc = eg_wk_maps_enter(w, err, err_size);
	if (rc)
		return rc;
	rc = eg_record_read(&w->rt.maps, sandbox, &rec);
	if (!rc && info)
		rc = eg_endpoints_count(&w->rt, sandbox, &info->n_endpoints);
	if (!rc && info)
		rc = eg_grants_count(&w->rt, sandbox, &info->n_grants);
	if (!rc && info)
		rc = service_addrs_locked(w, sandbox, info->service_addrs, EG_WORKER_MAX_ENDPOINTS,
					  &info->n_service_addrs);
	eg_wk_maps_exit(w);
	eg_runtime_record_of(&rec, out);
	if (rc) {
		eg_uuid_format(sandbox, s);
		snprintf(err, err_size, "sandbox %s: %s", s,
			 rc == -ENOENT ? "no runtime record" : strerror(-rc));
	}
	return rc;
}

int eg_worker_record(struct eg_worker *w, const uint8_t sandbox[EG_ID_BYTES],
		     struct eg_runtime_record *out, char *err, size_t err_size)
{
	memset(out, 0, sizeof(*out));
	return record_read(w, sandbox, out, NULL, err, err_size);
}

int eg_worker_mode(struct eg_worker *w, const uint8_t sandbox[EG_ID_BYTES], char *mode,
		   size_t mode_size, char *err, size_t err_size)
{
	char s[EG_UUID_TEXT_LEN];
	bool audit = false;
	int rc;

	EG_WK_ERRBUF(err, err_size);
	rc = eg_wk_maps_enter(w, err, err_size);
	if (rc)
		return rc;
	rc = eg_mode_of_sandbox(&w->rt.maps, sandbox, &audit);
	eg_wk_maps_exit(w);
	if (rc) {
		eg_uuid_format(sandbox, s);
		snprintf(err, err_size, "sandbox %s: reading its mode: %s", s, strerror(-rc));
		return rc;
	}
	snprintf(mode, mode_size, "%s", audit ? "audit" : "enforce");
	return 0;
}

int eg_worker_show(struct eg_worker *w, const uint8_t sandbox[EG_ID_BYTES],
		   struct eg_sandbox_info *out, char *err, size_t err_size)
{
	memset(out, 0, sizeof(*out));
	return record_read(w, sandbox, &out->record, out, err, err_size);
}

int eg_worker_service_addrs(struct eg_worker *w, const uint8_t sandbox[EG_ID_BYTES],
			    struct eg_inet_addr *out, size_t max, size_t *n, char *err,
			    size_t err_size)
{
	char s[EG_UUID_TEXT_LEN];
	int rc;

	EG_WK_ERRBUF(err, err_size);
	rc = eg_wk_maps_enter(w, err, err_size);
	if (rc)
		return rc;
	rc = service_addrs_locked(w, sandbox, out, max, n);
	eg_wk_maps_exit(w);
	if (rc) {
		eg_uuid_format(sandbox, s);
		snprintf(err, err_size, "sandbox %s: map eg_inet_endpoints: %s", s, strerror(-rc));
	}
	return rc;
}

/* fn runs under the maps' read lock: a callback that calls back into the
 * handle would take it twice, so records are collected first. */
struct list_buf {
	struct eg_runtime_record *recs;
	size_t n, cap;
};

static int list_one(const void *key, const void *value, void *arg)
{
	struct list_buf *b = arg;

	(void)key;
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		struct eg_runtime_record *r = realloc(b->recs, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		b->recs = r;
		b->cap = cap;
	}
	eg_runtime_record_of(value, &b->recs[b->n++]);
	return 0;
}

/* Each record once, as it was when its bucket was read (eg_map_walk()): a
 * sandbox forgotten or installed meanwhile is listed or not. */
static int list_locked(struct eg_worker *w, struct list_buf *b, char *err, size_t err_size)
{
	int rc = eg_map_walk(w->rt.maps.fd[EG_MAP_RECORDS], BPF_F_LOCK, list_one, b);

	if (rc && err && err_size)
		snprintf(err, err_size, "map eg_records: %s",
			 rc == -ENOMEM ? "out of memory" : strerror(-rc));
	return rc;
}

int eg_worker_list(struct eg_worker *w, int (*fn)(const struct eg_runtime_record *rec, void *ctx),
		   void *ctx, char *err, size_t err_size)
{
	struct list_buf b = {0};
	int rc;

	EG_WK_ERRBUF(err, err_size);
	rc = eg_wk_maps_enter(w, err, err_size);
	if (rc)
		return rc;
	rc = list_locked(w, &b, err, err_size);
	eg_wk_maps_exit(w);
	for (size_t i = 0; !rc && i < b.n; i++)
		rc = fn(&b.recs[i], ctx);
	free(b.recs);
	return rc;
}
