// SPDX-License-Identifier: Apache-2.0
/* Scenario 1: `execgate install`, `retire` and `admit` (the CLI, or a forked
 * child making the same libexecgate call) SIGKILLed at random points, over
 * and over, while a process in the cgroup that holds no grant
 * and is not the bridge probes both endpoints without a pause.
 *
 * Reference log: the record as last seen, and every (generation, epoch)
 * pair a record ever had. After each kill the record must be exactly the
 * one before the command or the one the command writes (never a mix), the
 * grant of the admitted process must be absent, a whole grant of a pair in
 * the log, or a whole tombstone (a garbage collection of dead grants,
 * loader/records/admit.c, killed between its tombstone write and its delete: the
 * key, and zero epoch, generation, expiry and scope, which no record
 * matches), both endpoints must still be registered, and the prober must
 * have been refused (EPERM) at every connect, including after the kill.
 *
 * Streams: before each kill the current execution's bridge (an agent in the
 * cgroup, streams.c) opens one more stream to the VMM socket and holds it.
 * A kill between an epoch move and its cut leaves the old execution's
 * streams open with the intent to cut them in the record
 * (user/loader/revokers/cut_intent.h). After each kill comes the recovery a real
 * worker has: the next CLI call (`execgate list`) or a freshly opened
 * handle's eg_worker_finish_cuts (what a restarted daemon runs), taking
 * turns. Then no stream of an older epoch (or of a retired record) may
 * still carry a byte: one that does is counted unguarded; and every
 * stream of the current epoch must (one that does not is a wrong deny). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "soak.h"

struct probe_stats {
	volatile unsigned long n[2], allowed[2], eperm[2], other[2];
	volatile int other_errno;
	volatile int stop;
};

#define MAX_PAIRS 8192

static struct {
	__u64 gen, epoch;
} pairs[MAX_PAIRS];
static size_t npairs;

static void pair_add(const struct eg_runtime_record *r)
{
	for (size_t i = 0; i < npairs; i++)
		if (pairs[i].gen == r->generation && pairs[i].epoch == r->epoch)
			return;
	if (npairs < MAX_PAIRS) {
		pairs[npairs].gen = r->generation;
		pairs[npairs].epoch = r->epoch;
		npairs++;
	}
}

static bool pair_known(__u64 gen, __u64 epoch)
{
	for (size_t i = 0; i < npairs; i++)
		if (pairs[i].gen == gen && pairs[i].epoch == epoch)
			return true;
	return false;
}

static void prober(struct probe_stats *st, const char *paths[2])
{
	soak_enter(-1);
	while (!st->stop)
		for (int i = 0; i < 2; i++) {
			int rc = soak_connect(paths[i]);

			if (rc == 0)
				st->allowed[i]++;
			else if (rc == -EPERM)
				st->eperm[i]++;
			else {
				st->other[i]++;
				st->other_errno = -rc;
			}
			__atomic_add_fetch(&st->n[i], 1, __ATOMIC_SEQ_CST);
		}
	_exit(0);
}

enum op { OP_INSTALL, OP_RETIRE, OP_ADMIT, OP_COUNT };
static const char *const op_names[] = {"install", "retire", "admit"};

struct world {
	__u8 sb[EG_ID_BYTES];
	char sb_text[EG_UUID_TEXT_LEN];
	const char *bsock, *vsock;
	struct soak_agent ag[2]; /* d[i] is ag[i].pid: bridge or VMM by generation */
	pid_t d[2], holder;
	struct eg_process did[2], hid;
	int grants_fd;
};

static void show(struct world *w, struct eg_sandbox_info *info)
{
	char err[EG_ERR_MAX];

	if (eg_worker_show(se.w, w->sb, info, err, sizeof(err)))
		soak_fail("kill: show: %s", err);
}

/* A child using libexecgate: its own worker handle (so its own flock
 * on <state_dir>/lock: a killed child's lock dies with it), one call. */
