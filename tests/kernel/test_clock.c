// SPDX-License-Identifier: Apache-2.0
/* The grant clock (abi.h, struct eg_clock_word; user/loader/tiers/clock.c): load
 * attaches and pins the program that keeps eg_clock's boot offset and runs
 * it once; the connect hook decides expiry by that word; the program puts
 * the kernel's true offset back whatever the word held; a keeper that
 * cannot be attached leaves the word cleared; status says which clock
 * decides, and warns when the word says kept with no keeper. A real
 * suspend cannot be tested here (a TCG guest does not wake from one); the
 * test sets the word as the program would after a resume from a long
 * sleep, and runs the program as the tracepoint would. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <criterion/criterion.h>
#include <jansson.h>
#include "loader/tiers/clock.h"
#include "harness.h"

#define SANDBOX	 "5f0c2c1e-7a4b-4c1d-9e3f-0000000000c1"
#define WORKER_A "a0000000-0000-4000-8000-00000000000a"

TestSuite(clock, .init = kh_setup_shared, .fini = kh_teardown, .timeout = 60);

static __u64 now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* CLOCK_BOOTTIME - CLOCK_MONOTONIC lies in [*lo, *hi]: CLOCK_BOOTTIME read
 * between two CLOCK_MONOTONIC reads, the tightest pair of a few. Signed: on
 * a host that never slept the offset is about 0, and either bound may be
 * below it. */
static void boot_offset(long long *lo, long long *hi)
{
	long long span = -1;

	for (int i = 0; i < 50; i++) {
		__u64 m0 = now_ns(CLOCK_MONOTONIC), b = now_ns(CLOCK_BOOTTIME);
		__u64 m1 = now_ns(CLOCK_MONOTONIC);

		if (span < 0 || (long long)(m1 - m0) < span) {
			span = (long long)(m1 - m0);
			*lo = (long long)(b - m1);
			*hi = (long long)(b - m0);
		}
	}
}

static __u64 word(void)
{
	__u64 w = 0;

	cr_assert_eq(eg_clock_word_read(&kh.maps, &w), 0, "reading eg_clock");
	return w;
}

static void set_word(__u64 w)
{
	cr_assert_eq(eg_clock_word_write(&kh.maps, w), 0, "writing eg_clock");
}

/* The word holds the kernel's offset, give or take the reads' spacing
 * (1 ms of slack: a TCG guest's reads are microseconds apart). */
static void assert_true_offset(const char *when)
{
	__u64 w = word();
	long long got = (long long)(w & ~EG_CLOCK_KEPT), lo = 0, hi = 0;

	cr_assert(w & EG_CLOCK_KEPT, "%s: eg_clock not kept (word %#llx)", when,
		  (unsigned long long)w);
	boot_offset(&lo, &hi);
	cr_assert(got >= lo - 1000000 && got <= hi + 1000000,
		  "%s: eg_clock offset %lld ns, the kernel's between %lld and %lld ns", when, got,
		  lo, hi);
}

static void keep(void)
{
	char err[1024] = "";

	cr_assert_eq(eg_clock_keep(kh.pin_dir, err, sizeof(err)), 0, "eg_clock_keep: %s", err);
}

