// SPDX-License-Identifier: Apache-2.0
/* No torn reads: children connect in a loop while this process rewrites
 * the record and a grant as fast as it can. The states written are chosen
 * so that each one alone gives a known verdict, and any mix of two of them
 * that the kernel could see in a torn read gives a verdict (or a socket tag)
 * that no single state gives. Every decision is checked against that.
 *
 * EXECGATE_STRESS_SECONDS sets each phase's length (default 2). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <criterion/criterion.h>
#include "core/ids.h"
#include "harness.h"

#define S1 "5f0c2c1e-7a4b-4c1d-9e3f-0000000005a1"
#define S2 "5f0c2c1e-7a4b-4c1d-9e3f-0000000005a2"
#define W  "a0000000-0000-4000-8000-00000000000a"

TestSuite(cgroup_stress, .init = kh_setup_shared, .fini = kh_teardown, .timeout = 120);

static double seconds(void)
{
	const char *s = getenv("EXECGATE_STRESS_SECONDS");
	double v = s ? atof(s) : 2.0;

	return v > 0 ? v : 2.0;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void install(const char *sandbox, pid_t bridge, pid_t vmm, const char *flag,
		    const char *path, const char *gen)
{
	char b[16], v[16], out[2048];
	int rc;

	snprintf(b, sizeof(b), "%d", (int)bridge);
	snprintf(v, sizeof(v), "%d", (int)vmm);
	rc =
	    kh_cli(out, sizeof(out), "install", "--sandbox", sandbox, "--worker", W, "--generation",
		   gen, "--activation", "1", "--bridge-pid", b, "--vmm-pid", v, flag, path, NULL);
	cr_assert_eq(rc, 0, "install: %s", out);
}

/* Allowed states have generation == epoch == activation; the denied
 * states break that correlation, so a tag built from a torn mix shows. */
static bool tag_consistent(const struct eg_sk_tag *t, void *arg)
{
	(void)arg;
	return t->epoch == t->generation && t->activation == t->generation;
}

/* guarantees: unix-vmm-socket-bridge-only, unix-socket-epoch-tag */
Test(cgroup_stress, record_flips_never_tear)
{
	const char *vsock = kh_path("fc.sock");
	struct eg_exec_record base, w;
	struct eg_proc_id bid;
	struct kh_child dummy;
	struct kh_loop bridge;
	struct kh_loop_result r;
	__u8 sb[EG_ID_BYTES];
	unsigned long writes = 0;
	pid_t fc = kh_listener_start(vsock);
	double end;

	kh_loop_start(&bridge, vsock, seconds(), tag_consistent, NULL);
	kh_child_start(&dummy, false);
	install(S1, dummy.pid, fc, "--vmm-socket", vsock, "1");
	cr_assert_eq(eg_uuid_parse(S1, sb), 0);
	cr_assert_eq(eg_record_read(&kh.maps, sb, &base), 0);
	bid = kh_proc_id(bridge.pid);

	kh_loop_go(&bridge);
	end = mono() + seconds();
	for (__u64 k = 1; mono() < end; k++) {
		/* Z_k: the loop child is the bridge; epoch == generation == attempt. */
		w = base;
		w.generation = w.epoch = k;
		w.activation = (__u32)k;
		w.bridge = bid;
		cr_assert_eq(eg_record_write(&kh.maps, &w), 0);
		/* X_k: right tgid, wrong start time; uncorrelated epoch. */
		w.epoch = 1000000000ULL + k;
		w.activation = (__u32)k + 1;
		w.bridge.start_boottime_ns = bid.start_boottime_ns + 1000;
		cr_assert_eq(eg_record_write(&kh.maps, &w), 0);
		/* Y_k: right start time, wrong tgid. A mix of X and Y can name
		 * the loop child exactly, with an epoch no allowed state has. */
		w.epoch = 2000000000ULL + k;
		w.activation = (__u32)k + 2;
		w.bridge = bid;
		w.bridge.tgid = 0x7ffffff0;
		cr_assert_eq(eg_record_write(&kh.maps, &w), 0);
		writes += 3;
	}
	r = kh_loop_wait(&bridge);
	cr_log_info("record flips: %lu writes; %lu allowed (%lu tagged), %lu denied", writes, r.ok,
		    r.tagged, r.eperm);
	cr_assert_gt(writes, 1000, "the writer ran");
	cr_assert_gt(r.ok, 0, "some connects were allowed");
	cr_assert_gt(r.eperm, 0, "some connects were denied");
	cr_assert_eq(r.other, 0, "unexpected errno %d", r.other_errno);
	cr_assert_eq(r.tagged, r.ok, "every admitted socket is tagged");
	cr_assert_eq(r.bad_tag, 0, "%lu admitted sockets carry a torn (epoch, generation, attempt)",
		     r.bad_tag);
	/* Denials are exactly "not the bridge": never a torn "inconsistent". */
	cr_assert_eq(kh_counter(EG_K_DENY_NOT_BRIDGE), r.eperm);
	cr_assert_eq(kh_counter(EG_K_ALLOW_BRIDGE), r.ok);
}

