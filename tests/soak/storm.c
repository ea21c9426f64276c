// SPDX-License-Identifier: Apache-2.0
/* Scenario 2: connect storms on both cores while the sandbox's epoch flips
 * `rate` times a second.
 *
 * Two connectors in the cgroup, one pinned to each CPU:
 *  - "bridge": connects to the VMM socket; allowed iff the record names it
 *    as the bridge. Flips alternate the bridge between it and a dummy.
 *  - "holder": connects to the bridge socket; allowed iff it holds a grant
 *    at the record's current epoch. Every flip moves the epoch (a new
 *    generation), which kills the grant; every second flip admits it again.
 * Half a period after each admit come two writes that change no verdict
 * (the same record, the grant renewed), so that a connect refused only
 * because a write happened (a reader's race guard) counts as wrong.
 *
 * Reference log: every write (install, admit) with its [start, end] on
 * CLOCK_MONOTONIC and the verdict each connector should get in the state
 * it leaves. State j may be what the kernel sees at any moment of
 * [start_j, end_{j+1}]. A connect with window [a, b] may have seen every
 * state whose interval meets [a, b]; an allow is wrong if none of those
 * states allows it, a deny is wrong if none denies it. No timing
 * assumption: a slow or descheduled connect only widens its own window. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "loader/maps/maps.h"
#include "soak.h"

struct conn_ev {
	uint64_t start;
	uint32_t dur;
	int32_t rc;
};

struct storm_shared {
	volatile int go, stop;
	volatile unsigned long n[2];
	volatile int full[2];
};

#define LIB_EVERY 50 /* one flip in LIB_EVERY through the library */

struct trans {
	uint64_t start, end;
	uint8_t allow[2];
};

static void connector(struct storm_shared *sh, int c, const char *path, struct conn_ev *ev,
		      size_t cap)
{
	soak_enter(c);
	while (!sh->go)
		usleep(100);
	while (!sh->stop) {
		unsigned long i = sh->n[c];
		uint64_t a;
		int rc;

		if (i >= cap) {
			sh->full[c] = 1;
			break;
		}
		a = soak_now_ns();
		rc = soak_connect(path);
		ev[i].start = a;
		ev[i].dur = (uint32_t)(soak_now_ns() - a);
		ev[i].rc = rc;
		__atomic_store_n(&sh->n[c], i + 1, __ATOMIC_RELEASE);
	}
	_exit(0);
}

