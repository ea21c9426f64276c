/* SPDX-License-Identifier: Apache-2.0 */
/* execgate-issue fence: wait until every named worker has acked a state
 * that can no longer admit an execution of the sandbox below generation G
 * (user/fleet/ack.h, docs/fleet.md "Fence"). Reads each worker's ack, then
 * watches those keys, until all are fenced (exit 0) or the timeout
 * (exit 1, one line per lagging worker on stderr). Each ack must verify
 * under that worker's node key (--node-keys DIR/<worker>.pub): the store
 * can withhold an ack, not forge one. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <execgate/text.h>
#include "core/ids.h"
#include "core/key_file.h"
#include "core/keyset.h"
#include "fleet/ack.h"
#include "fleet/etcd.h"
#include "issue/etcd_opts.h"
#include "issue/issue.h"

#define FENCE_MAX_WORKERS 64 /* one watch stream per worker */
#define FENCE_MAX_TIMEOUT 86400
#define PREFIX_MAX	  200

static const struct eg_opt opts[] = {
    EG_OPT("etcd", "URL[,URL]", "etcd client endpoints, http:// or https:// (required)"),
    EG_OPT("prefix", "P", "the fleet's etcd prefix (default /execgate/v1)"),
    EG_OPT("sandbox", "UUID", "the sandbox being moved (required)"),
    EG_OPT("generation", "N", "the generation about to be served: fence everything below it"),
    EG_OPT("workers", "W1,W2", "the worker UUIDs that must be fenced (required, at most 64)"),
    EG_OPT("timeout", "SEC", "give up after SEC seconds, 0 to 86400 (required; 0: read once)"),
    EG_OPT("node-keys", "DIR",
	   "the workers' node public keys, DIR/<worker-uuid>.pub, each the worker's node.pub "
	   "(required)"),
    EG_OPT("allow-audit", NULL,
	   "count a worker in audit mode as fenced (it admits what enforce would refuse)"),
    EG_OPT_END,
};

static const struct issue_cmd fence_cmd = {
    .name = "fence",
    .synopsis = "--etcd URL[,URL] [--prefix P] --sandbox UUID --generation N\n"
		"       --workers W1,W2,... --node-keys DIR [--allow-audit] --timeout SEC",
    .about = "Waits until every named worker has acknowledged, under P/acks/WORKER/SANDBOX,\n"
	     "a state that can no longer admit an execution of the sandbox below generation\n"
	     "N: it applied a selection of generation N or newer, and its record is retired,\n"
	     "absent or pending, or active at generation N or newer. Prints 'fenced WORKER\n"
	     "STATE' on stdout as each worker is; exits 1 at the timeout with one line per\n"
	     "lagging worker on stderr. Each ack must verify under the worker's node key,\n"
	     "DIR/WORKER.pub: a forged, unsigned or wrongly signed ack is a lagging worker.\n"
	     "A worker in audit mode is never fenced unless --allow-audit, and then its line\n"
	     "says 'audit'. Rule and ack format: docs/fleet.md.",
    .opts = opts,
};

struct worker {
	char id[EG_ACK_UUID_LEN + 1];
	char key[PREFIX_MAX + 2 * EG_ACK_UUID_LEN + 16];
	int64_t mod_revision; /* of the newest value seen, 0: none yet */
	bool have_ack, refused, sig_refused, fenced;
	char why[160]; /* refused: the reason */
	struct eg_ack ack;
	uint8_t pk[32]; /* its node key */
	char kid[EG_KID_TEXT_LEN];
};

