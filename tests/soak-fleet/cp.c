// SPDX-License-Identifier: Apache-2.0
/* The fleet soak's control plane: moves a sandbox to another worker by the
 * documented protocol (docs/fleet.md): start the new execution (stand-in
 * VMM, bridge), write the signed selection under the new worker, let its
 * node manager install it (PUT, retried while 409 not-selected), then
 * write it under every worker that ran an older execution, wait for the
 * fence (user/fleet/ack.h's rule over the acks) or 135 s since the last
 * capability for the old execution, and only then issue capabilities for
 * the new one. Measures put -> ack (every worker written to) and put ->
 * kernel enforcement (the old worker's pinned eg_records entry). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "abi/abi.h"
#include "execgate/execgate.h"
#include "fleet/ack.h"
#include "loader/maps/maps.h"
#include "fleet.h"

static pthread_mutex_t ack_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ack_cond = PTHREAD_COND_INITIALIZER;
static struct eg_ack acks[FS_WORKERS][FS_SANDBOXES];
static bool have_ack[FS_WORKERS][FS_SANDBOXES];
/* per sandbox: the generation being moved to, when it was put, and which
 * workers' acks for it were timed already */
static uint64_t pending_gen[FS_SANDBOXES], pending_put[FS_WORKERS][FS_SANDBOXES];
static bool timed[FS_WORKERS][FS_SANDBOXES];
static struct eg_maps maps[FS_WORKERS];

void fs_record(struct fs_phase *p, double *arr, size_t *n, double v)
{
	(void)p;
	pthread_mutex_lock(&fs.lock);
	if (*n < FS_MAX_SAMPLES)
		arr[(*n)++] = v;
	pthread_mutex_unlock(&fs.lock);
}

static struct fs_phase *phase(void)
{
	return &fs.ph[fs.cur_ph];
}

static void bump(uint64_t *field)
{
	pthread_mutex_lock(&fs.lock);
	(*field)++;
	pthread_mutex_unlock(&fs.lock);
}

static int issue(char *out, size_t size, const char *const *argv)
{
	int rc = fs_run(out, size, argv);

	out[strcspn(out, "\n")] = '\0';
	return rc;
}

int fs_cap(struct fs_sandbox *s, int worker, uint64_t gen, char *out, size_t size)
{
	char bin[600], g[24];
	const char *argv[] = {bin,
			      "cap",
			      "--key",
			      fs.cp_seed,
			      "--sandbox",
			      s->id,
			      "--worker",
			      fs.w[worker].id,
			      "--generation",
			      g,
			      "--activation",
			      "1",
			      "--scope",
			      "exec",
			      "--ttl",
			      "120",
			      NULL};

	snprintf(bin, sizeof(bin), "%s/execgate-issue", fs.bin);
	snprintf(g, sizeof(g), "%llu", (unsigned long long)gen);
	return issue(out, size, argv);
}

/* Signed for the prefix of worker aud (docs/fleet.md, "Audience"): a move
 * writes one copy per recipient. */
static void selection_for(const char *seed, struct fs_sandbox *s, int worker, int aud, uint64_t gen,
			  char *out, size_t size)
{
	char bin[600], g[24];
	const char *argv[] = {bin,	  "selection",	   "--key",
			      seed,	  "--sandbox",	   s->id,
			      "--worker", fs.w[worker].id, "--generation",
			      g,	  "--activation",  "1",
			      "--for",	  fs.w[aud].id,	   NULL};

	snprintf(bin, sizeof(bin), "%s/execgate-issue", fs.bin);
	snprintf(g, sizeof(g), "%llu", (unsigned long long)gen);
	if (issue(out, size, argv))
		fs_fail("execgate-issue selection: %s", out);
}

static void selection(const char *seed, struct fs_sandbox *s, int worker, uint64_t gen, char *out,
		      size_t size)
{
	selection_for(seed, s, worker, worker, gen, out, size);
}

static void put(const char *key, const char *value)
{
	char err[256];

	/* the control plane's handle fails over between the members; a put
	 * during a leader election is retried */
	for (int i = 0; i < 100; i++) {
		int rc;

		pthread_mutex_lock(&fs.cli_lock);
		rc = eg_etcd_put(fs.cli, key, value, strlen(value), NULL, err, sizeof(err));
		pthread_mutex_unlock(&fs.cli_lock);
		if (!rc)
			return;
		usleep(100000);
	}
	fs_fail("etcd put %s: %s", key, err);
}