static void lib_child(struct world *w, enum op op, const struct eg_runtime_record *pred,
		      const char *token)
{
	struct eg_worker_config cfg = {.pin_dir = se.pin_dir, .state_dir = se.state_dir};
	struct eg_worker *cw;
	char err[EG_ERR_MAX];
	int rc;

	if (eg_worker_open(&cfg, &cw, err, sizeof(err)))
		_exit(10);
	if (op == OP_INSTALL) {
		struct eg_install_spec spec = {0};
		struct eg_install_report rep;
		unsigned pick = (unsigned)(pred->generation & 1);

		memcpy(spec.sandbox, w->sb, EG_ID_BYTES);
		memcpy(spec.worker, se.worker, EG_ID_BYTES);
		spec.substrate = 2;
		spec.generation = pred->generation;
		spec.activation = 1;
		spec.bridge_pid = w->d[pick];
		spec.vmm_pid = w->d[!pick];
		spec.bridge_sockets[0] = w->bsock;
		spec.n_bridge_sockets = 1;
		spec.vmm_sockets[0] = w->vsock;
		spec.n_vmm_sockets = 1;
		rc = eg_worker_install(cw, &spec, &rep, err, sizeof(err));
	} else if (op == OP_RETIRE) {
		struct eg_runtime_record after;

		rc = eg_worker_retire(cw, w->sb, &after, err, sizeof(err));
	} else {
		struct eg_subject who = {.pid = w->holder, .pidfd = -1};
		struct eg_admit_args a = {.token_text = token,
					  .req = {.scope = EG_SCOPE_FILE_READ}};
		struct eg_verdict_result res;

		memset(&res, 0, sizeof(res));
		rc = eg_worker_admit(cw, &who, &a, &res, err, sizeof(err));
		if (!rc && !res.granted)
			rc = -EAGAIN;
	}
	_exit(rc ? 1 : 0);
}

/* Starts op as a CLI process (cli) or a forked library child, and returns
 * its pid; *pred is what the record becomes if the command finishes. */
static pid_t start(struct world *w, enum op op, bool cli, const struct eg_runtime_record *cur,
		   struct eg_runtime_record *pred, char *token)
{
	char gen[24], bpid[16], vpid[16];
	unsigned pick;
	pid_t pid;

	*pred = *cur;
	if (op == OP_INSTALL) {
		/* Bridge and VMM swap on every generation: a record mixed from
		 * two installs names one process twice or an odd generation
		 * with the even one's processes. */
		pred->generation = cur->generation + 1;
		pick = (unsigned)(pred->generation & 1);
		pred->retired = false;
		pred->activation = 1;
		pred->epoch = cur->epoch + 1;
		pred->bridge = w->did[pick];
		pred->vmm = w->did[!pick];
		snprintf(gen, sizeof(gen), "%llu", (unsigned long long)pred->generation);
		snprintf(bpid, sizeof(bpid), "%d", (int)w->d[pick]);
		snprintf(vpid, sizeof(vpid), "%d", (int)w->d[!pick]);
	} else if (op == OP_RETIRE) {
		if (!cur->retired) {
			pred->retired = true;
			pred->epoch = cur->epoch + 1;
		}
	} else {
		soak_token(token, w->sb, cur->generation, 1, 120);
		snprintf(bpid, sizeof(bpid), "%d", (int)w->holder);
	}
	if (!cli) {
		pid = soak_fork();
		if (pid == 0)
			lib_child(w, op, pred, token);
		return pid;
	}
	if (op == OP_INSTALL) {
		const char *args[] = {"install",   "--sandbox",
				      w->sb_text,  "--worker",
				      SOAK_WORKER, "--generation",
				      gen,	   "--activation",
				      "1",	   "--bridge-pid",
				      bpid,	   "--vmm-pid",
				      vpid,	   "--bridge-socket",
				      w->bsock,	   "--vmm-socket",
				      w->vsock,	   NULL};

		return soak_cli_spawn(-1, args);
	}
	if (op == OP_RETIRE) {
		const char *args[] = {"retire", "--sandbox", w->sb_text, NULL};

		return soak_cli_spawn(-1, args);
	}
	{
		const char *args[] = {"admit", "--pid", bpid, token, NULL};

		return soak_cli_spawn(-1, args);
	}
}

/* --- streams of old executions ------------------------------------------- */

#define MAX_STREAMS 48

static struct {
	int agent, idx;
	__u64 epoch; /* the record's epoch when it was admitted */
} streams[MAX_STREAMS];
static size_t nstreams;

struct stream_stats {
	unsigned long opened, refused, cut, left_pending, stale_after_kill, stale_alive, over_cut;
	unsigned long recover_cli, recover_lib, reported_cut, recover_failed;
	char recover_why[160]; /* the first failure */
	int refused_errno;
};

/* One more stream of the current execution, from its bridge. */
static void stream_open(struct world *w, const struct eg_runtime_record *cur, struct soak_result *r,
			struct stream_stats *ss)
{
	int a = (int)(cur->generation & 1), idx;

