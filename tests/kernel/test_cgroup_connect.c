// SPDX-License-Identifier: Apache-2.0
/* The cgroup tier's verdicts on real Unix connects: bridge-only VMM
 * sockets, grants, epochs, process identity, unregistered paths, retire. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <criterion/criterion.h>
#include "core/ids.h"
#include "harness.h"

#define SANDBOX	 "5f0c2c1e-7a4b-4c1d-9e3f-000000000007"
#define WORKER_A "a0000000-0000-4000-8000-00000000000a"
#define WORKER_B "b0000000-0000-4000-8000-00000000000b"

TestSuite(cgroup, .init = kh_setup_shared, .fini = kh_teardown, .timeout = 60);

static void install(unsigned gen, unsigned act, pid_t bridge, pid_t vmm, const char *bridge_sock,
		    const char *vmm_sock, int want_exit)
{
	char g[16], a[16], b[16], v[16], out[2048];
	const char *args[32];
	int n = 0, rc;

	snprintf(g, sizeof(g), "%u", gen);
	snprintf(a, sizeof(a), "%u", act);
	snprintf(b, sizeof(b), "%d", (int)bridge);
	snprintf(v, sizeof(v), "%d", (int)vmm);
	args[n++] = "--vmm-pid";
	args[n++] = v;
	if (bridge_sock) {
		args[n++] = "--bridge-socket";
		args[n++] = bridge_sock;
	}
	if (vmm_sock) {
		args[n++] = "--vmm-socket";
		args[n++] = vmm_sock;
	}
	while (n < 6)
		args[n++] = NULL;
	rc = kh_cli(out, sizeof(out), "install", "--sandbox", SANDBOX, "--worker", WORKER_A,
		    "--generation", g, "--activation", a, "--bridge-pid", b, args[0], args[1],
		    args[2], args[3], args[4], args[5], NULL);
	cr_assert_eq(rc, want_exit, "install gen %u act %u: exit %d (want %d): %s", gen, act, rc,
		     want_exit, out);
}

static void sandbox_id(__u8 out[EG_ID_BYTES])
{
	cr_assert_eq(eg_uuid_parse(SANDBOX, out), 0);
}

/* guarantees: unix-vmm-socket-bridge-only, unix-socket-epoch-tag */
Test(cgroup, vmm_socket_admits_only_the_bridge)
{
	const char *vmm = kh_path("vmm.sock");
	struct kh_child bridge, other;
	struct eg_sk_tag tag;
	__u8 sb[EG_ID_BYTES];
	bool tagged = false;
	pid_t fc = kh_listener_start(vmm);

	kh_child_start(&bridge, true);
	kh_child_start(&other, true);
	install(7, 1, bridge.pid, fc, NULL, vmm, 0);

	cr_assert_eq(kh_child_connect(&bridge, vmm, &tag, &tagged), 0, "bridge connect");
	cr_assert_eq(kh_child_connect(&other, vmm, NULL, NULL), -EPERM, "other connect");
	cr_assert_eq(kh_counter(EG_K_ALLOW_BRIDGE), 1);
	cr_assert_eq(kh_counter(EG_K_DENY_NOT_BRIDGE), 1);
	cr_assert_eq(kh_events((__u32)other.pid, EG_K_DENY_NOT_BRIDGE), 1, "one denial event");

	/* The admitted socket carries the execution it was admitted to. */
	sandbox_id(sb);
	cr_assert(tagged, "bridge socket has an eg_sk_tags entry");
	cr_assert_eq(memcmp(tag.sandbox, sb, EG_ID_BYTES), 0);
	cr_assert_eq(tag.epoch, 1);
	cr_assert_eq(tag.generation, 7);
	cr_assert_eq(tag.activation, 1);
	cr_assert_eq(tag.role, EG_ROLE_VMM);
}