struct fence {
	struct worker w[FENCE_MAX_WORKERS];
	size_t n, n_fenced;
	const char *sandbox;
	uint64_t generation;
	bool allow_audit;
	struct timespec deadline;
	volatile int stop;
	bool done; /* the watcher thread ends */
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static void lowercase(char *s)
{
	for (; *s; s++)
		if (*s >= 'A' && *s <= 'F')
			*s = (char)(*s - 'A' + 'a');
}

static int parse_workers(struct fence *f, const char *list)
{
	const char *p = list, *comma;
	size_t i;

	for (;;) {
		size_t len;

		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		if (f->n == FENCE_MAX_WORKERS || len != EG_ACK_UUID_LEN)
			return -1;
		memcpy(f->w[f->n].id, p, len);
		f->w[f->n].id[len] = '\0';
		lowercase(f->w[f->n].id);
		if (!eg_ack_uuid_ok(f->w[f->n].id))
			return -1;
		for (i = 0; i < f->n; i++)
			if (!strcmp(f->w[i].id, f->w[f->n].id))
				return -1;
		f->n++;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

/* A new value (or a delete) of worker w's ack. Older than what was seen:
 * ignored (a re-read or a resumed watch may replay it). */
static void update(struct fence *f, struct worker *w, const char *value, size_t len,
		   int64_t mod_revision, bool deleted)
{
	char err[160];

	if (mod_revision <= w->mod_revision)
		return;
	w->mod_revision = mod_revision;
	w->have_ack = !deleted;
	w->refused = w->sig_refused = false;
	w->why[0] = '\0';
	memset(&w->ack, 0, sizeof(w->ack));
	if (!deleted) {
		/* the signature first: what a forged ack claims is not read */
		enum eg_ack_sig_err serr = eg_ack_verify(value, len, w->pk);

		if (serr != EG_ACK_SIG_OK) {
			w->refused = w->sig_refused = true;
			snprintf(w->why, sizeof(w->why), "%s (node key %s)",
				 eg_ack_sig_err_name(serr), w->kid);
		} else if (eg_ack_parse(value, len, &w->ack, err, sizeof(err))) {
			w->refused = true;
			snprintf(w->why, sizeof(w->why), "%s", err);
		}
	}
	if (!w->fenced && w->have_ack && !w->refused &&
	    eg_ack_fenced_state(&w->ack, w->id, f->sandbox, f->generation) &&
	    (w->ack.mode == EG_ACK_ENFORCE || f->allow_audit)) {
		/* A fence holds once reached: a worker that applied G never
		 * installs below G again (docs/fleet.md). */
		w->fenced = true;
		f->n_fenced++;
		if (w->ack.mode == EG_ACK_ENFORCE)
			printf("fenced %s %s\n", w->id, eg_ack_state_name(w->ack.state));
		else
			printf("fenced %s %s audit\n", w->id, eg_ack_state_name(w->ack.state));
		fflush(stdout);
	}
}

/* DIR/<worker>.pub: the worker's node.pub, a typed public key file
 * (docs/fleet.md, "Fence"). A missing or refused one fails the command
 * before any read: a fence that cannot verify a worker cannot pass. */
static int load_node_key(const char *dir, struct worker *w)
{
	char path[4200];
	uint8_t kid[EG_KEY_ID_LEN];
	enum eg_key_err kerr;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s.pub", dir, w->id) >= sizeof(path)) {
		fprintf(stderr, "execgate-issue: fence: --node-keys %.100s: path too long\n", dir);
		return -1;
	}
	kerr = eg_key_file_load(path, EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC, w->pk, sizeof(w->pk),
				NULL);
	if (kerr == EG_KEY_OK)
		kerr = eg_key_check(w->pk);
	if (kerr != EG_KEY_OK) {
		fprintf(stderr, "execgate-issue: fence: worker %s: node key %s: %s\n", w->id, path,
			eg_key_err_name(kerr));
		return -1;
	}
	eg_key_id(w->pk, kid);
	eg_key_id_format(kid, w->kid);
	return 0;
}

static struct worker *by_key(struct fence *f, const char *key)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->w[i].key, key))
			return &f->w[i];
	return NULL;
}

static int read_all(struct fence *f, struct eg_etcd *e, int64_t *rev, char *err, size_t err_size)
{
	int64_t low = INT64_MAX;
	size_t i;

	for (i = 0; i < f->n; i++) {
		struct eg_etcd_range r;
		int rc = eg_etcd_get(e, f->w[i].key, false, &r, err, err_size);

		if (rc < 0)
			return rc;
		if (r.n)
			update(f, &f->w[i], r.kvs[0].value, r.kvs[0].value_len,
			       r.kvs[0].mod_revision, false);
		else if (f->w[i].have_ack)
			update(f, &f->w[i], NULL, 0, r.revision, true); /* deleted since */
		if (r.revision < low)
			low = r.revision;
		eg_etcd_range_free(&r);
	}
	/* watch from the oldest read on; replays are ignored by update() */
	*rev = low;
	return 0;
}

static int on_events(const struct eg_etcd_event *ev, size_t n, int64_t revision, void *ctx)
{
	struct fence *f = ctx;
	size_t i;

	(void)revision;
	for (i = 0; i < n; i++) {
		struct worker *w = by_key(f, ev[i].kv.key);

		if (w)
			update(f, w, ev[i].kv.value, ev[i].kv.value_len, ev[i].kv.mod_revision,
			       ev[i].type == EG_ETCD_DELETE);
	}
	return f->n_fenced == f->n ? 1 : 0;
}