/* put, and note when it completed: the start of that worker's
 * propagation (the store holds the selection from then on). The ack
 * thread may see the ack before this returns: it then counts from the
 * put's completion as 0. */
static void put_timed(const char *key, const char *value, int worker, struct fs_sandbox *s)
{
	put(key, value);
	pthread_mutex_lock(&ack_lock);
	pending_put[worker][s->idx] = fs_now_ns();
	if (have_ack[worker][s->idx] &&
	    acks[worker][s->idx].selection.generation >= pending_gen[s->idx] &&
	    !timed[worker][s->idx]) {
		timed[worker][s->idx] = true;
		fs_record(phase(), phase()->ack_ms, &phase()->n_ack, 0.0);
	}
	pthread_mutex_unlock(&ack_lock);
}

static void sel_key(int worker, const struct fs_sandbox *s, char *key, size_t size)
{
	snprintf(key, size, "%s/workers/%s/selections/%s", fs.prefix, fs.w[worker].id, s->id);
}

/* --- the ack watch ------------------------------------------------------------ */

static void on_ack(const struct eg_etcd_kv *kv)
{
	struct eg_ack a;
	char why[256];
	int w = -1, s = -1;
	uint64_t now = fs_now_ns();

	if (eg_ack_parse(kv->value, kv->value_len, &a, why, sizeof(why)))
		return; /* a forged ack the soak wrote itself: not the fence's business here */
	for (int i = 0; i < FS_WORKERS; i++)
		if (!strcmp(a.worker, fs.w[i].id))
			w = i;
	for (int i = 0; i < FS_SANDBOXES; i++)
		if (!strcmp(a.sandbox, fs.s[i].id))
			s = i;
	if (w < 0 || s < 0)
		return;
	pthread_mutex_lock(&ack_lock);
	acks[w][s] = a;
	have_ack[w][s] = true;
	if (pending_gen[s] && a.selection.generation >= pending_gen[s] && !timed[w][s] &&
	    pending_put[w][s]) {
		timed[w][s] = true;
		/* from the completion of the put under this worker's prefix */
		fs_record(phase(), phase()->ack_ms, &phase()->n_ack,
			  (double)(now > pending_put[w][s] ? now - pending_put[w][s] : 0) / 1e6);
	}
	pthread_cond_broadcast(&ack_cond);
	pthread_mutex_unlock(&ack_lock);
}

static int ack_batch(const struct eg_etcd_event *ev, size_t n, int64_t rev, void *ctx)
{
	(void)rev;
	*(int64_t *)ctx = rev;
	for (size_t i = 0; i < n; i++)
		if (ev[i].type == EG_ETCD_PUT)
			on_ack(&ev[i].kv);
	return 0;
}

static void *ack_thread(void *arg)
{
	struct eg_etcd *e = arg;
	char key[128], err[256];
	int64_t from = 0, last = 0, compact;

	snprintf(key, sizeof(key), "%s/acks/", fs.prefix);
	while (!fs.stop) {
		struct eg_etcd_watch_spec spec = {key, true};
		int rc;

		if (!from) {
			struct eg_etcd_range r = {0};

			if (eg_etcd_get(e, key, true, &r, err, sizeof(err))) {
				usleep(100000);
				continue;
			}
			for (size_t i = 0; i < r.n; i++)
				on_ack(&r.kvs[i]);
			from = r.revision + 1;
			eg_etcd_range_free(&r);
		}
		last = from - 1;
		rc = eg_etcd_watch(e, &spec, 1, from, ack_batch, &last, &fs.stop, &compact, err,
				   sizeof(err));
		if (rc == -ECANCELED)
			from = 0;
		else if (last >= from)
			from = last + 1;
		if (!fs.stop)
			usleep(20000);
	}
	eg_etcd_close(e);
	return NULL;
}