/* guarantees: none */
Test(clock, load_pins_the_keeper_and_writes_the_offset)
{
	struct eg_clock_state st;
	char pin[EG_PIN_PATH_MAX], tp[64] = "";
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	int fd;

	assert_true_offset("after load");
	cr_assert_eq(eg_link_pin_path(pin, sizeof(pin), kh.pin_dir, EG_PIN_CLOCK_RESUME), 0);
	fd = bpf_obj_get(pin);
	cr_assert_geq(fd, 0, "%s: %s", pin, strerror(errno));
	memset(&info, 0, sizeof(info));
	info.raw_tracepoint.tp_name = (__u64)(unsigned long)tp;
	info.raw_tracepoint.tp_name_len = sizeof(tp);
	cr_assert_eq(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
	close(fd);
	cr_assert_eq(info.type, BPF_LINK_TYPE_RAW_TRACEPOINT, "link type %u", info.type);
	cr_assert_str_eq(tp, "suspend_resume");
	eg_clock_state_read(&kh.maps, kh.pin_dir, &st);
	cr_assert(st.read && st.kept && st.attached, "state: read %d kept %d attached %d: %s",
		  st.read, st.kept, st.attached, st.why);

	/* A second load adopts the pinned keeper: the same link. */
	keep();
	fd = bpf_obj_get(pin);
	cr_assert_geq(fd, 0);
	{
		struct bpf_link_info again;

		len = sizeof(again);
		memset(&again, 0, sizeof(again));
		cr_assert_eq(bpf_obj_get_info_by_fd(fd, &again, &len), 0);
		cr_assert_eq(again.id, info.id, "load replaced a keeper it could adopt");
	}
	close(fd);
	assert_true_offset("after a second keep");
}

static void install(pid_t bridge, pid_t vmm, const char *bsock, const char *vsock)
{
	char b[16], v[16], out[2048];
	int rc;

	snprintf(b, sizeof(b), "%d", (int)bridge);
	snprintf(v, sizeof(v), "%d", (int)vmm);
	rc = kh_cli(out, sizeof(out), "install", "--sandbox", SANDBOX, "--worker", WORKER_A,
		    "--generation", "3", "--activation", "1", "--bridge-pid", b, "--vmm-pid", v,
		    "--bridge-socket", bsock, "--vmm-socket", vsock, NULL);
	cr_assert_eq(rc, 0, "install: exit %d: %s", rc, out);
}

static void admit(pid_t pid)
{
	char token[512], out[1024], p[16];
	int rc;

	kh_cap(token, sizeof(token), SANDBOX, WORKER_A, 3, 1, 120, 0);
	snprintf(p, sizeof(p), "%d", (int)pid);
	rc = kh_cli(out, sizeof(out), "admit", "--pid", p, token, NULL);
	cr_assert_eq(rc, 0, "admit of pid %d: exit %d: %s", (int)pid, rc, out);
	cr_assert_str_eq(out, "allow\n");
}

/* guarantees: unix-bridge-socket-grant */
Test(clock, the_hook_decides_expiry_by_the_kept_offset)
{
	const char *bsock = kh_path("bridge.sock"), *vsock = kh_path("vmm.sock");
	struct kh_child bridge, mgr;
	pid_t fc = kh_listener_start(vsock);
	__u64 w;

	kh_child_start(&bridge, true);
	kh_child_start(&mgr, true);
	cr_assert_eq(kh_child_listen(&bridge, bsock), 0);
	install(bridge.pid, fc, bsock, vsock);
	kh_keys();
	admit(mgr.pid); /* a grant with about 120 s to live */
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), 0, "live grant");

	/* As the keeper leaves the word after a resume from 200 s asleep:
	 * CLOCK_BOOTTIME moved on by 200 s, CLOCK_MONOTONIC did not. The
	 * kernel's clocks did not move here, so only a hook that reads the
	 * word denies. */
	w = word();
	set_word(w + 200ULL * 1000000000ULL);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), -EPERM,
		     "a grant 200 s past its expiry by the kept clock");
	cr_assert_eq(kh_counter(EG_K_DENY_GRANT_EXPIRED), 1);
	cr_assert_eq(kh_events((__u32)mgr.pid, EG_K_DENY_GRANT_EXPIRED), 1);

	/* Nothing keeps it: the hook reads CLOCK_BOOTTIME, the grant lives. */
	set_word(0);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), 0, "CLOCK_BOOTTIME itself");

	/* The keeper, run as the tracepoint runs it, writes the kernel's true
	 * offset over whatever the word held. */
	set_word(EG_CLOCK_KEPT | (3600ULL * 1000000000ULL));
	keep();
	assert_true_offset("after the keeper ran");
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), 0, "after the keeper ran");
	cr_assert_eq(kh_counter(EG_K_DENY_GRANT_EXPIRED), 1, "no other expiry denial");
	cr_assert_eq(kh_counter(EG_K_ALLOW_GRANT), 3);
}