/* guarantees: unix-vmm-socket-bridge-only */
Test(cgroup, path_is_matched_however_the_address_is_spelled)
{
	const char *vmm = kh_path("vmm.sock");
	struct kh_child bridge, other;
	pid_t fc = kh_listener_start(vmm);

	kh_child_start(&bridge, true);
	kh_child_start(&other, true);
	install(7, 1, bridge.pid, fc, NULL, vmm, 0);
	/* Garbage after the NUL, and no NUL at all: the kernel resolves both
	 * to the registered path, so neither may pass as unregistered. */
	cr_assert_eq(kh_child_connect_mode(&other, vmm, 1), -EPERM, "garbage after NUL");
	cr_assert_eq(kh_child_connect_mode(&other, vmm, 2), -EPERM, "no NUL");
	cr_assert_eq(kh_child_connect_mode(&bridge, vmm, 1), 0, "bridge, garbage after NUL");
	cr_assert_eq(kh_child_connect_mode(&bridge, vmm, 2), 0, "bridge, no NUL");
	cr_assert_eq(kh_counter(EG_K_DENY_NOT_BRIDGE), 2);
	cr_assert_eq(kh_counter(EG_K_ALLOW_BRIDGE), 2);
	cr_assert_eq(kh_counter(EG_K_ALLOW_UNREGISTERED), 0);
}

/* guarantees: unix-unregistered-untouched */
Test(cgroup, unregistered_paths_pass_untouched)
{
	const char *vmm = kh_path("vmm-0123456789abcdef.sock");
	/* Same length, same first and last 8-byte chunks: collides in the
	 * pre-filter, differs in eg_endpoints. */
	const char *twin = kh_path("vmm-0123456789abcdeX.sock");
	const char *plain = kh_path("elsewhere.sock");
	struct kh_child bridge, other;
	bool tagged = true;
	pid_t fc = kh_listener_start(vmm);

	cr_assert_eq(strlen(vmm), strlen(twin));
	kh_listener_start(twin);
	kh_listener_start(plain);
	kh_child_start(&bridge, true);
	kh_child_start(&other, true);
	install(7, 1, bridge.pid, fc, NULL, vmm, 0);

	cr_assert_eq(kh_child_connect(&other, plain, NULL, &tagged), 0, "unregistered path");
	cr_assert(!tagged, "an unregistered connect is not tagged");
	cr_assert_eq(kh_child_connect(&other, twin, NULL, NULL), 0, "filter collision");
	cr_assert_eq(kh_child_connect(&other, vmm, NULL, NULL), -EPERM, "registered twin");
	cr_assert_eq(kh_counter(EG_K_ALLOW_UNREGISTERED), 2);
	cr_assert_eq(kh_counter(EG_K_DENY_NOT_BRIDGE), 1);
}

static void write_grant(pid_t pid, const struct eg_exec_record *rec, __u64 expiry_ns,
			__u64 start_delta)
{
	struct eg_grant g;

	memset(&g, 0, sizeof(g));
	g.key.proc = kh_proc_id(pid);
	g.key.proc.start_boottime_ns += start_delta;
	memcpy(g.key.sandbox, rec->sandbox, EG_ID_BYTES);
	g.generation = rec->generation;
	g.epoch = rec->epoch;
	g.expiry_ns = expiry_ns;
	g.scope = 1;
	cr_assert_eq(eg_grant_write(&kh.maps, &g), 0, "writing a grant");
}

/* `execgate admit` of pid with a token for SANDBOX on worker A (now_unix
 * 0: the real clock); asserts an allow. */
static void admit_allowed(pid_t pid, unsigned gen, unsigned act, long long now_unix)
{
	char token[512], out[1024], p[16];
	int rc;

	kh_cap(token, sizeof(token), SANDBOX, WORKER_A, gen, act, 120, now_unix);
	snprintf(p, sizeof(p), "%d", (int)pid);
	rc = kh_cli(out, sizeof(out), "admit", "--pid", p, token, NULL);
	cr_assert_eq(rc, 0, "admit of pid %d: exit %d: %s", (int)pid, rc, out);
	cr_assert_str_eq(out, "allow\n");
}

static struct eg_exec_record record(void)
{
	struct eg_exec_record r;
	__u8 sb[EG_ID_BYTES];

	sandbox_id(sb);
	cr_assert_eq(eg_record_read(&kh.maps, sb, &r), 0, "reading the record");
	return r;
}

