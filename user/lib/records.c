// SPDX-License-Identifier: Apache-2.0
/* install / retire / forget / show / list on the worker handle: the lock
 * discipline around the loader's writers (user/loader/install.c, forget.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "lib/worker.h"
#include "loader/cut_intent.h"

static const char *const outcome_names[] = {
    [EG_INSTALLED_NEW] = "new",
    [EG_INSTALLED_REPLACED] = "replaced",
    [EG_INSTALLED_REACTIVATED] = "reactivated",
    [EG_INSTALLED_ACTIVATION] = "activation",
    [EG_INSTALLED_UNCHANGED] = "unchanged",
};

static enum eg_install_outcome outcome_of(enum eg_install_kind k)
{
	switch (k) {
	case EG_INSTALL_NEW:
		return EG_INSTALLED_NEW;
	case EG_INSTALL_REPLACED:
		return EG_INSTALLED_REPLACED;
	case EG_INSTALL_REACTIVATED:
		return EG_INSTALLED_REACTIVATED;
	case EG_INSTALL_ACTIVATION:
		return EG_INSTALLED_ACTIVATION;
	case EG_INSTALL_UNCHANGED:
		break;
	}
	return EG_INSTALLED_UNCHANGED;
}

/* A path with a newline or another control character would forge lines in
 * logs and events; no real socket path needs one. */
static int check_path(const char *role, const char *path, char *err, size_t err_size)
{
	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		if (*p < 0x20 || *p == 0x7f) {
			snprintf(err, err_size, "%s socket: byte %zu is control character 0x%02x",
				 role, (size_t)(p - (const unsigned char *)path), *p);
			return -EINVAL;
		}
	return 0;
}

static void cuts_of(const struct eg_revoke_report *r, struct eg_stream_cuts *out)
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
	if (!out->error && r->err[0])
		out->error = -EIO; /* the streams were cut, the intent not cleared */
	snprintf(out->error_text, sizeof(out->error_text), "%s", r->err);
}

/* Every port the API takes fits the core's record, and so the kernel's
 * (loader/runtime.c asserts that one). */
_Static_assert(sizeof(((struct eg_install_spec *)0)->ports) /
		       sizeof(((struct eg_install_spec *)0)->ports[0]) ==
		   sizeof(((struct eg_record *)0)->ports) / sizeof(struct eg_port_rule),
	       "eg_install_spec and eg_record ports");
_Static_assert(EG_WORKER_MAX_ENDPOINTS == EG_INSTALL_MAX_ENDPOINTS,
	       "eg_install_spec and eg_install_req endpoints");

static int spec_to_req(const struct eg_install_spec *spec, struct eg_install_req *req, char *err,
		       size_t err_size)
{
	if (spec->n_bridge_sockets > EG_WORKER_MAX_ENDPOINTS ||
	    spec->n_vmm_sockets > EG_WORKER_MAX_ENDPOINTS ||
	    spec->n_vsock > EG_WORKER_MAX_ENDPOINTS || spec->n_ports > EG_RECORD_MAX_PORTS ||
	    spec->n_service_addrs > EG_WORKER_MAX_ENDPOINTS) {
		snprintf(err, err_size, "install: at most %d endpoints of each kind and %d ports",
			 EG_WORKER_MAX_ENDPOINTS, EG_RECORD_MAX_PORTS);
		return -EINVAL;
	}
	memset(req, 0, sizeof(*req));
	memcpy(req->id.sandbox, spec->sandbox, EG_ID_BYTES);
	memcpy(req->id.worker, spec->worker, EG_ID_BYTES);
	memcpy(req->id.pod_uid, spec->pod_uid, EG_ID_BYTES);
	req->id.substrate = spec->substrate;
	req->id.generation = spec->generation;
	req->id.activation = spec->activation;
	for (size_t i = 0; i < spec->n_ports; i++) {
		req->id.ports[i].port = spec->ports[i].port;
		req->id.ports[i].proto = spec->ports[i].proto;
	}
	req->id.nports = (uint8_t)spec->n_ports;
	req->bridge_pid = spec->bridge_pid;
	req->vmm_pid = spec->vmm_pid;
	for (size_t i = 0; i < spec->n_bridge_sockets; i++)
		if (check_path("bridge", spec->bridge_sockets[i], err, err_size))
			return -EINVAL;
	for (size_t i = 0; i < spec->n_vmm_sockets; i++)
		if (check_path("vmm", spec->vmm_sockets[i], err, err_size))
			return -EINVAL;
	for (size_t i = 0; i < spec->n_bridge_sockets; i++)
		req->bridge_sockets[i] = spec->bridge_sockets[i];
	req->n_bridge_sockets = spec->n_bridge_sockets;
	for (size_t i = 0; i < spec->n_vmm_sockets; i++)
		req->vmm_sockets[i] = spec->vmm_sockets[i];
	req->n_vmm_sockets = spec->n_vmm_sockets;
	memcpy(req->vsock, spec->vsock, spec->n_vsock * sizeof(spec->vsock[0]));
	req->n_vsock = spec->n_vsock;
	memcpy(req->service_addrs, spec->service_addrs,
	       spec->n_service_addrs * sizeof(spec->service_addrs[0]));
	req->n_service_addrs = spec->n_service_addrs;
	return 0;
}

