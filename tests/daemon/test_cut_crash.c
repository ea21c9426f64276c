// SPDX-License-Identifier: Apache-2.0
/* A stream cut lost to a daemon crash (user/loader/revokers/cut_intent.h): execgated
 * dies after an install moved the epoch and before it cut the old
 * execution's streams (the test-only crash point EXECGATE_TEST_FAULT=
 * epoch-moved, user/loader/fault.h). The restarted daemon finishes the cut
 * at start-up, before it answers, and logs it; the retried install is then
 * `unchanged` with nothing left to cut. Cut means EOF on receive and EPIPE
 * on send at both ends (tests/kernel/stream_holder.h). The CLI-side
 * recoveries are in tests/kernel/test_revoke_crash.c. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "dd.h"
#include "loader/fault.h"
#include "stream_holder.h"

#define NSTREAMS 3

TestSuite(daemon_cut_crash, .init = dd_setup, .fini = dd_teardown, .timeout = 90);

static struct dd_resp install(unsigned gen, pid_t bridge, const char *vmm)
{
	char path[128], body[1024];

	snprintf(path, sizeof(path), "/v1/sandboxes/%s", DD_SANDBOX);
	snprintf(body, sizeof(body),
		 "{\"worker\":\"%s\",\"generation\":%u,\"activation\":1,\"bridge_pid\":%d,"
		 "\"vmm_pid\":%d,\"substrate\":\"firecracker-host\",\"vmm_sockets\":[\"%s\"]}",
		 DD_WORKER, gen, (int)bridge, (int)getpid(), vmm);
	return dd_req("PUT", path, body);
}

static long long streams_int(const struct dd_resp *r, const char *member)
{
	return json_integer_value(json_object_get(json_object_get(r->json, "streams"), member));
}

/* guarantees: unix-stream-revocation */
Test(daemon_cut_crash, restart_finishes_the_cut_before_answering)
{
	const char *vmm = kh_path("vmm.sock");
	struct sh_holder h;
	struct dd_resp r;
	int lfd, acc[NSTREAMS], st;

	signal(SIGPIPE, SIG_IGN);
	lfd = sh_listen(vmm);
	sh_start(&h, vmm);
	r = install(7, h.pid, vmm);
	cr_assert_eq(r.status, 200, "install 7: %s", r.body);
	dd_resp_free(&r);
	for (int i = 0; i < NSTREAMS; i++) {
		cr_assert_eq(sh_cmd(&h, 'c'), 0, "bridge connect %d", i);
		acc[i] = accept(lfd, NULL, NULL);
		cr_assert(acc[i] >= 0, "accept");
	}
	cr_assert_eq(sh_cmd(&h, 'w'), NSTREAMS, "streams carry data at epoch 1");

	/* A daemon that dies between the epoch move and the cut. */
	cr_assert_eq(dd_stop(SIGTERM), 0);
	setenv(EG_FAULT_ENV, "epoch-moved", 1);
	dd_start();
	unsetenv(EG_FAULT_ENV);
	r = install(8, h.pid, vmm);
	cr_assert_lt(r.status, 0, "no answer from a daemon that died: %d %s", r.status,
		     r.body ? r.body : "");
	dd_resp_free(&r);
	st = dd_stop(SIGKILL);
	cr_assert_eq(st, EG_FAULT_EXIT, "died at the crash point: status %d", st);
	cr_assert_eq(sh_cmd(&h, 'w'), sh_lease_loaded() ? 0 : NSTREAMS,
		     "stale streams still send (the hole), unless the LSM lease refuses them");

	/* The restart cuts before it serves. */
	dd_start();
	cr_assert_eq(sh_cmd(&h, 'e'), NSTREAMS, "connecting ends: EOF and EPIPE");
	for (int i = 0; i < NSTREAMS; i++)
		cr_assert(sh_end_cut(acc[i]), "accepted end %d: EOF and EPIPE", i);
	cr_assert(dd_log_has("sandbox " DD_SANDBOX ": finished the stream cut of epoch 2 an "
			     "interrupted writer left: streams_cut=3 streams_unreachable=0"),
		  "the restart logs what it cut");

	r = install(8, h.pid, vmm);
	cr_assert_eq(r.status, 200, "retried install: %s", r.body);
	cr_assert_str_eq(dd_str(&r, "outcome"), "unchanged", "%s", r.body);
	cr_assert_eq(streams_int(&r, "unix_cut"), 0, "nothing left to cut: %s", r.body);
	cr_assert_eq(
	    json_integer_value(json_object_get(json_object_get(r.json, "record"), "epoch")), 2,
	    "%s", r.body);
	dd_resp_free(&r);
	for (int i = 0; i < NSTREAMS; i++)
		close(acc[i]);
	close(lfd);
}