/* guarantees: none */
Test(clock, a_lost_keeper_is_reported_and_a_failed_keep_clears_the_word)
{
	char pin[EG_PIN_PATH_MAX], err[1024] = "", out[65536];
	struct eg_clock_state st;
	json_error_t jerr;
	json_t *doc, *gc;
	int rc;

	cr_assert_eq(eg_link_pin_path(pin, sizeof(pin), kh.pin_dir, EG_PIN_CLOCK_RESUME), 0);
	cr_assert_eq(unlink(pin), 0, "%s: %s", pin, strerror(errno));
	/* The pin held the only reference: the link is gone, the word still
	 * says kept. Status warns; nothing else may notice until a resume. */
	eg_clock_state_read(&kh.maps, kh.pin_dir, &st);
	cr_assert(st.read && st.kept && !st.attached, "kept %d attached %d", st.kept, st.attached);
	rc = kh_cli(out, sizeof(out), "status", NULL);
	cr_assert_eq(rc, 0, "status: exit %d: %s", rc, out);
	cr_assert(strstr(out, "warning: grant-clock-unkept: "), "no warning in: %s", out);
	rc = kh_cli(out, sizeof(out), "status", "--json", NULL);
	cr_assert_eq(rc, 0, "status --json: exit %d: %s", rc, out);
	doc = json_loads(out, 0, &jerr);
	cr_assert_not_null(doc, "status --json: %s", jerr.text);
	gc = json_object_get(doc, "grant_clock");
	cr_assert(json_is_true(json_object_get(gc, "kept")));
	cr_assert(json_is_false(json_object_get(gc, "kept_by_link")));
	cr_assert(json_is_string(json_object_get(gc, "why")));
	json_decref(doc);
	/* Something the loader cannot replace where the link goes: a
	 * directory (bpffs has them). */
	cr_assert_eq(mkdir(pin, 0700), 0, "mkdir %s: %s", pin, strerror(errno));
	set_word(EG_CLOCK_KEPT | 12345);
	rc = eg_clock_keep(kh.pin_dir, err, sizeof(err));
	cr_assert_neq(rc, 0, "keep succeeded without a pinned link");
	cr_assert(strstr(err, "grant clock: ") && strstr(err, pin),
		  "error names the clock and the pin: %s", err);
	cr_assert_eq(word(), 0, "a failed keep left the word set");

	eg_clock_state_read(&kh.maps, kh.pin_dir, &st);
	cr_assert(st.read && !st.kept && !st.attached);
	rc = kh_cli(out, sizeof(out), "status", "--json", NULL);
	cr_assert_eq(rc, 0, "status: exit %d: %s", rc, out);
	doc = json_loads(out, 0, &jerr);
	cr_assert_not_null(doc, "status --json: %s", jerr.text);
	gc = json_object_get(doc, "grant_clock");
	cr_assert(json_is_object(gc), "status has no grant_clock");
	cr_assert_str_eq(json_string_value(json_object_get(gc, "source")), "boot");
	cr_assert(json_is_null(json_object_get(gc, "boot_offset_ns")));
	json_decref(doc);

	cr_assert_eq(rmdir(pin), 0);
	keep();
	assert_true_offset("after the pin is free again");
	rc = kh_cli(out, sizeof(out), "status", "--json", NULL);
	cr_assert_eq(rc, 0, "status: exit %d: %s", rc, out);
	doc = json_loads(out, 0, &jerr);
	cr_assert_not_null(doc, "status --json: %s", jerr.text);
	gc = json_object_get(doc, "grant_clock");
	cr_assert_str_eq(json_string_value(json_object_get(gc, "source")),
			 "coarse monotonic + boot offset");
	cr_assert(json_is_integer(json_object_get(gc, "boot_offset_ns")));
	cr_assert(json_is_true(json_object_get(gc, "kept")));
	json_decref(doc);
}