	if (cur->retired || nstreams == MAX_STREAMS)
		return;
	idx = soak_agent_cmd(&w->ag[a], 'c', 0);
	r->decisions++;
	if (idx < 0) {
		r->wrong_deny++; /* the registered bridge, an active record */
		ss->refused++;
		ss->refused_errno = -idx;
		return;
	}
	streams[nstreams].agent = a;
	streams[nstreams].idx = idx;
	streams[nstreams].epoch = cur->epoch;
	nstreams++;
	ss->opened++;
}

static bool stream_stale(size_t i, const struct eg_runtime_record *rec)
{
	return rec->retired || streams[i].epoch != rec->epoch;
}

/* Stale streams that still carry a byte (no change). */
static unsigned long streams_stale_alive(struct world *w, const struct eg_runtime_record *rec)
{
	unsigned long n = 0;

	for (size_t i = 0; i < nstreams; i++)
		if (stream_stale(i, rec) &&
		    soak_agent_cmd(&w->ag[streams[i].agent], 's', streams[i].idx) == 0)
			n++;
	return n;
}

/* After recovery: every stale stream cut (EPIPE), every current one alive.
 * Cut ones are closed and dropped, and so is one wrongly cut. */
static void streams_check(struct world *w, const struct eg_runtime_record *rec,
			  struct soak_result *r, struct stream_stats *ss)
{
	for (size_t i = 0; i < nstreams; i++) {
		struct soak_agent *a = &w->ag[streams[i].agent];
		int rc = soak_agent_cmd(a, 's', streams[i].idx);
		bool stale = stream_stale(i, rec);

		r->decisions++;
		if (stale && rc == 0) {
			r->unguarded++; /* a stale stream alive after recovery */
			ss->stale_alive++;
			continue;
		}
		if (!stale && rc == 0)
			continue;
		if (stale && rc == -EPIPE)
			ss->cut++;
		else if (!stale) {
			r->wrong_deny++;
			ss->over_cut++;
		} else
			r->other++;
		soak_agent_cmd(a, 'x', streams[i].idx);
		streams[i--] = streams[--nstreams];
	}
}

static void count_cut(const struct eg_cut_finished *c, void *ctx)
{
	struct stream_stats *ss = ctx;

	ss->reported_cut += c->streams.unix_cut;
}

/* What the next writer does: the next CLI call, or a freshly opened handle
 * (a restarted daemon), in turns. */
static void recover(unsigned i, struct stream_stats *ss)
{
	char out[4096], err[EG_ERR_MAX];
	int rc;

	if (i & 1) {
		const char *args[] = {"list", NULL};
		const char *p = out;

		ss->recover_cli++;
		rc = soak_cli(out, sizeof(out), args);
		if (rc != 0 || strstr(out, "finishing an interrupted stream cut")) {
			if (!ss->recover_failed++)
				snprintf(ss->recover_why, sizeof(ss->recover_why),
					 "execgate list: exit %d: %.100s", rc, out);
		}
		while ((p = strstr(p, "interrupted writer left: "))) {
			p += strlen("interrupted writer left: ");
			ss->reported_cut += strtoul(p, NULL, 10);
		}
	} else {
		struct eg_worker_config cfg = {.pin_dir = se.pin_dir, .state_dir = se.state_dir};
		struct eg_worker *fresh;

		ss->recover_lib++;
		if (eg_worker_open(&cfg, &fresh, err, sizeof(err)))
			soak_fail("kill: recovery: %s", err);
		rc = eg_worker_finish_cuts(fresh, NULL, count_cut, ss, err, sizeof(err));
		if (rc < 0 && !ss->recover_failed++)
			snprintf(ss->recover_why, sizeof(ss->recover_why), "finish_cuts: %.140s",
				 err);
		eg_worker_close(fresh);
	}
}

static void wait_probes(struct probe_stats *st)
{
	unsigned long n0 = st->n[0], n1 = st->n[1];
	uint64_t deadline = soak_now_ns() + 5000000000ULL;

	/* A connect that started after the kill, on both endpoints. */
	while ((st->n[0] < n0 + 2 || st->n[1] < n1 + 2) && soak_now_ns() < deadline)
		usleep(50);
	if (st->n[0] < n0 + 2 || st->n[1] < n1 + 2)
		soak_fail("kill: the prober stopped probing");
}