void fs_ack_watch_start(void)
{
	struct eg_etcd *e;
	char err[256];
	pthread_t t;

	if (eg_etcd_open_auth(fs.etcd.endpoints, 2000, &fs.cp_auth, &e, err, sizeof(err)))
		fs_fail("etcd: %s", err);
	if (pthread_create(&t, NULL, ack_thread, e))
		fs_fail("ack thread");
	pthread_detach(t);
}

/* --- executions ------------------------------------------------------------------ */

static struct fs_exec *exec_start(struct fs_sandbox *s, int worker, uint64_t gen)
{
	struct fs_worker *w = &fs.w[worker];
	struct fs_exec *x;
	char demo[600], bridge[600], name[64], log[300];

	if (s->n_ex >= sizeof(s->ex) / sizeof(s->ex[0]))
		fs_fail("sandbox %d: too many executions", s->idx);
	x = &s->ex[s->n_ex];
	memset(x, 0, sizeof(*x));
	x->worker = worker;
	x->gen = gen;
	x->stream_fd = -1;
	snprintf(x->vmm_sock, sizeof(x->vmm_sock), "%s/s%dg%llu.vsock", w->dir, s->idx,
		 (unsigned long long)gen);
	snprintf(x->bridge_sock, sizeof(x->bridge_sock), "%s/s%dg%llu.bridge", w->dir, s->idx,
		 (unsigned long long)gen);
	snprintf(name, sizeof(name), "s%d-g%llu-w%d", s->idx, (unsigned long long)gen, worker);
	snprintf(log, sizeof(log), "%s/vmm.log", w->dir);
	snprintf(demo, sizeof(demo), "%s/execgate-demo", fs.bin);
	snprintf(bridge, sizeof(bridge), "%s/execgate-bridge", fs.bin);
	{
		const char *argv[] = {demo, "firecracker", "--socket",	x->vmm_sock, "--name",
				      name, "--log",	   "/dev/null", NULL};

		x->vmm = fs_spawn_in(NULL, argv, log);
	}
	for (int i = 0; i < 500 && access(x->vmm_sock, F_OK); i++)
		usleep(10000);
	{
		char blog[300];
		const char *argv[] = {
		    bridge,	    "--sandbox",   s->id,	   "--listen", x->bridge_sock,
		    "--vmm-socket", x->vmm_sock,   "--vsock-port", "52",       "--pin-dir",
		    w->pin,	    "--state-dir", w->state,	   NULL};

		snprintf(blog, sizeof(blog), "%s/bridge.log", w->dir);
		x->bridge = fs_spawn_in(w->cgroup, argv, blog);
	}
	for (int i = 0; i < 500 && access(x->bridge_sock, F_OK); i++)
		usleep(10000);
	if (access(x->vmm_sock, F_OK) || access(x->bridge_sock, F_OK))
		fs_fail("sandbox %d: stand-in or bridge did not listen on worker %d", s->idx,
			worker);
	pthread_mutex_lock(&s->lock);
	s->n_ex++;
	pthread_mutex_unlock(&s->lock);
	return x;
}

/* The node manager on the new worker: PUT, retried while the worker has not
 * seen the selection yet (409 not-selected) or its daemon is restarting. */
static int install(struct fs_sandbox *s, struct fs_exec *x, int *status)
{
	char path[128], body[1400], out[16384];
	int st = 0;

	snprintf(path, sizeof(path), "/v1/sandboxes/%s", s->id);
	snprintf(body, sizeof(body),
		 "{\"worker\":\"%s\",\"generation\":%llu,\"activation\":1,\"bridge_pid\":%d,"
		 "\"vmm_pid\":%d,\"substrate\":\"firecracker-host\",\"bridge_sockets\":[\"%s\"],"
		 "\"vmm_sockets\":[\"%s\"]}",
		 fs.w[x->worker].id, (unsigned long long)x->gen, (int)x->bridge, (int)x->vmm,
		 x->bridge_sock, x->vmm_sock);
	st = fs_http(&fs.w[x->worker], "PUT", path, body, out, sizeof(out));
	*status = st;
	if (st == 200)
		return 0;
	if (st != 409 && st > 0)
		fprintf(stderr, "soak-fleet: install s%d g%llu on w%d: %d %s\n", s->idx,
			(unsigned long long)x->gen, x->worker, st, out);
	return -1;
}