/* guarantees: unix-bridge-socket-grant, epoch-revokes-grants */
Test(cgroup_stress, grant_flips_and_reuse_never_tear)
{
	const char *bsock = kh_path("bridge.sock");
	struct eg_exec_record rec;
	struct eg_grant dead_epoch, dead_expiry;
	struct kh_child bridge, other;
	struct kh_loop mgr;
	struct kh_loop_result r;
	__u8 sb[EG_ID_BYTES];
	unsigned long writes = 0, reuses = 0;
	double end, hard_end;
	int gfd = kh.maps.fd[EG_MAP_GRANTS];

	kh_child_start(&bridge, false);
	kh_child_start(&other, false);
	cr_assert_eq(kh_child_listen(&bridge, bsock), 0);
	/* The manager connects for up to three times the writer's time: on a
	 * loaded host (a fresh root's make check beside two TCG guests) the
	 * writer took longer than seconds() to reach its 1000 writes. */
	kh_loop_start(&mgr, bsock, 3 * seconds(), NULL, NULL);
	install(S2, bridge.pid, bridge.pid, "--bridge-socket", bsock, "5");
	cr_assert_eq(eg_uuid_parse(S2, sb), 0);
	cr_assert_eq(eg_record_read(&kh.maps, sb, &rec), 0);
	cr_assert_eq(rec.epoch, 1);

	/* Two dead grants for the loop child whose mix would be live: one
	 * dead by epoch (unexpired), one dead by expiry (current epoch). */
	memset(&dead_epoch, 0, sizeof(dead_epoch));
	dead_epoch.key.proc = kh_proc_id(mgr.pid);
	memcpy(dead_epoch.key.sandbox, sb, EG_ID_BYTES);
	dead_expiry = dead_epoch;
	dead_epoch.generation = rec.generation - 1;
	dead_epoch.epoch = rec.epoch + 1000;
	dead_epoch.expiry_ns = eg_boottime_ns() + 3600ULL * 1000000000ULL;
	dead_expiry.generation = rec.generation;
	dead_expiry.epoch = rec.epoch;
	dead_expiry.expiry_ns = 1;

	kh_loop_go(&mgr);
	end = mono() + seconds();
	hard_end = mono() + 3 * seconds();
	for (unsigned long i = 0; (mono() < end || writes < 1000) && mono() < hard_end; i++) {
		cr_assert_eq(eg_grant_write(&kh.maps, &dead_epoch), 0);
		cr_assert_eq(eg_grant_write(&kh.maps, &dead_expiry), 0);
		writes += 2;
		if (i % 16 == 0) {
			/* Element re-use: revoke (tombstone + delete) as the loader
			 * does, churn another key through the freed memory, then
			 * insert again. */
			unsigned removed;
			struct eg_grant churn = dead_epoch;
			char err[256];

			cr_assert_eq(eg_revoke(&(struct eg_runtime){.maps = kh.maps}, mgr.pid, sb,
					       &removed, err, sizeof(err)),
				     0, "%s", err);
			churn.key.proc = kh_proc_id(other.pid);
			cr_assert_eq(eg_grant_write(&kh.maps, &churn), 0);
			cr_assert_eq(bpf_map_delete_elem(gfd, &churn.key), 0);
			reuses++;
		}
	}
	r = kh_loop_wait(&mgr);
	cr_log_info("grant flips: %lu writes, %lu delete/re-insert rounds; %lu connects denied",
		    writes, reuses, r.eperm);
	cr_assert_gt(writes, 1000, "the writer ran");
	cr_assert_gt(r.eperm, 100, "the manager kept trying");
	cr_assert_eq(r.ok, 0, "%lu connects allowed on a mix of two dead grants", r.ok);
	cr_assert_eq(r.other, 0, "unexpected errno %d", r.other_errno);
	cr_assert_eq(kh_counter(EG_K_ALLOW_GRANT), 0);
}