/* guarantees: unix-bridge-socket-grant, epoch-revokes-grants, unix-socket-epoch-tag */
Test(cgroup, grants_allow_expire_and_die_with_the_epoch)
{
	const char *bsock = kh_path("bridge.sock"), *vmm = kh_path("vmm.sock");
	struct kh_child bridge, mgr, late;
	struct eg_sk_tag tag;
	bool tagged;
	pid_t fc = kh_listener_start(vmm);

	kh_child_start(&bridge, true);
	kh_child_start(&mgr, true);
	kh_child_start(&late, true);
	cr_assert_eq(kh_child_listen(&bridge, bsock), 0);
	install(7, 1, bridge.pid, fc, bsock, vmm, 0);
	kh_keys();

	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), -EPERM, "no grant yet");
	cr_assert_eq(kh_counter(EG_K_DENY_NO_GRANT), 1);

	admit_allowed(mgr.pid, 7, 1, 0);
	cr_assert_eq(kh_child_connect(&mgr, bsock, &tag, &tagged), 0, "granted connect");
	cr_assert_eq(kh_counter(EG_K_ALLOW_GRANT), 1);
	cr_assert(tagged);
	cr_assert_eq(tag.role, EG_ROLE_BRIDGE);
	cr_assert_eq(tag.epoch, 1);

	/* A token issued 130 s ago with a 120 s lifetime, 10 s past its
	 * expiry, inside the 15 s skew: its grant lives as long as the
	 * verifier accepts it (user/lib/admit.c), 4-5 s (wide enough for a
	 * loaded VM without KVM to admit and connect in between). */
	admit_allowed(late.pid, 7, 1, (long long)time(NULL) - 120 - 10);
	cr_assert_eq(kh_child_connect(&late, bsock, NULL, NULL), 0, "short grant, still live");
	sleep(6);
	cr_assert_eq(kh_child_connect(&late, bsock, NULL, NULL), -EPERM, "expired grant");
	cr_assert_eq(kh_counter(EG_K_DENY_GRANT_EXPIRED), 1);

	/* A replacement execution: mgr's grant (≈115 s left) dies now. */
	install(8, 1, bridge.pid, fc, bsock, vmm, 0);
	cr_assert_eq(record().epoch, 2);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), -EPERM, "grant of epoch 1");
	cr_assert_eq(kh_counter(EG_K_DENY_GRANT_EPOCH) + kh_counter(EG_K_DENY_NO_GRANT), 2,
		     "dead grant denied (by epoch, or already swept)");
	cr_assert_eq(kh_events((__u32)mgr.pid, EG_K_DENY_NO_GRANT) +
			 kh_events((__u32)mgr.pid, EG_K_DENY_GRANT_EPOCH),
		     2);
}

/* guarantees: epoch-revokes-grants */
Test(cgroup, epoch_check_denies_a_grant_that_was_not_swept)
{
	const char *bsock = kh_path("bridge.sock"), *vmm = kh_path("vmm.sock");
	struct kh_child bridge, mgr;
	struct eg_exec_record rec;
	pid_t fc = kh_listener_start(vmm);

	kh_child_start(&bridge, true);
	kh_child_start(&mgr, true);
	cr_assert_eq(kh_child_listen(&bridge, bsock), 0);
	install(7, 1, bridge.pid, fc, bsock, vmm, 0);
	rec = record();
	/* Written behind the loader's back at the old epoch, unexpired: only
	 * the kernel's epoch comparison stands between it and an allow. */
	install(8, 1, bridge.pid, fc, bsock, vmm, 0);
	write_grant(mgr.pid, &rec, eg_boottime_ns() + 100ULL * 1000000000ULL, 0);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), -EPERM);
	cr_assert_eq(kh_counter(EG_K_DENY_GRANT_EPOCH), 1);
	rec = record();
	write_grant(mgr.pid, &rec, eg_boottime_ns() + 100ULL * 1000000000ULL, 0);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), 0, "grant at the current epoch");
}

/* docs/operators.md "Consistency": a dead-grant sweep killed between its
 * tombstone write and its delete leaves the all-zero tombstone. It denies;
 * the next admit of the process overwrites it and the next install's sweep
 * deletes it. */
