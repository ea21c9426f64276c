// SPDX-License-Identifier: Apache-2.0
/* The worker handle (include/execgate/execgate.h) on the host kernel: admit
 * and install through it, then real connects; many threads on one handle;
 * forget; idempotent key adds. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "execgate/execgate.h"
#include "harness.h"

#define SANDBOX "5f0c2c1e-7a4b-4c1d-9e3f-0000000000a1"
#define WORKER	"a0000000-0000-4000-8000-00000000000a"

TestSuite(worker, .init = kh_setup_shared, .fini = kh_teardown, .timeout = 120);

static struct eg_worker *open_worker(void)
{
	struct eg_worker_config cfg = {.pin_dir = kh.pin_dir, .state_dir = kh.state_dir};
	struct eg_worker *w = NULL;
	char err[EG_ERR_MAX];

	cr_assert_eq(eg_worker_open(&cfg, &w, err, sizeof(err)), 0, "worker open: %s", err);
	return w;
}

static void spec_for(struct eg_install_spec *s, unsigned gen, pid_t bridge, const char *bsock)
{
	memset(s, 0, sizeof(*s));
	cr_assert_eq(eg_uuid_from_text(SANDBOX, s->sandbox), 0);
	cr_assert_eq(eg_uuid_from_text(WORKER, s->worker), 0);
	s->substrate = 2;
	s->generation = gen;
	s->activation = 1;
	s->bridge_pid = bridge;
	if (bsock) {
		s->bridge_sockets[0] = bsock;
		s->n_bridge_sockets = 1;
	}
}

/* A thread that publishes its tid and waits until told (-1) to exit. */
static void *report_tid(void *p)
{
	pid_t *tid = p;

	__atomic_store_n(tid, gettid(), __ATOMIC_RELEASE);
	while (__atomic_load_n(tid, __ATOMIC_ACQUIRE) != -1)
		usleep(1000);
	return NULL;
}

static struct eg_verdict_result admit(struct eg_worker *w, pid_t pid, const char *token)
{
	struct eg_subject who = {.pid = pid, .pidfd = -1};
	struct eg_admit_args a = {.token_text = token};
	struct eg_verdict_result r;
	char err[EG_ERR_MAX];

	cr_assert_eq(eg_worker_admit(w, &who, &a, &r, err, sizeof(err)), 0, "admit: %s", err);
	return r;
}

/* guarantees: none */
Test(worker, admit_through_the_handle_grants_a_real_connect)
{
	const char *bsock = kh_path("bridge.sock");
	struct kh_child mgr, other;
	struct eg_install_spec spec;
	struct eg_install_report rep;
	struct eg_verdict_result r;
	struct eg_worker *w;
	char tok8[512], tok7[512], err[EG_ERR_MAX];
	pid_t bridge = kh_listener_start(bsock);

	kh_keys();
	w = open_worker();
	kh_child_start(&mgr, true);
	kh_child_start(&other, true);
	spec_for(&spec, 8, bridge, bsock);
	cr_assert_eq(eg_worker_install(w, &spec, &rep, err, sizeof(err)), 0, "install: %s", err);
	cr_assert_str_eq(rep.outcome_name, "new");
	/* Installing the same thing again is idempotent. */
	cr_assert_eq(eg_worker_install(w, &spec, &rep, err, sizeof(err)), 0, "again: %s", err);
	cr_assert_str_eq(rep.outcome_name, "unchanged");

	kh_cap(tok8, sizeof(tok8), SANDBOX, WORKER, 8, 1, 120, 0);
	kh_cap(tok7, sizeof(tok7), SANDBOX, WORKER, 7, 1, 120, 0);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), -EPERM, "before admit");
	r = admit(w, mgr.pid, tok8);
	cr_assert_eq(r.d.verdict, EG_ALLOW, "gen 8: %s", eg_reason_name(r.d.reason));
	cr_assert(r.granted && !r.cache_hit);
	cr_assert_eq(r.subject.tgid, (__u32)mgr.pid);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), 0, "after admit");
	cr_assert_eq(kh_child_connect(&other, bsock, NULL, NULL), -EPERM, "other process");

	/* The worked example: execution 7's capability after 8 is installed. */
	r = admit(w, other.pid, tok7);
	cr_assert_eq(r.d.verdict, EG_REFRESH_ROUTE);
	cr_assert_eq(r.d.reason, EG_REASON_GENERATION_RETIRED, "%s", eg_reason_name(r.d.reason));
	cr_assert(!r.granted);
	cr_assert_eq(kh_child_connect(&other, bsock, NULL, NULL), -EPERM,
		     "no grant from a refresh");

	/* The second admission of the same token skips the verify. */
	r = admit(w, other.pid, tok8);
	cr_assert(r.cache_hit && r.granted);
	cr_assert_eq(kh_child_connect(&other, bsock, NULL, NULL), 0);

	/* A thread id is refused by name. */
	{
		pthread_t t;
		pid_t tid = 0;

		cr_assert_eq(pthread_create(&t, NULL, report_tid, &tid), 0);
		while (!__atomic_load_n(&tid, __ATOMIC_ACQUIRE))
			usleep(1000);
		struct eg_subject who = {.pid = tid, .pidfd = -1};
		struct eg_admit_args a = {.token_text = tok8};

		int rc = eg_worker_admit(w, &who, &a, &r, err, sizeof(err));

		cr_assert_eq(rc, -EINVAL, "tid %d: rc %d: %s", (int)tid, rc, err);
		cr_assert(strstr(err, "is a thread"), "%s", err);
		cr_assert(strstr(err, "not a process"), "%s", err);
		__atomic_store_n(&tid, -1, __ATOMIC_RELEASE);
		pthread_join(t, NULL);
	}
	eg_worker_close(w);
}