static void *timer(void *arg)
{
	struct fence *f = arg;

	pthread_mutex_lock(&f->mu);
	while (!f->done && pthread_cond_timedwait(&f->cv, &f->mu, &f->deadline) != ETIMEDOUT)
		;
	f->stop = 1;
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

static bool expired(const struct fence *f)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return now.tv_sec > f->deadline.tv_sec ||
	       (now.tv_sec == f->deadline.tv_sec && now.tv_nsec >= f->deadline.tv_nsec);
}

static void report_lagging(const struct fence *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		const struct worker *w = &f->w[i];
		const struct eg_ack *a = &w->ack;

		if (w->fenced)
			continue;
		if (!w->have_ack) {
			fprintf(stderr, "execgate-issue: fence: worker %s lags: no ack\n", w->id);
		} else if (w->refused) {
			fprintf(
			    stderr,
			    "execgate-issue: fence: worker %s lags: ack %srefused (mod_revision "
			    "%lld): %s\n",
			    w->id, w->sig_refused ? "signature " : "", (long long)w->mod_revision,
			    w->why);
		} else {
			char rec[120] = "";
			/* fenced but for its mode: say so first */
			bool audit = a->mode == EG_ACK_AUDIT &&
				     eg_ack_fenced_state(a, w->id, f->sandbox, f->generation);

			if (a->has_record)
				snprintf(rec, sizeof(rec), " generation %llu activation %u",
					 (unsigned long long)a->generation, a->activation);
			fprintf(
			    stderr,
			    "execgate-issue: fence: worker %s lags: %slast ack state %s%s "
			    "selection.generation %llu mode %s sandbox %s revision %llu acked_at "
			    "%llu\n",
			    w->id, audit ? "in audit mode (--allow-audit accepts it): " : "",
			    eg_ack_state_name(a->state), rec,
			    (unsigned long long)a->selection.generation, eg_ack_mode_name(a->mode),
			    a->sandbox, (unsigned long long)a->revision,
			    (unsigned long long)a->acked_at);
		}
	}
}

static int run(struct fence *f, struct eg_etcd *e, struct eg_etcd_watch_spec *specs)
{
	char err[512] = "";
	bool reached = false;
	int64_t rev = 0, compact = 0;
	int rc;

	/* one read at least, even with --timeout 0 */
	for (bool first = true; first || !f->stop; first = false) {
		rc = read_all(f, e, &rev, err, sizeof(err));
		if (rc == 0) {
			reached = true;
			if (f->n_fenced == f->n)
				return ISSUE_EXIT_OK;
			if (expired(f))
				break;
			rc = eg_etcd_watch(e, specs, f->n, rev + 1, on_events, f, &f->stop,
					   &compact, err, sizeof(err));
			if (rc == 1)
				return ISSUE_EXIT_OK;
			if (rc == 0)
				break; /* the timeout */
			if (rc == -ECANCELED)
				continue; /* compacted: read again */
		}
		if (rc < 0 && rc != -EHOSTUNREACH && rc != -EPIPE && rc != -ECANCELED) {
			/* a malformed answer, or a refused request: not a
			 * network failure to wait out */
			fprintf(stderr, "execgate-issue: fence: etcd: %s\n", err);
			report_lagging(f);
			return ISSUE_EXIT_ERROR;
		}
		if (expired(f))
			break;
		usleep(200 * 1000);
	}
	if (!reached) {
		fprintf(stderr,
			"execgate-issue: fence: etcd unreachable for the whole timeout: %s\n", err);
		return ISSUE_EXIT_ERROR;
	}
	report_lagging(f);
	return ISSUE_EXIT_ERROR;
}