/* guarantees: epoch-revokes-grants, unix-fail-closed */
Test(cgroup, a_tombstone_left_by_a_killed_sweep_denies_until_replaced)
{
	const char *bsock = kh_path("bridge.sock"), *vmm = kh_path("vmm.sock");
	struct kh_child bridge, mgr;
	struct eg_exec_record rec;
	struct eg_grant g;
	pid_t fc = kh_listener_start(vmm);

	kh_child_start(&bridge, true);
	kh_child_start(&mgr, true);
	cr_assert_eq(kh_child_listen(&bridge, bsock), 0);
	install(7, 1, bridge.pid, fc, bsock, vmm, 0);
	kh_keys();
	rec = record();
	memset(&g, 0, sizeof(g));
	g.key.proc = kh_proc_id(mgr.pid);
	memcpy(g.key.sandbox, rec.sandbox, EG_ID_BYTES);
	cr_assert_eq(eg_grant_write(&kh.maps, &g), 0, "writing the tombstone");
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), -EPERM, "tombstone");
	cr_assert_eq(kh_counter(EG_K_DENY_GRANT_EPOCH), 1);

	/* The next admit of the process overwrites it in place. */
	admit_allowed(mgr.pid, 7, 1, 0);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), 0, "admitted again");

	/* Tombstone again; the next install's sweep deletes it. */
	cr_assert_eq(eg_grant_write(&kh.maps, &g), 0, "writing the tombstone");
	install(8, 1, bridge.pid, fc, bsock, vmm, 0);
	cr_assert_eq(eg_grant_read(&kh.maps, &g.key, &g), -ENOENT, "the sweep dropped it");
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), -EPERM);
	cr_assert_eq(kh_counter(EG_K_DENY_NO_GRANT), 1);
}

/* net.core.optmem_max, which socket-local storage is charged against, for
 * the sockets the child creates: in the child's own network namespace, or
 * where the kernel keeps it for the initial namespace only (before 6.9)
 * machine-wide, which only a VM may do. Returns the machine-wide value to
 * restore, or -1. */
static int child_optmem_or_vm(struct kh_child *c, int value)
{
	int rc = kh_child_optmem(c, value);

	if (rc == 0)
		return -1;
	cr_assert_eq(rc, -ENOENT, "setting optmem_max in the child's namespace: %s", strerror(-rc));
	return kh_vm_optmem_set(value);
}

/* An admitted connect whose socket cannot get its lease tag (the tag's
 * socket-local storage is charged against net.core.optmem_max; 0 leaves
 * no room) is denied: an untagged stream would escape the epoch lease and
 * revocation. With room again the same process is admitted and tagged. */
/* guarantees: unix-socket-epoch-tag */
Test(cgroup, an_admitted_connect_that_cannot_be_tagged_is_denied)
{
	const char *bsock = kh_path("bridge.sock"), *vmm = kh_path("vmm.sock");
	char host_before[32] = "", host_after[32] = "";
	struct kh_child bridge, mgr;
	struct eg_sk_tag tag;
	bool tagged = true;
	pid_t fc = kh_listener_start(vmm);
	int old;
	FILE *f;

	kh_child_start(&bridge, true);
	kh_child_start(&mgr, true);
	cr_assert_eq(kh_child_listen(&bridge, bsock), 0);
	install(7, 1, bridge.pid, fc, bsock, vmm, 0);
	kh_keys();
	admit_allowed(mgr.pid, 7, 1, 0);

	f = fopen("/proc/sys/net/core/optmem_max", "r");
	cr_assert(f && fgets(host_before, sizeof(host_before), f), "reading optmem_max");
	fclose(f);
	old = child_optmem_or_vm(&mgr, 0);
	cr_assert_eq(kh_child_connect(&mgr, bsock, &tag, &tagged), -EPERM,
		     "an admitted connect without room for its tag");
	cr_assert(!tagged);
	cr_assert_eq(kh_counter(EG_K_DENY_NO_TAG), 1);
	cr_assert_eq(kh_counter(EG_K_ALLOW_GRANT), 0, "the denial is not also counted an allow");
	cr_assert_eq(kh_events((__u32)mgr.pid, EG_K_DENY_NO_TAG), 1);

	if (old < 0)
		cr_assert_eq(kh_child_optmem(&mgr, 131072), 0);
	else
		kh_vm_optmem_set(old);
	f = fopen("/proc/sys/net/core/optmem_max", "r");
	cr_assert(f && fgets(host_after, sizeof(host_after), f), "reading optmem_max");
	fclose(f);
	cr_assert_str_eq(host_after, host_before, "the host's optmem_max is unchanged");
	cr_assert_eq(kh_child_connect(&mgr, bsock, &tag, &tagged), 0, "room again: admitted");
	cr_assert(tagged);
	cr_assert_eq(tag.epoch, 1);
	cr_assert_eq(kh_counter(EG_K_ALLOW_GRANT), 1);
}