struct flip_arg {
	struct eg_worker *w;
	pid_t pid;
	const char *tok;
	unsigned n, allow, refresh, errors;
	char first[EG_ERR_MAX + 64]; /* what the first wrong result was */
};

static void *admit_loop(void *p)
{
	struct flip_arg *a = p;
	struct eg_subject who = {.pid = a->pid, .pidfd = -1};
	struct eg_admit_args args = {.token_text = a->tok};
	struct eg_verdict_result r;
	char err[EG_ERR_MAX];

	for (unsigned i = 0; i < a->n; i++) {
		if (eg_worker_admit(a->w, &who, &args, &r, err, sizeof(err))) {
			if (!a->errors++)
				snprintf(a->first, sizeof(a->first), "admit failed: %s", err);
			continue;
		}
		if (r.d.verdict == EG_ALLOW) {
			a->allow++;
			/* An allow is granted at the epoch of the record it was
			 * compared with, and that record named generation 8. */
			if (!r.granted || r.grant.generation != 8 ||
			    r.grant.epoch != r.record.epoch || r.record.generation != 8 ||
			    r.record.activation != 1 || r.record.retired) {
				if (!a->errors++)
					snprintf(a->first, sizeof(a->first),
						 "allow: granted %d grant gen %llu epoch %llu, "
						 "record gen "
						 "%llu epoch %llu act %u retired %d",
						 r.granted, (unsigned long long)r.grant.generation,
						 (unsigned long long)r.grant.epoch,
						 (unsigned long long)r.record.generation,
						 (unsigned long long)r.record.epoch,
						 r.record.activation, r.record.retired);
			}
		} else if (r.d.verdict == EG_REFRESH_ROUTE) {
			a->refresh++;
		} else if (!a->errors++) {
			snprintf(a->first, sizeof(a->first), "%s: %s", eg_verdict_name(r.d.verdict),
				 eg_reason_name(r.d.reason));
		}
	}
	return NULL;
}

