// SPDX-License-Identifier: Apache-2.0
/* Crash safety: kill -9 of execgated leaves enforcement as it was (pinned
 * links and maps), a restart adopts the pins with records, epochs, keys and
 * grants intact, and a stop leaves the programs attached. Real connects
 * through the scratch cgroup back every claim. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "dd.h"

TestSuite(daemon_restart, .init = dd_setup, .fini = dd_teardown, .timeout = 90);

static long long epoch_of(const char *sandbox)
{
	char path[128];
	struct dd_resp r;
	long long e;

	snprintf(path, sizeof(path), "/v1/sandboxes/%s", sandbox);
	r = dd_req("GET", path, NULL);
	cr_assert_eq(r.status, 200, "%s", r.body);
	e = json_integer_value(json_object_get(json_object_get(r.json, "record"), "epoch"));
	dd_resp_free(&r);
	return e;
}

static void admit_for(const char *token, pid_t pid, const char *want)
{
	char *body = dd_admit_body(token, "file.read", pid);
	struct dd_resp r = dd_req("POST", "/v1/admit", body);

	free(body);
	cr_assert_eq(r.status, 200, "%s", r.body);
	cr_assert_str_eq(dd_str(&r, "verdict"), want, "%s", r.body);
	dd_resp_free(&r);
}

Test(daemon_restart, kill9_keeps_enforcement_and_restart_adopts)
{
	struct kh_child bridge, granted, other;
	const char *sock = kh_path("bridge.sock");
	char t8[1024];
	struct dd_resp r;
	long long epoch;
	int st;

	dd_keys();
	kh_child_start(&bridge, false);
	cr_assert_eq(kh_child_listen(&bridge, sock), 0);
	r = dd_install(DD_SANDBOX, 8, 1, bridge.pid, sock);
	cr_assert_eq(r.status, 200, "%s", r.body);
	dd_resp_free(&r);
	kh_cap(t8, sizeof(t8), DD_SANDBOX, DD_WORKER, 8, 1, 120, 0);
	kh_child_start(&granted, true);
	kh_child_start(&other, true);
	admit_for(t8, granted.pid, "allow");
	cr_assert_eq(kh_child_connect(&granted, sock, NULL, NULL), 0);
	cr_assert_eq(kh_child_connect(&other, sock, NULL, NULL), -EPERM);
	epoch = epoch_of(DD_SANDBOX);

	st = dd_stop(SIGKILL);
	cr_assert_eq(st, 128 + SIGKILL);
	/* No daemon: the kernel still enforces exactly as before. */
	cr_expect_eq(kh_child_connect(&granted, sock, NULL, NULL), 0, "grant lost with the daemon");
	cr_expect_eq(kh_child_connect(&other, sock, NULL, NULL), -EPERM,
		     "enforcement lost with the daemon");

	dd_start(); /* stale socket file, pinned programs: adopted */
	cr_expect_eq(epoch_of(DD_SANDBOX), epoch, "the restart moved the epoch");
	cr_expect_eq(kh_child_connect(&granted, sock, NULL, NULL), 0);
	cr_expect_eq(kh_child_connect(&other, sock, NULL, NULL), -EPERM);
	admit_for(t8, other.pid, "allow"); /* keys came back from the state dir */
	cr_expect_eq(kh_child_connect(&other, sock, NULL, NULL), 0);

	/* A clean stop: exit 0, programs stay attached. */
	st = dd_stop(SIGTERM);
	cr_expect_eq(st, 0, "SIGTERM exit %d", st);
	{
		struct kh_child late;

		kh_child_start(&late, true);
		cr_expect_eq(kh_child_connect(&late, sock, NULL, NULL), -EPERM,
			     "programs detached when the daemon stopped");
	}
	dd_start();
}

/* The admits each racer makes after the install answered, at least. */
#define LATE_CALLS 20

struct racer {
	const char *token;
	volatile bool *stop;
	double install_done; /* ms; 0 while the install runs */
	volatile double *install_done_at;
	int late_allows;
	atomic_int late_total; /* read by the test while the racer runs */
};

static void *admit_loop(void *arg)
{
	struct racer *r = arg;
	char *body = dd_admit_body(r->token, "file.read", 0);

	while (!*r->stop) {
		double t0 = dd_now_ms();
		struct dd_resp resp = dd_req("POST", "/v1/check", body);
		double done = *r->install_done_at;

		/* Only an admit that started after the install answered is
		 * bound to see it. */
		if (done > 0 && t0 > done) {
			r->late_total++;
			if (!strcmp(dd_str(&resp, "verdict"), "allow"))
				r->late_allows++;
		}
		dd_resp_free(&resp);
	}
	free(body);
	return NULL;
}

Test(daemon_restart, no_allow_from_a_replaced_execution)
{
	struct kh_child bridge;
	const char *sock = kh_path("bridge.sock");
	volatile double done_at = 0;
	volatile bool stop = false;
	struct racer rc[3];
	pthread_t th[3];
	char t8[1024];
	struct dd_resp r;

	dd_keys();
	kh_child_start(&bridge, false);
	cr_assert_eq(kh_child_listen(&bridge, sock), 0);
	r = dd_install(DD_SANDBOX, 8, 1, bridge.pid, sock);
	cr_assert_eq(r.status, 200, "%s", r.body);
	dd_resp_free(&r);
	kh_cap(t8, sizeof(t8), DD_SANDBOX, DD_WORKER, 8, 1, 120, 0);
	for (int i = 0; i < 3; i++) {
		rc[i] = (struct racer){.token = t8, .stop = &stop, .install_done_at = &done_at};
		pthread_create(&th[i], NULL, admit_loop, &rc[i]);
	}
	usleep(200000);
	r = dd_install(DD_SANDBOX, 9, 1, bridge.pid, sock);
	done_at = dd_now_ms();
	cr_assert_eq(r.status, 200, "%s", r.body);
	dd_resp_free(&r);
	/* Each racer must have started admits after the install answered:
	 * waiting a fixed 300 ms left racers with none on a loaded host.
	 * LATE_CALLS each, or fail after 60 s. */
	for (double t0 = dd_now_ms(); dd_now_ms() - t0 < 60000;) {
		int ready = 0;

		for (int i = 0; i < 3; i++)
			ready += atomic_load(&rc[i].late_total) >= LATE_CALLS;
		if (ready == 3)
			break;
		usleep(10000);
	}
	stop = true;
	for (int i = 0; i < 3; i++) {
		pthread_join(th[i], NULL);
		cr_expect_geq(atomic_load(&rc[i].late_total), LATE_CALLS,
			      "racer %d: %d admits after the install in 60 s", i,
			      atomic_load(&rc[i].late_total));
		cr_expect_eq(rc[i].late_allows, 0,
			     "racer %d: %d allows for generation 8 after generation 9 was "
			     "installed",
			     i, rc[i].late_allows);
	}
}
