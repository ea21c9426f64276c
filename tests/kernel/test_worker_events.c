// SPDX-License-Identifier: Apache-2.0
/* eg_worker_events_next (include/execgate/execgate.h) on the host kernel:
 * a real denial comes out as a struct eg_denial with the decision's fields,
 * one per call, and an empty ring answers 0 after the timeout. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <criterion/criterion.h>
#include "execgate/execgate.h"
#include "execgate/text.h"
#include "harness.h"

#define SANDBOX "5f0c2c1e-7a4b-4c1d-9e3f-0000000000e1"
#define WORKER	"a0000000-0000-4000-8000-00000000000a"

TestSuite(worker_events, .init = kh_setup_shared, .fini = kh_teardown, .timeout = 120);

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The /proc/PID/comm of pid, without its newline. */
static void comm_of(pid_t pid, char *out, size_t size)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	cr_assert_not_null(fgets(out, (int)size, f));
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
}

/* guarantees: none */
Test(worker_events, a_real_denial_comes_out_whole_and_one_per_call)
{
	const char *bsock = kh_path("bridge.sock");
	struct eg_worker_config cfg = {.pin_dir = kh.pin_dir, .state_dir = kh.state_dir};
	struct eg_install_spec spec;
	struct eg_install_report rep;
	struct eg_denial d, d2;
	struct eg_worker *w = NULL;
	struct kh_child other;
	char err[EG_ERR_MAX], comm[32];
	int64_t boot0, boot1, real0, real1, t0;
	uint8_t sandbox[EG_ID_BYTES];
	pid_t bridge = kh_listener_start(bsock);
	int n;

	cr_assert_eq(eg_worker_open(&cfg, &w, err, sizeof(err)), 0, "worker open: %s", err);
	memset(&spec, 0, sizeof(spec));
	cr_assert_eq(eg_uuid_from_text(SANDBOX, spec.sandbox), 0);
	cr_assert_eq(eg_uuid_from_text(WORKER, spec.worker), 0);
	memcpy(sandbox, spec.sandbox, sizeof(sandbox));
	spec.substrate = 2;
	spec.generation = 3;
	spec.activation = 1;
	spec.bridge_pid = bridge;
	spec.bridge_sockets[0] = bsock;
	spec.n_bridge_sockets = 1;
	cr_assert_eq(eg_worker_install(w, &spec, &rep, err, sizeof(err)), 0, "install: %s", err);
	kh_child_start(&other, true);
	comm_of(other.pid, comm, sizeof(comm));
	/* What earlier tests of this world left in the ring. */
	while ((n = eg_worker_events_next(w, &d, 0)) == 1)
		;
	cr_assert_eq(n, 0, "draining: %d", n);

	boot0 = now_ns(CLOCK_BOOTTIME);
	real0 = now_ns(CLOCK_REALTIME);
	cr_assert_eq(kh_child_connect(&other, bsock, NULL, NULL), -EPERM, "no grant: denied");
	cr_assert_eq(kh_child_connect(&other, bsock, NULL, NULL), -EPERM, "again");
	boot1 = now_ns(CLOCK_BOOTTIME);
	real1 = now_ns(CLOCK_REALTIME);

	n = eg_worker_events_next(w, &d, 1000);
	cr_assert_eq(n, 1, "the first denial: %d", n);
	cr_assert_eq(d.pid, (uint32_t)other.pid);
	cr_assert_eq(d.tid, (uint32_t)other.pid, "the child's one thread");
	cr_assert_str_eq(d.comm, comm);
	cr_assert_str_eq(eg_kreason_name(d.reason), "deny-no-grant");
	cr_assert(!strcmp(eg_hook_name(d.hook), "connect_unix") ||
		      !strcmp(eg_hook_name(d.hook), "lsm/socket_connect"),
		  "hook %s", eg_hook_name(d.hook));
	cr_assert(!d.audit);
	cr_assert_arr_eq(d.sandbox, sandbox, EG_ID_BYTES);
	cr_assert_eq(d.epoch, rep.after.epoch, "epoch %llu, record's %llu",
		     (unsigned long long)d.epoch, (unsigned long long)rep.after.epoch);
	cr_assert_eq(d.dest, EG_DENIAL_DEST_UNIX);
	cr_assert_str_eq(d.path, bsock);
	cr_assert_eq(d.path[EG_UNIX_PATH_MAX], '\0');
	cr_assert_eq(d.vsock.cid, 0);
	cr_assert_eq(d.inet.family, 0);
	cr_assert(d.boottime_ns >= (uint64_t)boot0 && d.boottime_ns <= (uint64_t)boot1,
		  "boottime %llu not in [%lld, %lld]", (unsigned long long)d.boottime_ns,
		  (long long)boot0, (long long)boot1);
	/* The two clocks are read one after the other: a few µs apart. */
	cr_assert(d.realtime_ns >= real0 - 1000000 && d.realtime_ns <= real1 + 1000000,
		  "realtime %lld not in [%lld, %lld]", (long long)d.realtime_ns, (long long)real0,
		  (long long)real1);

	/* One per call: the second connect's denial is still there. */
	n = eg_worker_events_next(w, &d2, 0);
	cr_assert_eq(n, 1, "the second denial: %d", n);
	cr_assert_eq(d2.pid, d.pid);
	cr_assert(d2.boottime_ns >= d.boottime_ns);
	/* Then nothing: 0 at once, and 0 after the timeout. */
	cr_assert_eq(eg_worker_events_next(w, &d2, 0), 0);
	t0 = now_ns(CLOCK_MONOTONIC);
	cr_assert_eq(eg_worker_events_next(w, &d2, 100), 0);
	cr_assert_geq(now_ns(CLOCK_MONOTONIC) - t0, 95000000LL, "returned before the timeout");
	kh_child_stop(&other);
	eg_worker_close(w);
}