/* guarantees: none */
Test(worker, many_threads_on_one_handle_while_installs_and_key_reloads_run)
{
	const char *bsock = kh_path("bridge.sock");
	struct flip_arg args[4];
	pthread_t th[4];
	struct eg_install_spec spec;
	struct eg_install_report rep;
	struct eg_worker_stats st;
	struct eg_worker *w;
	struct kh_child mgr;
	char tok[512], err[EG_ERR_MAX];
	unsigned allow = 0, refresh = 0;
	pid_t bridge = kh_listener_start(bsock);

	kh_keys();
	w = open_worker();
	kh_child_start(&mgr, true);
	spec_for(&spec, 8, bridge, bsock);
	cr_assert_eq(eg_worker_install(w, &spec, &rep, err, sizeof(err)), 0, "%s", err);
	kh_cap(tok, sizeof(tok), SANDBOX, WORKER, 8, 1, 120, 0);
	for (int i = 0; i < 4; i++) {
		args[i] = (struct flip_arg){.w = w, .pid = mgr.pid, .tok = tok, .n = 400};
		cr_assert_eq(pthread_create(&th[i], NULL, admit_loop, &args[i]), 0);
	}
	/* Meanwhile: reloads (which flush the cache), then a retire and a
	 * reactivation as attempt 2, which move the epoch under the admits. */
	for (int i = 0; i < 20; i++) {
		cr_assert_eq(eg_worker_keys_reload(w, err, sizeof(err)), 0, "%s", err);
		if (i == 10) {
			cr_assert_eq(eg_worker_retire(w, spec.sandbox, NULL, err, sizeof(err)), 0);
			spec.activation = 2;
			cr_assert_eq(eg_worker_install(w, &spec, &rep, err, sizeof(err)), 0, "%s",
				     err);
			cr_assert_str_eq(rep.outcome_name, "reactivated");
		}
		usleep(2000);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		cr_assert_eq(args[i].errors, 0, "thread %d: %u wrong results, first: %s", i,
			     args[i].errors, args[i].first);
		allow += args[i].allow;
		refresh += args[i].refresh;
	}
	/* Retired and reactivated are refresh-route, never a deny. */
	cr_assert_eq(allow + refresh, 1600);
	cr_assert_gt(allow, 0);
	eg_worker_stats(w, &st);
	cr_assert_eq(st.cache_hits + st.cache_misses, 1600, "every admit counted once");
	cr_assert_gt(st.cache_hits, 0, "the cache served some");
	/* Every grant of attempt 1 died with its epoch; attempt 2 admits. */
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), -EPERM, "old epoch's grants");
	kh_cap(tok, sizeof(tok), SANDBOX, WORKER, 8, 2, 120, 0);
	cr_assert_eq(admit(w, mgr.pid, tok).d.verdict, EG_ALLOW);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), 0);
	eg_worker_close(w);
}