int cmd_fence(int argc, char **argv)
{
	static struct fence f;
	struct eg_etcd_watch_spec specs[FENCE_MAX_WORKERS];
	const char *etcd = NULL, *prefix = "/execgate/v1", *sandbox = NULL, *workers = NULL;
	const char *node_keys = NULL;
	char sb[EG_ACK_UUID_LEN + 1];
	bool have_gen = false, have_timeout = false;
	uint64_t timeout = 0;
	const struct eg_opt *o;
	const char *optarg;
	struct eg_etcd *e;
	struct eg_etcd_auth auth;
	struct eg_opts p;
	pthread_t t;
	size_t i, plen;
	int c, rc;

	memset(&f, 0, sizeof(f));
	issue_opts_init(&p, &fence_cmd, argc, argv);
	issue_etcd_opts_init(&p, &auth);
	while ((c = eg_opts_next(&p, &o, &optarg)) == 1) {
		if (issue_etcd_opt(&auth, o, optarg)) {
			continue;
		} else if (!strcmp(o->name, "etcd")) {
			etcd = optarg;
		} else if (!strcmp(o->name, "prefix")) {
			prefix = optarg;
		} else if (!strcmp(o->name, "sandbox")) {
			sandbox = optarg;
		} else if (!strcmp(o->name, "workers")) {
			workers = optarg;
		} else if (!strcmp(o->name, "node-keys")) {
			node_keys = optarg;
		} else if (!strcmp(o->name, "allow-audit")) {
			f.allow_audit = true;
		} else if (!strcmp(o->name, "generation")) {
			if (eg_parse_u64(optarg, (1ull << 53) - 1, &f.generation))
				return eg_opts_usage(&p, "--generation '%s': not in 0..2^53-1",
						     optarg);
			have_gen = true;
		} else if (!strcmp(o->name, "timeout")) {
			if (eg_parse_u64(optarg, FENCE_MAX_TIMEOUT, &timeout))
				return eg_opts_usage(&p, "--timeout '%s': not seconds in 0..%d",
						     optarg, FENCE_MAX_TIMEOUT);
			have_timeout = true;
		}
	}
	if (c < 0)
		return p.exit;
	if (!etcd)
		return eg_opts_usage(&p, "missing --etcd URL[,URL]");
	if (!sandbox)
		return eg_opts_usage(&p, "missing --sandbox UUID");
	if (!have_gen)
		return eg_opts_usage(&p, "missing --generation N");
	if (!workers)
		return eg_opts_usage(&p, "missing --workers W1,W2,...");
	if (!have_timeout)
		return eg_opts_usage(&p, "missing --timeout SEC");
	/* Required: without the keys an ack is whatever the store says
	 * (docs/fleet.md, "Fence"). */
	if (!node_keys)
		return eg_opts_usage(&p, "missing --node-keys DIR (the workers' node.pub files, "
					 "DIR/<worker-uuid>.pub)");
	if (strlen(sandbox) != EG_ACK_UUID_LEN)
		return eg_opts_usage(&p, "--sandbox '%s': not a UUID", sandbox);
	memcpy(sb, sandbox, sizeof(sb));
	lowercase(sb);
	if (!eg_ack_uuid_ok(sb))
		return eg_opts_usage(&p, "--sandbox '%s': not a UUID", sandbox);
	if (parse_workers(&f, workers))
		return eg_opts_usage(&p,
				     "--workers '%.100s': not 1 to %d distinct UUIDs separated by "
				     "commas",
				     workers, FENCE_MAX_WORKERS);
	plen = strlen(prefix);
	while (plen > 1 && prefix[plen - 1] == '/')
		plen--;
	for (i = 0; i < plen; i++)
		if (prefix[i] <= ' ' || prefix[i] >= 0x7f)
			break;
	if (prefix[0] != '/' || plen > PREFIX_MAX || i < plen)
		return eg_opts_usage(&p, "--prefix '%.100s': not an etcd key path", prefix);
	for (i = 0; i < f.n; i++)
		if (load_node_key(node_keys, &f.w[i]))
			return ISSUE_EXIT_ERROR;
	rc = issue_etcd_open(&p, etcd, &auth, 1000, &e);
	if (rc)
		return rc;

	f.sandbox = sb;
	for (i = 0; i < f.n; i++) {
		snprintf(f.w[i].key, sizeof(f.w[i].key), "%.*s/acks/%s/%s", (int)plen, prefix,
			 f.w[i].id, sb);
		specs[i].key = f.w[i].key;
		specs[i].prefix = false;
	}
	clock_gettime(CLOCK_REALTIME, &f.deadline);
	f.deadline.tv_sec += (time_t)timeout;
	pthread_mutex_init(&f.mu, NULL);
	pthread_cond_init(&f.cv, NULL);
	if (pthread_create(&t, NULL, timer, &f)) {
		fprintf(stderr, "execgate-issue: fence: thread: %s\n", strerror(errno));
		eg_etcd_close(e);
		return ISSUE_EXIT_ERROR;
	}
	rc = run(&f, e, specs);
	pthread_mutex_lock(&f.mu);
	f.done = true;
	pthread_cond_signal(&f.cv);
	pthread_mutex_unlock(&f.mu);
	pthread_join(t, NULL);
	eg_etcd_close(e);
	return rc;
}