/* guarantees: unix-vmm-socket-bridge-only, unix-bridge-socket-grant */
Test(cgroup, same_pid_with_another_start_time_is_denied)
{
	const char *bsock = kh_path("bridge.sock"), *vmm = kh_path("vmm.sock");
	struct kh_child bridge, mgr;
	struct eg_exec_record rec;
	pid_t fc = kh_listener_start(vmm);

	kh_child_start(&bridge, true);
	kh_child_start(&mgr, true);
	cr_assert_eq(kh_child_listen(&bridge, bsock), 0);
	install(7, 1, bridge.pid, fc, bsock, vmm, 0);

	/* What a reused PID looks like: same tgid and binary, other start. */
	rec = record();
	rec.bridge.start_boottime_ns += 1;
	cr_assert_eq(eg_record_write(&kh.maps, &rec), 0);
	cr_assert_eq(kh_child_connect(&bridge, vmm, NULL, NULL), -EPERM, "bridge, start + 1");
	cr_assert_eq(kh_counter(EG_K_DENY_NOT_BRIDGE), 1);
	rec.bridge.start_boottime_ns -= 1;
	cr_assert_eq(eg_record_write(&kh.maps, &rec), 0);
	cr_assert_eq(kh_child_connect(&bridge, vmm, NULL, NULL), 0, "bridge, exact identity");

	write_grant(mgr.pid, &rec, eg_boottime_ns() + 100ULL * 1000000000ULL, 1);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), -EPERM, "grant for start + 1");
	cr_assert_eq(kh_counter(EG_K_DENY_NO_GRANT), 1);
	write_grant(mgr.pid, &rec, eg_boottime_ns() + 100ULL * 1000000000ULL, 0);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), 0, "grant for the exact identity");
}

/* guarantees: unix-vmm-socket-bridge-only */
Test(cgroup, exec_into_another_binary_is_denied)
{
	const char *vmm = kh_path("vmm.sock");
	struct kh_child bridge;
	pid_t fc = kh_listener_start(vmm), pid;

	kh_child_start(&bridge, true);
	install(7, 1, bridge.pid, fc, NULL, vmm, 0);
	cr_assert_eq(kh_child_connect(&bridge, vmm, NULL, NULL), 0, "bridge before exec");
	pid = bridge.pid;
	/* Same pid, same start time, python3 instead of the bridge binary. */
	cr_assert_eq(kh_child_exec_connect(&bridge, vmm), -EPERM, "after exec");
	cr_assert_eq(kh_counter(EG_K_DENY_NOT_BRIDGE), 1);
	cr_assert_eq(kh_events((__u32)pid, EG_K_DENY_NOT_BRIDGE), 1);
}