/* Every worker that may still admit an older execution: the one that ran
 * the previous execution, and any whose fence was waited out (135 s)
 * instead of seen. A worker seen fenced for an older move stays fenced
 * (docs/fleet.md, "Fence"). */
static bool fenced(struct fs_sandbox *s, uint64_t gen)
{
	for (int w = 0; w < FS_WORKERS; w++)
		if (s->unfenced[w] && w != s->ex[s->n_ex - 1].worker &&
		    (!have_ack[w][s->idx] ||
		     !eg_ack_fenced(&acks[w][s->idx], fs.w[w].id, s->id, gen)))
			return false;
	return true;
}

/* Whether the fence for gen waits on a worker that is cut off etcd: its
 * ack cannot reach the store, even when it has retired already. */
static bool held_by_cut(struct fs_sandbox *s, uint64_t gen)
{
	for (int w = 0; w < FS_WORKERS; w++)
		if (s->unfenced[w] && w != s->ex[s->n_ex - 1].worker && fs.w[w].cut &&
		    (!have_ack[w][s->idx] ||
		     !eg_ack_fenced(&acks[w][s->idx], fs.w[w].id, s->id, gen)))
			return true;
	return false;
}

static bool kernel_enforced(int worker, struct fs_sandbox *s, uint64_t gen)
{
	struct eg_exec_record r;

	if (eg_record_read(&maps[worker], s->id_bin, &r))
		return true; /* no record: nothing admits */
	return r.state == EG_RECORD_RETIRED || r.generation >= gen;
}

static void stream_open(struct fs_exec *x, const char *token)
{
	x->stream = fs_stream_start(&fs.w[x->worker], x->bridge_sock, token, &x->stream_fd);
}

/* The first execution of a sandbox, on worker w. */
static void place(struct fs_sandbox *s, int w)
{
	char key[256], text[512];
	struct fs_exec *x;
	int st;

	x = exec_start(s, w, 1);
	selection(fs.cp_seed, s, w, 1, text, sizeof(text));
	sel_key(w, s, key, sizeof(key));
	put(key, text);
	s->ran_on[w] = true;
	for (int i = 0; install(s, x, &st); i++)
		if (i > 3000)
			fs_fail("install s%d on w%d: %d", s->idx, w, st);
		else
			usleep(10000);
	s->worker = w;
	s->gen = 1;
	if (fs_cap(s, w, 1, s->token, sizeof(s->token)))
		fs_fail("execgate-issue cap: %s", s->token);
	stream_open(x, s->token);
}

void fs_cp_init(void)
{
	char err[256];

	for (int i = 0; i < FS_WORKERS; i++)
		if (eg_maps_open(&maps[i], fs.w[i].pin, err, sizeof(err)))
			fs_fail("maps of worker %d: %s", i, err);
	fs_ack_watch_start();
	for (int i = 0; i < FS_SANDBOXES; i++) {
		struct fs_sandbox *s = &fs.s[i];

		s->idx = i;
		pthread_mutex_init(&s->lock, NULL);
		pthread_cond_init(&s->changed, NULL);
		snprintf(s->id, sizeof(s->id), "5f0c2c1e-7a4b-4c1d-9e3f-0000000000%02x", i + 1);
		if (eg_uuid_from_text(s->id, s->id_bin))
			fs_fail("bad sandbox id");
		place(s, i % FS_WORKERS);
	}
}

/* Removes every execution but the last two: the stream of each must have
 * been reported cut by now (the stream thread reads them under s->lock). */
static void prune(struct fs_sandbox *s)
{
	size_t keep = 2, drop;

	pthread_mutex_lock(&s->lock);
	if (s->n_ex <= keep) {
		pthread_mutex_unlock(&s->lock);
		return;
	}
	drop = s->n_ex - keep;
	for (size_t i = 0; i < drop; i++) {
		struct fs_exec *x = &s->ex[i];

		if (x->stream_fd >= 0) {
			struct pollfd p = {.fd = x->stream_fd, .events = POLLIN};

			if (x->stream_open && poll(&p, 1, 0) != 1) {
				bump(&phase()->uncut);
				fprintf(stderr,
					"soak-fleet: stream s%d g%llu on w%d still open two "
					"moves after its execution was replaced\n",
					s->idx, (unsigned long long)x->gen, x->worker);
			}
			close(x->stream_fd);
		}
		fs_reap(x->stream);
		fs_reap(x->bridge);
		fs_reap(x->vmm);
	}
	memmove(s->ex, s->ex + drop, keep * sizeof(s->ex[0]));
	s->n_ex = keep;
	pthread_mutex_unlock(&s->lock);
}