int eg_worker_install(struct eg_worker *w, const struct eg_install_spec *spec,
		      struct eg_install_report *rep, char *err, size_t err_size)
{
	struct eg_install_result res;
	struct eg_install_req req;
	pthread_mutex_t *stripe;
	int rc;

	EG_WK_ERRBUF(err, err_size);
	memset(rep, 0, sizeof(*rep));
	rc = spec_to_req(spec, &req, err, err_size);
	if (rc)
		return rc;
	stripe = eg_wk_stripe(w, spec->sandbox);
	pthread_mutex_lock(stripe);
	rc = eg_wk_write_begin(w, err, err_size);
	if (!rc) {
		rc = eg_wk_maps_enter(w, err, err_size);
		if (!rc) {
			rc = eg_install(&w->rt, &req, &res, err, err_size);
			eg_wk_maps_exit(w);
		}
		eg_wk_write_end(w);
	}
	pthread_mutex_unlock(stripe);
	if (rc)
		return rc;
	rep->outcome = outcome_of(res.kind);
	rep->outcome_name = outcome_names[rep->outcome];
	rep->had_before = res.had_before;
	rep->before = res.before;
	rep->after = res.after;
	memset(&rep->before.lock, 0, sizeof(rep->before.lock));
	memset(&rep->after.lock, 0, sizeof(rep->after.lock));
	rep->endpoints_added = res.endpoints_added;
	rep->endpoints_claimed = res.endpoints_claimed;
	rep->inodes = res.inodes;
	rep->grants_dropped = res.grants_dropped;
	cuts_of(&res.streams, &rep->streams);
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

int eg_worker_retire_report(struct eg_worker *w, const __u8 sandbox[EG_ID_BYTES],
			    struct eg_exec_record *after, struct eg_stream_cuts *streams, char *err,
			    size_t err_size)
{
	struct eg_exec_record local;
	struct eg_revoke_report cuts;
	int rc;

	EG_WK_ERRBUF(err, err_size);
	if (!after)
		after = &local;
	rc = LOCKED_WRITE(w, sandbox, err, err_size,
			  eg_retire_report(&w->rt, sandbox, after, &cuts, err, err_size));
	memset(&after->lock, 0, sizeof(after->lock));
	if (streams) {
		if (rc)
			memset(&cuts, 0, sizeof(cuts));
		cuts_of(&cuts, streams);
	}
	return rc;
}

int eg_worker_retire(struct eg_worker *w, const __u8 sandbox[EG_ID_BYTES],
		     struct eg_exec_record *after, char *err, size_t err_size)
{
	return eg_worker_retire_report(w, sandbox, after, NULL, err, err_size);
}

int eg_worker_forget(struct eg_worker *w, const __u8 sandbox[EG_ID_BYTES], unsigned *endpoints,
		     char *err, size_t err_size)
{
	return eg_worker_forget_report(w, sandbox, endpoints, NULL, err, err_size);
}

int eg_worker_forget_report(struct eg_worker *w, const __u8 sandbox[EG_ID_BYTES],
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
		cuts_of(&cuts, streams);
	return rc;
}

/* --- stream cuts a killed writer left (loader/cut_intent.h) ------------------ */

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

int eg_worker_finish_cuts(struct eg_worker *w, const __u8 *skip,
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
		cuts_of(&cuts, &done.streams);
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

int eg_worker_show(struct eg_worker *w, const __u8 sandbox[EG_ID_BYTES],
		   struct eg_sandbox_info *out, char *err, size_t err_size)
{
	char s[EG_UUID_TEXT_LEN];
	int rc;

	memset(out, 0, sizeof(*out));
	EG_WK_ERRBUF(err, err_size);
	rc = eg_wk_maps_enter(w, err, err_size);
	if (rc)
		return rc;
	rc = eg_record_read(&w->rt.maps, sandbox, &out->record);
	if (!rc)
		rc = eg_endpoints_count(&w->rt, sandbox, &out->n_endpoints);
	if (!rc)
		rc = eg_grants_count(&w->rt, sandbox, &out->n_grants);
	if (!rc)
		rc = eg_service_addrs_of(&w->rt, sandbox, out->service_addrs,
					 EG_WORKER_MAX_ENDPOINTS, &out->n_service_addrs);
	eg_wk_maps_exit(w);
	memset(&out->record.lock, 0, sizeof(out->record.lock));
	if (rc) {
		eg_uuid_format(sandbox, s);
		snprintf(err, err_size, "sandbox %s: %s", s,
			 rc == -ENOENT ? "no runtime record" : strerror(-rc));
	}
	return rc;
}

int eg_worker_service_addrs(struct eg_worker *w, const __u8 sandbox[EG_ID_BYTES],
			    struct eg_inet_key *out, size_t max, size_t *n, char *err,
			    size_t err_size)
{
	char s[EG_UUID_TEXT_LEN];
	int rc;

	EG_WK_ERRBUF(err, err_size);
	rc = eg_wk_maps_enter(w, err, err_size);
	if (rc)
		return rc;
	rc = eg_service_addrs_of(&w->rt, sandbox, out, max, n);
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
	struct eg_exec_record *recs;
	size_t n, cap;
};

static int list_locked(struct eg_worker *w, struct list_buf *b, char *err, size_t err_size)
{
	int fd = w->rt.maps.fd[EG_MAP_RECORDS];
	struct eg_sandbox_key key, next;
	struct eg_exec_record rec;
	bool have = false;
	int rc;

	while (!bpf_map_get_next_key(fd, have ? &key : NULL, &next)) {
		key = next;
		have = true;
		rc = eg_record_read(&w->rt.maps, key.id, &rec);
		if (rc == -ENOENT)
			continue; /* forgotten while we walked */
		if (rc) {
			if (err && err_size)
				snprintf(err, err_size, "map eg_records: %s", strerror(-rc));
			return rc;
		}
		memset(&rec.lock, 0, sizeof(rec.lock));
		if (b->n == b->cap) {
			size_t cap = b->cap ? 2 * b->cap : 64;
			struct eg_exec_record *r = realloc(b->recs, cap * sizeof(*r));

			if (!r) {
				snprintf(err, err_size, "map eg_records: out of memory");
				return -ENOMEM;
			}
			b->recs = r;
			b->cap = cap;
		}
		b->recs[b->n++] = rec;
	}
	return 0;
}

int eg_worker_list(struct eg_worker *w, int (*fn)(const struct eg_exec_record *rec, void *ctx),
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