/* guarantees: none */
Test(worker, forget_removes_a_retired_sandbox_and_its_endpoints)
{
	const char *bsock = kh_path("bridge.sock");
	struct eg_install_spec spec;
	struct eg_install_report rep;
	struct eg_sandbox_info info;
	struct eg_runtime_record alone;
	struct eg_worker *w;
	struct kh_child other;
	unsigned endpoints = 0;
	char err[EG_ERR_MAX];
	pid_t bridge = kh_listener_start(bsock);

	w = open_worker();
	kh_child_start(&other, true);
	spec_for(&spec, 3, bridge, bsock);
	cr_assert_eq(eg_worker_install(w, &spec, &rep, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(eg_worker_show(w, spec.sandbox, &info, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(info.record.generation, 3);
	cr_assert_geq(info.n_endpoints, 1);
	/* The record alone (the fleet watcher's read) is the one show reports. */
	cr_assert_eq(eg_worker_record(w, spec.sandbox, &alone, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(memcmp(alone.sandbox, spec.sandbox, EG_ID_BYTES), 0);
	cr_assert_eq(alone.generation, info.record.generation);
	cr_assert_eq(alone.activation, info.record.activation);
	cr_assert_eq(alone.epoch, info.record.epoch);
	cr_assert_eq(alone.bridge.tgid, info.record.bridge.tgid);
	cr_assert_eq(alone.n_ports, info.record.n_ports);
	cr_assert(!alone.retired && !alone.cut_pending);
	/* The library refuses what the CLI refuses: a control character. */
	spec.bridge_sockets[0] = "/tmp/evil\nsandbox 0 allow";
	cr_assert_eq(eg_worker_install(w, &spec, &rep, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "control character 0x0a"), "%s", err);
	spec.bridge_sockets[0] = bsock;
	cr_assert_eq(eg_worker_forget(w, spec.sandbox, &endpoints, err, sizeof(err)), -EBUSY);
	cr_assert(strstr(err, "retire it first"), "%s", err);
	cr_assert_eq(kh_child_connect(&other, bsock, NULL, NULL), -EPERM, "guarded");
	cr_assert_eq(eg_worker_retire(w, spec.sandbox, NULL, err, sizeof(err)), 0);
	cr_assert_eq(kh_child_connect(&other, bsock, NULL, NULL), -EPERM, "retired denies");
	cr_assert_eq(eg_worker_forget(w, spec.sandbox, &endpoints, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(endpoints, info.n_endpoints);
	cr_assert_eq(eg_worker_show(w, spec.sandbox, &info, err, sizeof(err)), -ENOENT);
	cr_assert_eq(eg_worker_record(w, spec.sandbox, &alone, err, sizeof(err)), -ENOENT);
	cr_assert(strstr(err, "no runtime record"), "%s", err);
	cr_assert_eq(eg_worker_forget(w, spec.sandbox, &endpoints, err, sizeof(err)), -ENOENT);
	/* Forgotten: the path is unregistered again and passes untouched. */
	cr_assert_eq(kh_child_connect(&other, bsock, NULL, NULL), 0, "unregistered");
	eg_worker_close(w);
}

static int count_key(const char *kid, const uint8_t pk[32], void *ctx)
{
	(void)kid;
	(void)pk;
	(*(int *)ctx)++;
	return 0;
}

/* guarantees: none */
Test(worker, keys_add_is_idempotent_and_remove_names_unknown_keys)
{
	char pub[256], kid[EG_KID_TEXT_LEN], kid2[EG_KID_TEXT_LEN], err[EG_ERR_MAX];
	struct eg_worker *w;
	int n = 0;

	kh_keys(); /* keygen + execgate keys add */
	w = open_worker();
	snprintf(pub, sizeof(pub), "%s/%s.pub", kh.keys_dir, kh.kid);
	cr_assert_eq(eg_worker_keys_add(w, pub, kid, err, sizeof(err)), 1, "present: %s", err);
	cr_assert_str_eq(kid, kh.kid);
	eg_worker_keys_list(w, count_key, &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(eg_worker_keys_remove(w, kid, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(eg_worker_keys_remove(w, kid, err, sizeof(err)), -ENOENT);
	cr_assert_eq(eg_worker_keys_add(w, pub, kid2, err, sizeof(err)), 0, "%s", err);
	n = 0;
	eg_worker_keys_list(w, count_key, &n);
	cr_assert_eq(n, 1);
	eg_worker_close(w);
}

/* guarantees: none */
Test(worker, refresh_and_deny_verdicts_are_signed_by_the_node_key)
{
	char pub[4200], other_pub[4200], tok[512], err[EG_ERR_MAX], wid[EG_UUID_TEXT_LEN];
	const char *bsock = kh_path("bridge.sock");
	struct eg_install_spec spec;
	struct eg_install_report rep;
	struct eg_verdict_claim claim;
	struct eg_verdict_result r;
	struct eg_admit_args a = {0};
	struct eg_worker *w;
	bool created;
	pid_t bridge = kh_listener_start(bsock);

	kh_keys();
	cr_assert_eq(
	    eg_node_key_init(kh.state_dir, WORKER, pub, sizeof(pub), &created, err, sizeof(err)), 0,
	    "%s", err);
	cr_assert(created);
	cr_assert_eq(
	    eg_node_key_init(kh.state_dir, WORKER, pub, sizeof(pub), &created, err, sizeof(err)), 0,
	    "again: %s", err);
	cr_assert(!created, "an existing node key is kept");
	cr_assert_eq(
	    eg_node_key_init(kh.state_dir, SANDBOX, pub, sizeof(pub), &created, err, sizeof(err)),
	    -EEXIST, "another worker id");
	w = open_worker();
	spec_for(&spec, 8, bridge, bsock);
	cr_assert_eq(eg_worker_install(w, &spec, &rep, err, sizeof(err)), 0, "%s", err);

	kh_cap(tok, sizeof(tok), SANDBOX, WORKER, 8, 1, 120, 0);
	a.token_text = tok;
	cr_assert_eq(eg_worker_check(w, &a, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.d.verdict, EG_ALLOW);
	cr_assert_str_eq(r.signed_verdict, "", "allow is never signed");

	kh_cap(tok, sizeof(tok), SANDBOX, WORKER, 7, 1, 120, 0);
	cr_assert_eq(eg_worker_check(w, &a, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.d.verdict, EG_REFRESH_ROUTE);
	cr_assert_neq(r.signed_verdict[0], '\0', "refresh-route is signed");
	cr_assert_eq(eg_verdict_verify(pub, r.signed_verdict, &claim, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_eq(claim.verdict, EG_REFRESH_ROUTE);
	cr_assert_eq(claim.reason, r.d.reason);
	cr_assert(claim.has_record);
	cr_assert_eq(claim.generation, 8, "the identity this worker has installed");
	cr_assert_eq(memcmp(claim.token_id, r.cap_token_id, EG_ID_BYTES), 0);
	eg_uuid_to_text(claim.worker, wid);
	cr_assert_str_eq(wid, WORKER);

	/* Another worker's node key does not verify it; a truncated one fails. */
	snprintf(other_pub, sizeof(other_pub), "%s/%s.pub", kh.keys_dir, kh.kid);
	cr_assert_eq(eg_verdict_verify(other_pub, r.signed_verdict, &claim, err, sizeof(err)),
		     -EBADMSG);
	cr_assert(strstr(err, "wrong-key"), "%s", err);
	/* 196 characters are whole base64 groups: 147 bytes, one short. */
	cr_assert_eq(strlen(r.signed_verdict), 198);
	r.signed_verdict[196] = '\0';
	cr_assert_eq(eg_verdict_verify(pub, r.signed_verdict, &claim, err, sizeof(err)), -EBADMSG);
	cr_assert(strstr(err, "bad-length"), "%s", err);
	eg_worker_close(w);
}

/* guarantees: none */
Test(worker, install_refuses_a_cid_no_guest_has_and_a_generation_above_the_ceiling)
{
	static const __u32 never_guest[] = {0, 2, 0xffffffffu};
	const char *bsock = kh_path("bridge.sock");
	struct eg_install_spec spec;
	struct eg_install_report rep;
	struct eg_sandbox_info info;
	struct eg_worker *w;
	char err[EG_ERR_MAX];
	pid_t bridge = kh_listener_start(bsock);

	w = open_worker();
	for (size_t i = 0; i < sizeof(never_guest) / sizeof(never_guest[0]); i++) {
		char want[64];

		spec_for(&spec, 3, bridge, bsock);
		spec.vsock[0] = (struct eg_vsock_addr){.cid = never_guest[i], .port = 52};
		spec.n_vsock = 1;
		cr_assert_eq(eg_worker_install(w, &spec, &rep, err, sizeof(err)), -EINVAL,
			     "CID %u accepted", never_guest[i]);
		snprintf(want, sizeof(want), "vsock %u:52: CID %u is never a VMM's guest",
			 never_guest[i], never_guest[i]);
		cr_assert(strstr(err, want), "%s", err);
		cr_assert_eq(eg_worker_show(w, spec.sandbox, &info, err, sizeof(err)), -ENOENT,
			     "a refused install wrote a record");
	}
	/* Generations: 2^63 - 1 (which nothing could ever replace) and 2^53
	 * are refused, 2^53 - 1 (EG_GENERATION_MAX) is the largest accepted. */
	spec_for(&spec, 3, bridge, bsock);
	spec.generation = 0x7fffffffffffffffULL;
	cr_assert_eq(eg_worker_install(w, &spec, &rep, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "generation 9223372036854775807 is above the largest generation "
			      "9007199254740991"),
		  "%s", err);
	spec.generation = EG_GENERATION_MAX + 1;
	cr_assert_eq(eg_worker_install(w, &spec, &rep, err, sizeof(err)), -EINVAL);
	cr_assert_eq(eg_worker_show(w, spec.sandbox, &info, err, sizeof(err)), -ENOENT);
	spec.generation = EG_GENERATION_MAX;
	cr_assert_eq(eg_worker_install(w, &spec, &rep, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(eg_worker_show(w, spec.sandbox, &info, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(info.record.generation, EG_GENERATION_MAX);
	eg_worker_close(w);

	/* The CLI: usage errors (exit 2), before anything is opened. */
	{
		char out[2048], pid[16];
		int rc;

		snprintf(pid, sizeof(pid), "%d", (int)bridge);
		rc = kh_cli(out, sizeof(out), "install", "--sandbox", SANDBOX, "--worker", WORKER,
			    "--generation", "9223372036854775807", "--activation", "1",
			    "--bridge-pid", pid, NULL);
		cr_assert_eq(rc, 2, "exit %d: %s", rc, out);
		cr_assert(strstr(out, "above the largest generation 9007199254740991"), "%s", out);
		rc = kh_cli(out, sizeof(out), "install", "--sandbox", SANDBOX, "--worker", WORKER,
			    "--generation", "3", "--activation", "1", "--bridge-pid", pid,
			    "--vsock", "2:52", NULL);
		cr_assert_eq(rc, 2, "exit %d: %s", rc, out);
		cr_assert(strstr(out, "--vsock 2:52"), "%s", out);
	}
}

/* The map holds substrate in 32 bits, the comparator's identity in 8
 * (user/core/identity.h): a record edited behind the loader to 0x102
 * would have narrowed to 2, firecracker-host, and allowed this token. It
 * is refused instead, and the same record with 2 allows again. */
/* guarantees: none */
Test(worker, a_map_substrate_above_a_byte_is_refused_not_narrowed)
{
	const char *bsock = kh_path("bridge.sock");
	struct eg_install_spec spec;
	struct eg_install_report rep;
	struct eg_exec_record rec;
	struct eg_verdict_result r;
	struct eg_admit_args a = {0};
	struct eg_worker *w;
	char tok[512], err[EG_ERR_MAX], out[4096];
	pid_t bridge = kh_listener_start(bsock);

	kh_keys();
	w = open_worker();
	spec_for(&spec, 8, bridge, bsock);
	cr_assert_eq(eg_worker_install(w, &spec, &rep, err, sizeof(err)), 0, "%s", err);
	kh_cap(tok, sizeof(tok), SANDBOX, WORKER, 8, 1, 120, 0);
	a.token_text = tok;
	cr_assert_eq(eg_worker_check(w, &a, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.d.verdict, EG_ALLOW);

	cr_assert_eq(eg_record_read(&kh.maps, spec.sandbox, &rec), 0);
	cr_assert_eq(rec.substrate, 2);
	rec.substrate = 0x100u | 2;
	cr_assert_eq(eg_record_write(&kh.maps, &rec), 0);
	err[0] = '\0';
	cr_assert_eq(eg_worker_check(w, &a, &r, err, sizeof(err)), -ERANGE, "verdict %d",
		     r.d.verdict);
	cr_assert(strstr(err, "substrate 258"), "%s", err);
	cr_assert(strstr(err, SANDBOX), "%s", err);
	/* Shown as the map holds it: not a name that 258 narrowed to. */
	cr_assert_eq(kh_cli(out, sizeof(out), "show", "--sandbox", SANDBOX, NULL), 0, "%s", out);
	cr_assert(strstr(out, " substrate unknown "), "%s", out);
	cr_assert_eq(kh_cli(out, sizeof(out), "show", "--sandbox", SANDBOX, "--json", NULL), 0,
		     "%s", out);
	cr_assert(strstr(out, "\"substrate\":\"unknown\""), "%s", out);

	rec.substrate = 2;
	cr_assert_eq(eg_record_write(&kh.maps, &rec), 0);
	cr_assert_eq(eg_worker_check(w, &a, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.d.verdict, EG_ALLOW);
	eg_worker_close(w);
}