/* Moves s to worker `to`. 0, or -1 when the fence timed out (the 135 s
 * bound was waited for instead). */
int fs_move(struct fs_sandbox *s, int to)
{
	uint64_t gen = s->gen + 1, t_put, t_cap_old = fs_now_ns(), deadline;
	int from = s->worker, st = 0, rc = 0;
	struct fs_exec *x, *old;
	char text[512], key[256], token[1024];
	bool kern = false, held;

	prune(s);
	old = &s->ex[s->n_ex - 1];
again:
	x = exec_start(s, to, gen);
	selection(fs.cp_seed, s, to, gen, text, sizeof(text));
	pthread_mutex_lock(&ack_lock);
	for (int w = 0; w < FS_WORKERS; w++)
		timed[w][s->idx] = false;
	pending_gen[s->idx] = gen;
	for (int w = 0; w < FS_WORKERS; w++)
		pending_put[w][s->idx] = 0;
	t_put = fs_now_ns();
	pthread_mutex_unlock(&ack_lock);
	if (!old->put_ns)
		old->put_ns = t_put; /* from here on the old execution is not selected */
	s->ran_on[to] = true;
	s->unfenced[from] = true;
	/* Make before break: the new worker first, and its node manager's
	 * install; only then the workers that ran older executions, which
	 * retire theirs on reading it. A target that cannot take the move
	 * leaves the old execution serving (docs/fleet.md, "Moving a
	 * sandbox"). */
	sel_key(to, s, key, sizeof(key));
	put_timed(key, text, to, s);
	while (install(s, x, &st)) {
		int next;

		if (fs.stop)
			return -1;
		if (fs_now_ns() - t_put <= 2000000000ULL) {
			usleep(2000);
			continue;
		}
		/* the target has not learned its selection in 2 s (cut off
		 * etcd, or its daemon down): its node manager never installs
		 * it, and the sandbox goes to another worker as a newer
		 * execution */
		fs_reap(x->bridge);
		fs_reap(x->vmm);
		x->bridge = x->vmm = 0;
		x->put_ns = fs_now_ns();
		bump(&phase()->aborted);
		do
			next = (int)fs_rand(FS_WORKERS);
		while (next == to || next == from);
		to = next;
		gen++;
		goto again;
	}
	for (int w = 0; w < FS_WORKERS; w++)
		if (s->ran_on[w] && w != to) {
			selection_for(fs.cp_seed, s, to, w, gen, text, sizeof(text));
			sel_key(w, s, key, sizeof(key));
			put_timed(key, text, w, s);
		}
	/* the fence, with the 135 s bound since the last capability for the
	 * old execution as its fallback */
	deadline = t_cap_old + 135ULL * 1000000000ULL;
	for (;;) {
		bool f;

		if (!kern && kernel_enforced(from, s, gen)) {
			uint64_t now = fs_now_ns(), done = pending_put[from][s->idx];

			kern = true;
			fs_record(phase(), phase()->kern_ms, &phase()->n_kern,
				  (double)(now > done ? now - done : 0) / 1e6);
		}
		pthread_mutex_lock(&ack_lock);
		f = fenced(s, gen);
		held = !f && held_by_cut(s, gen);
		pthread_mutex_unlock(&ack_lock);
		if (held && s->held_to != UINT64_MAX) {
			/* the errors of operations on s from here to the
			 * fence are the cut's (main.c, one_op) */
			pthread_mutex_lock(&s->lock);
			s->held_from = fs_now_ns();
			s->held_to = UINT64_MAX;
			pthread_mutex_unlock(&s->lock);
		}
		if (f) {
			for (int w = 0; w < FS_WORKERS; w++)
				s->unfenced[w] = false;
			break;
		}
		if (fs_now_ns() > deadline) {
			rc = -1;
			bump(&phase()->fence_timeouts);
			break;
		}
		if (fs.stop)
			return -1;
		usleep(2000);
	}
	pthread_mutex_lock(&ack_lock);
	pending_gen[s->idx] = 0;
	pthread_mutex_unlock(&ack_lock);
	if (fs_cap(s, to, gen, token, sizeof(token)))
		fs_fail("execgate-issue cap: %s", token);
	pthread_mutex_lock(&s->lock);
	if (s->held_to == UINT64_MAX)
		s->held_to = fs_now_ns();
	snprintf(s->old_token, sizeof(s->old_token), "%s", s->token);
	s->old_worker = from;
	s->old_gen = s->gen;
	snprintf(s->token, sizeof(s->token), "%s", token);
	s->worker = to;
	s->gen = gen;
	pthread_cond_broadcast(&s->changed);
	pthread_mutex_unlock(&s->lock);
	bump(&phase()->moves);
	stream_open(x, token);
	/* a probe: the old capability at the old worker, after the fence,
	 * must not be answered by the old execution */
	{
		struct fs_op_res res;

		fs_agent_op(&fs.w[from], old->bridge_sock, s->old_token, "probe", &res);
		bump(&phase()->probes);
		if (res.rc == FS_OP_OK) {
			bump(&phase()->safety);
			fprintf(stderr, "soak-fleet: SAFETY: probe s%d g%llu on w%d answered: %s\n",
				s->idx, (unsigned long long)s->old_gen, from, res.reply);
		} else {
			bump(&phase()->probe_refused);
		}
	}
	return rc;
}