int soak_kill(struct soak_result *r, unsigned kills, double max_seconds)
{
	struct probe_stats *st;
	struct world w = {0};
	struct eg_install_spec spec = {0};
	struct eg_install_report rep;
	struct eg_sandbox_info info;
	struct eg_runtime_record cur, pred;
	struct eg_grant_key gkey;
	char err[EG_ERR_MAX], token[EG_CAP_TEXT_MAX];
	char bsock[200], vsock[200];
	const char *paths[2];
	uint64_t t0 = soak_now_ns(), dur[2][OP_COUNT] = {{0}}, scale[2][OP_COUNT], deadline;
	unsigned long completed = 0, mid = 0, by_op[OP_COUNT] = {0}, by_cli = 0, grants_seen = 0,
		      tombstones = 0;
	unsigned n_endpoints;
	struct stream_stats ss = {0};
	struct eg_runtime_record seen;
	pid_t probe;
	bool torn_shown = false, grant_torn_shown = false;
	uint64_t kc[EG_K_REASON_COUNT];

	r->name = "kill";
	soak_sandbox(w.sb, 1, 1);
	eg_uuid_to_text(w.sb, w.sb_text);
	snprintf(bsock, sizeof(bsock), "%s/k-bridge.sock", se.dir);
	snprintf(vsock, sizeof(vsock), "%s/k-vmm.sock", se.dir);
	w.bsock = paths[0] = bsock;
	w.vsock = paths[1] = vsock;
	soak_hold_listener(bsock, vsock);
	soak_counters(kc);
	for (int i = 0; i < 2; i++) {
		struct eg_subject s = {.pid = 0, .pidfd = -1};

		soak_agent_start(&w.ag[i], vsock);
		s.pid = w.d[i] = w.ag[i].pid;

		if (eg_worker_identify(&s, &w.did[i], err, sizeof(err)))
			soak_fail("kill: identify: %s", err);
	}
	w.holder = soak_dummy();
	{
		struct eg_subject s = {.pid = w.holder, .pidfd = -1};

		if (eg_worker_identify(&s, &w.hid, err, sizeof(err)))
			soak_fail("kill: identify: %s", err);
	}
	w.grants_fd = soak_map("eg_grants");
	memset(&gkey, 0, sizeof(gkey));
	gkey.proc.tgid = w.hid.tgid;
	gkey.proc.exe_dev = w.hid.exe_dev;
	gkey.proc.start_boottime_ns = w.hid.start_boottime_ns;
	gkey.proc.exe_ino = w.hid.exe_ino;
	memcpy(gkey.sandbox, w.sb, EG_ID_BYTES);

	/* Generation 1, not killed: from here on both endpoints are
	 * registered, so a connect that gets through is unguarded. */
	memcpy(spec.sandbox, w.sb, EG_ID_BYTES);
	memcpy(spec.worker, se.worker, EG_ID_BYTES);
	spec.substrate = 2;
	spec.generation = 1;
	spec.activation = 1;
	spec.bridge_pid = w.d[1];
	spec.vmm_pid = w.d[0];
	spec.bridge_sockets[0] = bsock;
	spec.n_bridge_sockets = 1;
	spec.vmm_sockets[0] = vsock;
	spec.n_vmm_sockets = 1;
	if (eg_worker_install(se.w, &spec, &rep, err, sizeof(err)))
		soak_fail("kill: install: %s", err);
	show(&w, &info);
	cur = info.record;
	n_endpoints = info.n_endpoints;
	pair_add(&cur);

	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (st == MAP_FAILED)
		soak_fail("mmap: %s", strerror(errno));
	memset((void *)st, 0, sizeof(*st));
	probe = soak_fork();
	if (probe == 0)
		prober(st, paths);
	wait_probes(st);

	/* How long each command takes when left alone (the shortest of two
	 * runs), as a CLI process and as a library child: the first scale of
	 * the kill delays. Most of it is exec and opening the worker; the map
	 * writes come at the end. Half the kills are drawn from [0, 1.1 x
	 * scale], half from [0.7, 1.1] x scale, where the writes are. */
	for (int round = 0; round < 4; round++)
		for (int k = 0; k < OP_COUNT; k++) {
			/* admit last: after a retire it would be refresh-route */
			static const enum op order[] = {OP_RETIRE, OP_INSTALL, OP_ADMIT};
			enum op op = order[k];
			bool cli = round & 1;
			uint64_t a = soak_now_ns(), d;
			int status;
			pid_t pid = start(&w, op, cli, &cur, &pred, token);

			waitpid(pid, &status, 0);
			soak_reap(pid);
			d = soak_now_ns() - a;
			if (!dur[cli][op] || d < dur[cli][op])
				dur[cli][op] = d;
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
				soak_fail("kill: warm-up %s: exit %d", op_names[op],
					  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
			show(&w, &info);
			cur = info.record;
			pair_add(&cur);
		}

	memcpy(scale, dur, sizeof(scale));
	deadline = t0 + (uint64_t)(max_seconds * 1e9);
	/* At least 10 kills even on a slow host: a run without them is not
	 * the scenario. */
	for (unsigned i = 0; i < kills && (soak_now_ns() < deadline || i < 10); i++) {
		enum op op = (enum op)soak_rand(OP_COUNT);
		bool cli = soak_rand(2);
		uint64_t d = scale[cli][op];
		uint64_t delay = soak_rand(2) ? soak_rand(d * 11 / 10 + 1)
					      : d * 7 / 10 + soak_rand(d * 4 / 10 + 1);
		struct timespec ts;
		struct eg_grant g;
		int status;
		pid_t pid;

		stream_open(&w, &cur, r, &ss);
		pid = start(&w, op, cli, &cur, &pred, token);
		ts.tv_sec = (time_t)(delay / 1000000000ULL);
		ts.tv_nsec = (long)(delay % 1000000000ULL);
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		soak_reap(pid);
		r->runs++;
		by_op[op]++;
		by_cli += cli;
		/* Run times move with the host's load: follow them, so that
		 * about a third of the kills come after the command's end and
		 * the rest inside it. */
		if (WIFEXITED(status)) {
			completed++;
			scale[cli][op] -= scale[cli][op] / 8;
		} else {
			scale[cli][op] += scale[cli][op] / 16;
		}
		if (scale[cli][op] < 100000)
			scale[cli][op] = 100000;

		show(&w, &info);
		r->decisions++;
		/* The intent a kill may leave is not part of the record's
		 * before/after comparison: the recovery below clears it. */
		seen = info.record;
		seen.cut_pending = false;
		if (!memcmp(&seen, &pred, sizeof(pred))) {
			if (!WIFEXITED(status) && memcmp(&pred, &cur, sizeof(cur)))
				mid++; /* killed after its record write */
			cur = pred;
			pair_add(&cur);
		} else if (memcmp(&seen, &cur, sizeof(cur)) ||
			   (WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
			r->torn++;
			if (!torn_shown) {
				fprintf(
				    stderr,
				    "soak: kill %u (%s, exit %d): record gen %llu epoch %llu "
				    "state %u is neither before (gen %llu epoch %llu) nor after "
				    "(gen %llu epoch %llu)\n",
				    i, op_names[op], WIFEXITED(status) ? WEXITSTATUS(status) : -1,
				    (unsigned long long)info.record.generation,
				    (unsigned long long)info.record.epoch,
				    (unsigned)info.record.retired,
				    (unsigned long long)cur.generation,
				    (unsigned long long)cur.epoch,
				    (unsigned long long)pred.generation,
				    (unsigned long long)pred.epoch);
				torn_shown = true;
			}
			cur = seen; /* go on from what is there */
			pair_add(&cur);
		}
		if (info.record.cut_pending) {
			ss.left_pending++;
			ss.stale_after_kill += streams_stale_alive(&w, &info.record);
		}
		recover(i, &ss);
		show(&w, &info);
		if (info.record.cut_pending && !ss.recover_failed++)
			snprintf(ss.recover_why, sizeof(ss.recover_why),
				 "kill %u: the recovery left the intent set", i);
		streams_check(&w, &info.record, r, &ss);
		if (info.n_endpoints < n_endpoints)
			r->unguarded++; /* an endpoint vanished: connects would pass */

		/* The grant: absent (fail closed) or whole. */
		if (bpf_map_lookup_elem_flags(w.grants_fd, &gkey, &g, BPF_F_LOCK) == 0) {
			grants_seen++;
			r->decisions++;
			if (!memcmp(&g.key, &gkey, sizeof(gkey)) && !g.generation && !g.epoch &&
			    !g.expiry_ns && !g.scope)
				tombstones++; /* dead: the next install or retire drops it */
			else if (memcmp(&g.key, &gkey, sizeof(gkey)) ||
				 !pair_known(g.generation, g.epoch) ||
				 g.scope != (EG_SCOPE_FILE_READ | EG_SCOPE_EXEC) || !g.expiry_ns) {
				r->torn++;
				if (!grant_torn_shown) {
					fprintf(
					    stderr,
					    "soak: kill %u (%s, exit %d): grant gen %llu epoch "
					    "%llu scope %#x expiry %llu, key %s, pair %s; record "
					    "gen %llu epoch %llu state %u\n",
					    i, op_names[op],
					    WIFEXITED(status) ? WEXITSTATUS(status) : -1,
					    (unsigned long long)g.generation,
					    (unsigned long long)g.epoch, g.scope,
					    (unsigned long long)g.expiry_ns,
					    memcmp(&g.key, &gkey, sizeof(gkey)) ? "differs" : "ok",
					    pair_known(g.generation, g.epoch) ? "known" : "unknown",
					    (unsigned long long)info.record.generation,
					    (unsigned long long)info.record.epoch,
					    (unsigned)info.record.retired);
					grant_torn_shown = true;
				}
			}
		} else if (errno != ENOENT) {
			soak_fail("kill: reading eg_grants: %s", strerror(errno));
		}
		wait_probes(st);
	}
	/* The next loader adopts whatever the killed ones left. */
	spec.generation = cur.generation + 1;
	if (eg_worker_install(se.w, &spec, &rep, err, sizeof(err)) ||
	    rep.outcome != EG_INSTALLED_REPLACED || rep.after.epoch != cur.epoch + 1) {
		r->failed = true;
		fprintf(stderr, "soak: kill: install after the kills: %s\n", err);
	}
	show(&w, &info);
	streams_check(&w, &info.record, r, &ss); /* that install cut every stream left */
	wait_probes(st);
	st->stop = 1;
	soak_reap(probe);
	/* Leave no grant behind: the capacity scenario counts on every grant
	 * in the map being live. */
	eg_worker_revoke(se.w, w.holder, w.sb, &(unsigned){0}, err, sizeof(err));
	for (int i = 0; i < 2; i++) {
		r->decisions += st->n[i];
		r->unguarded += st->allowed[i];
		r->other += st->other[i];
	}
	r->seconds = (double)(soak_now_ns() - t0) / 1e9;
	snprintf(r->note, sizeof(r->note),
		 "%lu kills (install %lu, retire %lu, admit %lu; %lu of the CLI, %lu of library "
		 "children; %lu finished before the kill, %lu killed after their record write); "
		 "unkilled install/retire/admit: CLI %.1f/%.1f/%.1f ms, library %.1f/%.1f/%.1f ms; "
		 "%lu probe connects refused "
		 "(bridge %lu, vmm %lu)%s%s; record ended at generation %llu epoch %llu; grant "
		 "present at %lu checks (%lu of them a tombstone a killed sweep left)",
		 r->runs, by_op[0], by_op[1], by_op[2], by_cli, r->runs - by_cli, completed, mid,
		 (double)dur[1][0] / 1e6, (double)dur[1][1] / 1e6, (double)dur[1][2] / 1e6,
		 (double)dur[0][0] / 1e6, (double)dur[0][1] / 1e6, (double)dur[0][2] / 1e6,
		 st->eperm[0] + st->eperm[1], st->eperm[0], st->eperm[1],
		 st->other[0] + st->other[1] ? "; other errno " : "",
		 st->other[0] + st->other[1] ? strerror(st->other_errno) : "",
		 (unsigned long long)cur.generation, (unsigned long long)cur.epoch, grants_seen,
		 tombstones);
	if (ss.recover_failed)
		r->failed = true;
	{
		size_t len = strlen(r->note);

		snprintf(r->note + len, sizeof(r->note) - len,
			 "; streams: %lu opened (%lu refused%s%s), %lu kills left a cut pending "
			 "with %lu stale streams alive, recovery (CLI %lu, library %lu) reported "
			 "%lu cut%s%s, %lu stale streams seen cut, %lu stale alive after "
			 "recovery, %lu current ones cut",
			 ss.opened, ss.refused, ss.refused ? ": " : "",
			 ss.refused ? strerror(ss.refused_errno) : "", ss.left_pending,
			 ss.stale_after_kill, ss.recover_cli, ss.recover_lib, ss.reported_cut,
			 ss.recover_failed ? "; RECOVERY FAILED, first: " : "", ss.recover_why,
			 ss.cut, ss.stale_alive, ss.over_cut);
	}
	soak_counters_note(r->note, sizeof(r->note), kc);
	munmap((void *)st, sizeof(*st));
	close(w.grants_fd);
	return 0;
}