/* Last j with t[j].start <= x, or -1. */
static long last_started(const struct trans *t, size_t m, uint64_t x)
{
	long lo = 0, hi = (long)m - 1, ans = -1;

	while (lo <= hi) {
		long mid = (lo + hi) / 2;

		if (t[mid].start <= x) {
			ans = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return ans;
}

/* First j whose successor's write ended at or after x (or the last). */
static long first_live(const struct trans *t, size_t m, uint64_t x)
{
	long lo = 0, hi = (long)m - 1;

	while (lo < hi) {
		long mid = (lo + hi) / 2;

		if (t[mid + 1].end >= x)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static struct eg_grant admit(struct eg_subject *who, const char *token, const char *what)
{
	struct eg_admit_args a = {.token_text = token,
				  .req = {.scope = EG_SCOPE_FILE_READ, .open_kind = EG_OPEN_NEW}};
	struct eg_verdict_result res;
	struct eg_grant g;
	char err[EG_ERR_MAX];
	int rc;

	memset(&res, 0, sizeof(res));
	rc = eg_worker_admit(se.w, who, &a, &res, err, sizeof(err));
	if (rc)
		soak_fail("storm: admit (%s): %s", what, err);
	if (res.d.verdict != EG_ALLOW || !res.granted)
		soak_fail("storm: admit (%s): %s %s, no grant", what,
			  eg_verdict_name(res.d.verdict), eg_reason_name(res.d.reason));
	memset(&g, 0, sizeof(g));
	eg_proc_id_of(&res.grant.proc, &g.key.proc);
	memcpy(g.key.sandbox, res.grant.sandbox, EG_ID_BYTES);
	g.scope = res.grant.scope;
	g.generation = res.grant.generation;
	g.epoch = res.grant.epoch;
	g.expiry_ns = res.grant.expiry_ns;
	return g;
}

int soak_storm(struct soak_result *r, double seconds, unsigned rate)
{
	static const char *const names[2] = {"bridge", "holder"};
	struct storm_shared *sh;
	struct conn_ev *ev[2];
	struct trans *t;
	struct eg_install_spec spec = {0};
	struct eg_install_report rep;
	struct eg_subject holder = {.pidfd = -1};
	struct eg_process holder_id;
	char err[EG_ERR_MAX], bsock[200], vsock[200], (*tokens)[EG_CAP_TEXT_MAX];
	const char *paths[2];
	size_t cap = (size_t)((seconds + 5) * 400000), m = 0, tcap, ntok;
	unsigned long *pre[2], allows[2] = {0}, denies[2] = {0}, ambiguous = 0, late = 0;
	uint64_t t0, period, begin, end_at;
	pid_t cpid[2], dummy;
	__u8 sb[EG_ID_BYTES];
	struct eg_exec_record rec;
	struct eg_grant grant;
	struct eg_proc_id bridge_id, dummy_id;
	unsigned long k, lib_flips = 0, neutral = 0;
	int rec_fd, rc;
	uint64_t kc[EG_K_REASON_COUNT];
	struct eg_maps maps;

	r->name = "storm";
	t0 = soak_now_ns();
	soak_sandbox(sb, 2, 1);
	snprintf(bsock, sizeof(bsock), "%s/s-bridge.sock", se.dir);
	snprintf(vsock, sizeof(vsock), "%s/s-vmm.sock", se.dir);
	paths[0] = vsock;
	paths[1] = bsock;
	soak_listener(bsock, vsock);
	soak_counters(kc);
	dummy = soak_dummy();

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	for (int c = 0; c < 2; c++)
		ev[c] = mmap(NULL, cap * sizeof(struct conn_ev), PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (sh == MAP_FAILED || ev[0] == MAP_FAILED || ev[1] == MAP_FAILED)
		soak_fail("storm: mmap: %s", strerror(errno));
	memset((void *)sh, 0, sizeof(*sh));
	for (int c = 0; c < 2; c++) {
		cpid[c] = soak_fork();
		if (cpid[c] == 0)
			connector(sh, c, paths[c], ev[c], cap);
	}

	/* The holder's identity once, then only its pidfd's liveness per
	 * admit, as execgated does for a connection. */
	holder.pid = cpid[1];
	holder.pidfd = (int)syscall(SYS_pidfd_open, cpid[1], 0);
	if (holder.pidfd < 0)
		soak_fail("storm: pidfd_open: %s", strerror(errno));
	if (eg_worker_identify(&holder, &holder_id, err, sizeof(err)))
		soak_fail("storm: identify: %s", err);
	holder.known = &holder_id;

	/* Tokens (for the library's admits) are signed before the storm: the
	 * control plane's cost is not what is measured. */
	k = (unsigned long)(seconds * rate) + 2;
	ntok = k / LIB_EVERY + 2;
	tcap = 3 * k + 8;
	tokens = calloc(ntok, sizeof(*tokens));
	t = calloc(tcap, sizeof(*t));
	if (!tokens || !t)
		soak_fail("storm: out of memory");
	for (size_t i = 0; i < ntok; i++)
		soak_token(tokens[i], sb, i * LIB_EVERY + 1, 1, 120);

	memcpy(spec.sandbox, sb, EG_ID_BYTES);
	memcpy(spec.worker, se.worker, EG_ID_BYTES);
	spec.substrate = 2;
	spec.activation = 1;
	spec.vmm_pid = dummy;
	spec.bridge_sockets[0] = bsock;
	spec.n_bridge_sockets = 1;
	spec.vmm_sockets[0] = vsock;
	spec.n_vmm_sockets = 1;
	rec_fd = soak_map("eg_records");
	/* The raw flips write as the loader does (loader/maps/maps.c), so that they
	 * also move the admission cache's word (docs/design.md §20). */
	if (eg_maps_open(&maps, se.pin_dir, err, sizeof(err)))
		soak_fail("storm: %s", err);
	bridge_id = soak_identify(cpid[0]);
	dummy_id = soak_identify(dummy);

	/* Flip k installs generation k, which moves the epoch and so kills
	 * the holder's grant. On odd k the bridge connector is the bridge
	 * and the holder is granted again at the new epoch; on even k the
	 * dummy is the bridge and the holder has no live grant.
	 *
	 * Flip 1 and every LIB_EVERY-th after it go through the library
	 * (eg_worker_install + eg_worker_admit, token k). The others write
	 * the record and the grant exactly as abi.h defines them, one locked
	 * map update each, so that their [start, end] windows are a few
	 * microseconds: the library call's window is the whole call, and at
	 * 1 000 flips a second every connect would overlap one. */
	period = 1000000000ULL / rate;
	begin = soak_now_ns();
	end_at = begin + (uint64_t)(seconds * 1e9);
	for (k = 1;; k++) {
		uint64_t due = begin + (k - 1) * period, now = soak_now_ns();
		bool odd = k & 1, lib = k % LIB_EVERY == 1;

		if (k > 1 && now >= end_at)
			break;
		if (m + 4 > tcap || (lib && k / LIB_EVERY >= ntok))
			break;
		if (now < due) {
			struct timespec ts = {.tv_sec = (time_t)(due / 1000000000ULL),
					      .tv_nsec = (long)(due % 1000000000ULL)};

			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		} else if (now > due + period) {
			late++;
		}
		t[m].allow[0] = odd;
		t[m].allow[1] = 0; /* the epoch moved: the grant is dead */
		if (lib) {
			spec.generation = k;
			spec.bridge_pid = odd ? cpid[0] : dummy;
			t[m].start = soak_now_ns();
			if (eg_worker_install(se.w, &spec, &rep, err, sizeof(err)))
				soak_fail("storm: install generation %lu: %s", k, err);
			t[m].end = soak_now_ns();
			if (k > 1 && rep.outcome != EG_INSTALLED_REPLACED)
				soak_fail("storm: install generation %lu: %s, not replaced", k,
					  rep.outcome_name);
			/* The record as the map holds it: the next flips write it back. */
			if (bpf_map_lookup_elem_flags(rec_fd, spec.sandbox, &rec, BPF_F_LOCK))
				soak_fail("storm: reading eg_records: %s", strerror(errno));
			memset(&rec.lock, 0, sizeof(rec.lock));
			lib_flips++;
		} else {
			rec.generation = k;
			rec.epoch++;
			rec.bridge = odd ? bridge_id : dummy_id;
			t[m].start = soak_now_ns();
			if ((errno = -eg_record_write(&maps, &rec)))
				soak_fail("storm: writing eg_records: %s", strerror(errno));
			t[m].end = soak_now_ns();
		}
		m++;
		if (odd) {
			t[m].allow[0] = 1;
			t[m].allow[1] = 1;
			if (lib) {
				t[m].start = soak_now_ns();
				grant = admit(&holder, tokens[k / LIB_EVERY], "holder");
				t[m].end = soak_now_ns();
			} else {
				grant.generation = rec.generation;
				grant.epoch = rec.epoch;
				t[m].start = soak_now_ns();
				if ((errno = -eg_grant_write(&maps, &grant)))
					soak_fail("storm: writing eg_grants: %s", strerror(errno));
				t[m].end = soak_now_ns();
			}
			m++;
			/* Half a period later, writes that change no verdict: the
			 * same record again and the grant renewed (a later
			 * expiry), as a re-admit does. A connect denied across
			 * them alone is a wrong deny, e.g. a reader's race guard
			 * refusing a connect that every state allowed. */
			due += period / 2;
			if (soak_now_ns() < due) {
				struct timespec ts = {.tv_sec = (time_t)(due / 1000000000ULL),
						      .tv_nsec = (long)(due % 1000000000ULL)};

				clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			}
			t[m].allow[0] = t[m].allow[1] = 1;
			t[m].start = soak_now_ns();
			if ((errno = -eg_record_write(&maps, &rec)))
				soak_fail("storm: writing eg_records: %s", strerror(errno));
			t[m].end = soak_now_ns();
			m++;
			grant.expiry_ns += 1000000; /* 1 ms more */
			t[m].allow[0] = t[m].allow[1] = 1;
			t[m].start = soak_now_ns();
			if ((errno = -eg_grant_write(&maps, &grant)))
				soak_fail("storm: writing eg_grants: %s", strerror(errno));
			t[m].end = soak_now_ns();
			m++;
			neutral += 2;
		}
		sh->go = 1; /* from generation 1 on: both endpoints are registered */
	}
	r->runs = k - 1;
	sh->stop = 1;
	{
		double flip_s = (double)(soak_now_ns() - begin) / 1e9;

		for (int c = 0; c < 2; c++)
			soak_reap(cpid[c]);
		/* Leave no grant behind (dead or live): the capacity scenario
		 * counts on every grant in the map being live. */
		rc = eg_worker_revoke(se.w, cpid[1], sb, &(unsigned){0}, err, sizeof(err));
		if (rc && rc != -ENOENT)
			soak_fail("storm: revoke: %s", err);
		close(holder.pidfd);

		/* Check every connect against the log. */
		for (int c = 0; c < 2; c++) {
			pre[c] = calloc(m + 1, sizeof(unsigned long));
			if (!pre[c])
				soak_fail("storm: out of memory");
			for (size_t j = 0; j < m; j++)
				pre[c][j + 1] = pre[c][j] + t[j].allow[c];
		}
		for (int c = 0; c < 2; c++)
			for (unsigned long i = 0; i < sh->n[c]; i++) {
				const struct conn_ev *e = &ev[c][i];
				uint64_t b = e->start + e->dur;
				long hi = last_started(t, m, b), lo;
				unsigned long nallow, nstates;

				if (hi < 0)
					soak_fail("storm: a connect ended before generation 1");
				lo = first_live(t, m, e->start);
				if (lo > hi)
					lo = hi;
				nstates = (unsigned long)(hi - lo + 1);
				nallow = pre[c][hi + 1] - pre[c][lo];
				if (nallow && nallow < nstates)
					ambiguous++;
				r->decisions++;
				if (e->rc == 0) {
					allows[c]++;
					if (!nallow)
						r->wrong_allow++;
				} else if (e->rc == -EPERM) {
					denies[c]++;
					if (nallow == nstates)
						r->wrong_deny++;
				} else {
					r->other++;
				}
			}
		r->seconds = (double)(soak_now_ns() - t0) / 1e9;
		snprintf(
		    r->note, sizeof(r->note),
		    "%lu flips in %.1f s = %.0f/s (target %u/s, %lu late by more than a "
		    "period; %lu through the library), %zu logged writes (%lu that change no "
		    "verdict); %s: %lu allowed, "
		    "%lu denied; %s: %lu "
		    "allowed, %lu denied; %lu connects overlapped a flip that changed their "
		    "verdict (either verdict right)%s",
		    r->runs, flip_s, (double)r->runs / flip_s, rate, late, lib_flips, m, neutral,
		    names[0], allows[0], denies[0], names[1], allows[1], denies[1], ambiguous,
		    sh->full[0] || sh->full[1] ? "; connect log full, a connector stopped" : "");
		soak_counters_note(r->note, sizeof(r->note), kc);
		/* The rate is the machine's, not a verdict: a loaded host gets a
		 * note, and only a run that was not the scenario at all fails. A
		 * fresh root's make check, beside two TCG guests and the build
		 * of the system test's root, flipped 313 a second: 11 901 flips
		 * that 698 535 connects overlapped, the scenario still. */
		if ((double)r->runs / flip_s < 0.1 * rate) {
			r->failed = true;
			strncat(r->note,
				"; flip rate below a tenth of the target: not the scenario",
				sizeof(r->note) - strlen(r->note) - 1);
		} else if ((double)r->runs / flip_s < 0.9 * rate) {
			strncat(r->note, "; flip rate below 90% of the target (a loaded host)",
				sizeof(r->note) - strlen(r->note) - 1);
		}
		if (!allows[0] || !denies[0] || !allows[1] || !denies[1]) {
			r->failed = true;
			strncat(r->note, "; a connector never saw one of the verdicts",
				sizeof(r->note) - strlen(r->note) - 1);
		}
	}
	for (int c = 0; c < 2; c++) {
		free(pre[c]);
		munmap(ev[c], cap * sizeof(struct conn_ev));
	}
	munmap((void *)sh, sizeof(*sh));
	close(rec_fd);
	eg_maps_close(&maps);
	free(tokens);
	free(t);
	return 0;
}