/* Forged and older documents on the bus: a selection signed by a key
 * outside the key set, a truncated one, garbage, the previous selection of
 * a sandbox replayed under its old worker (older), key set version 1
 * (refuse-older: setup published 2) and version 2 again (refuse-equal).
 * Every worker must refuse them and keep serving. */
void fs_publish_forged(void)
{
	char rogue_dir[200], rogue[300], text[512], key[256], bin[600], out[512];
	const char *kg[] = {bin, "keygen", "--out", rogue_dir, NULL};
	struct fs_sandbox *s = &fs.s[0];

	snprintf(rogue_dir, sizeof(rogue_dir), "%s/rogue", fs.dir);
	mkdir(rogue_dir, 0700);
	snprintf(bin, sizeof(bin), "%s/execgate-issue", fs.bin);
	if (issue(out, sizeof(out), kg))
		fs_fail("keygen: %s", out);
	snprintf(rogue, sizeof(rogue), "%s/%.64s.seed", rogue_dir, out);
	for (int w = 0; w < FS_WORKERS; w++) {
		struct fs_sandbox *t = &fs.s[fs_rand(FS_SANDBOXES)];

		pthread_mutex_lock(&t->lock);
		/* a rogue key's selection naming this worker, a newer generation */
		selection(rogue, t, w, t->gen + 100, text, sizeof(text));
		pthread_mutex_unlock(&t->lock);
		sel_key(w, t, key, sizeof(key));
		put(key, text);
		text[100] = '\0'; /* truncated */
		put(key, text);
		put(key, "not a selection");
	}
	/* the key set, version 1 (older) and version 2 again (equal) */
	for (int v = 1; v <= 2; v++) {
		char pub[320], ver[4];
		const char *ks[] = {bin,	 "keyset", "--root-key", fs.root_seed,
				    "--version", ver,	   pub,		 NULL};

		snprintf(ver, sizeof(ver), "%d", v);
		snprintf(pub, sizeof(pub), "%.*s.pub", (int)(strlen(fs.cp_seed) - 5), fs.cp_seed);
		if (issue(text, sizeof(text), ks))
			fs_fail("keyset: %s", text);
		snprintf(key, sizeof(key), "%s/keyset", fs.prefix);
		put(key, text);
	}
	/* an older selection: generation 1 of sandbox 0 at its current
	 * worker (it runs a later generation there or elsewhere) */
	pthread_mutex_lock(&s->lock);
	if (s->gen > 1) {
		selection(fs.cp_seed, s, s->worker, 1, text, sizeof(text));
		sel_key(s->worker, s, key, sizeof(key));
		put(key, text);
	}
	pthread_mutex_unlock(&s->lock);
}