/* guarantees: unix-fail-closed */
Test(cgroup, retired_and_missing_records_fail_closed)
{
	const char *bsock = kh_path("bridge.sock"), *vmm = kh_path("vmm.sock");
	struct kh_child bridge, mgr, bridge8;
	char out[1024];
	__u8 sb[EG_ID_BYTES];
	pid_t fc = kh_listener_start(vmm);
	struct eg_exec_record rec;
	int rc;

	kh_child_start(&bridge, true);
	kh_child_start(&mgr, true);
	kh_child_start(&bridge8, true);
	cr_assert_eq(kh_child_listen(&bridge, bsock), 0);
	install(7, 1, bridge.pid, fc, bsock, vmm, 0);
	rec = record();
	write_grant(mgr.pid, &rec, eg_boottime_ns() + 100ULL * 1000000000ULL, 0);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), 0);

	rc = kh_cli(out, sizeof(out), "retire", "--sandbox", SANDBOX, NULL);
	cr_assert_eq(rc, 0, "retire: %s", out);
	cr_assert_eq(kh_child_connect(&bridge, vmm, NULL, NULL), -EPERM, "bridge after retire");
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), -EPERM, "grant after retire");
	cr_assert_eq(kh_counter(EG_K_DENY_RETIRED), 2);

	/* Same generation and attempt again: refused as stale (exit 6). */
	install(7, 1, bridge.pid, fc, bsock, vmm, 6);
	/* A later install claims the endpoints. */
	install(8, 1, bridge8.pid, fc, bsock, vmm, 0);
	cr_assert_eq(kh_child_connect(&bridge8, vmm, NULL, NULL), 0, "new bridge");
	cr_assert_eq(kh_child_connect(&bridge, vmm, NULL, NULL), -EPERM, "old bridge");

	/* No record at all behind a registered endpoint: deny, not pass. A
	 * delete behind the loader's back moves no admission-cache word, so
	 * bridge8's cached allow (abi.h, "The admission cache") lives out its
	 * lifetime first (admit_cache::a_map_edited_behind_the_loader_...). */
	sandbox_id(sb);
	cr_assert_eq(bpf_map_delete_elem(kh.maps.fd[EG_MAP_RECORDS], sb), 0);
	usleep(EG_ADMIT_TTL_NS / 1000 + 100000);
	cr_assert_eq(kh_child_connect(&bridge8, vmm, NULL, NULL), -EPERM, "record deleted");
	cr_assert_eq(kh_counter(EG_K_DENY_NO_RECORD), 1);
	rc = kh_cli(out, sizeof(out), "retire", "--sandbox", SANDBOX, NULL);
	cr_assert_eq(rc, 7, "retire without a record: exit %d: %s", rc, out);
}

/* guarantees: unix-bridge-socket-grant */
Test(cgroup, activation_update_keeps_the_epoch_stale_updates_are_refused)
{
	const char *bsock = kh_path("bridge.sock"), *vmm = kh_path("vmm.sock");
	struct kh_child bridge, mgr;
	char token[512], out[1024], pid[16];
	pid_t fc = kh_listener_start(vmm);
	int rc;

	kh_child_start(&bridge, true);
	kh_child_start(&mgr, true);
	cr_assert_eq(kh_child_listen(&bridge, bsock), 0);
	install(7, 1, bridge.pid, fc, bsock, vmm, 0);
	install(7, 1, bridge.pid, fc, bsock, vmm, 0); /* identical: no-op, exit 0 */
	cr_assert_eq(record().epoch, 1);
	kh_keys();
	kh_cap(token, sizeof(token), SANDBOX, WORKER_A, 7, 1, 120, 0);
	snprintf(pid, sizeof(pid), "%d", (int)mgr.pid);
	rc = kh_cli(out, sizeof(out), "admit", "--pid", pid, token, NULL);
	cr_assert_eq(rc, 0, "admit: %s", out);

	install(7, 2, bridge.pid, fc, bsock, vmm, 0);
	cr_assert_eq(record().epoch, 1, "a new attempt keeps the epoch");
	cr_assert_eq(record().activation, 2);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), 0, "grant of attempt 1 survives");
	/* New admissions need the new attempt. */
	rc = kh_cli(out, sizeof(out), "admit", "--pid", pid, token, NULL);
	cr_assert_eq(rc, 3, "admit with attempt 1: exit %d: %s", rc, out);
	cr_assert_str_eq(out, "refresh-route: activation-mismatch\n");
	/* Older attempt, older generation: stale, nothing changes. */
	install(7, 1, bridge.pid, fc, bsock, vmm, 6);
	install(6, 9, bridge.pid, fc, bsock, vmm, 6);
	cr_assert_eq(record().activation, 2);
	cr_assert_eq(record().generation, 7);
}
