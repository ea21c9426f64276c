// SPDX-License-Identifier: Apache-2.0
/* The loader CLI against the kernel: the worked example, a killed loader,
 * no-gap re-loads, bpftool's view of the maps, status. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <criterion/criterion.h>
#include "core/ids.h"
#include "harness.h"

#define S	 "5f0c2c1e-7a4b-4c1d-9e3f-0000000000c1"
#define WORKER_A "a0000000-0000-4000-8000-00000000000a"
#define WORKER_B "b0000000-0000-4000-8000-00000000000b"

TestSuite(cgroup_cli, .init = kh_setup_shared, .fini = kh_teardown, .timeout = 90);

static void install(const char *gen, pid_t bridge, pid_t vmm, const char *bsock, const char *vsock)
{
	char b[16], v[16], out[2048];
	int rc;

	snprintf(b, sizeof(b), "%d", (int)bridge);
	snprintf(v, sizeof(v), "%d", (int)vmm);
	rc = kh_cli(out, sizeof(out), "install", "--sandbox", S, "--worker", WORKER_A,
		    "--generation", gen, "--activation", "1", "--bridge-pid", b, "--vmm-pid", v,
		    "--bridge-socket", bsock, "--vmm-socket", vsock, NULL);
	cr_assert_eq(rc, 0, "install generation %s: exit %d: %s", gen, rc, out);
}

static int admit(pid_t pid, const char *token, char *out, size_t size)
{
	char p[16];

	snprintf(p, sizeof(p), "%d", (int)pid);
	return kh_cli(out, size, "admit", "--pid", p, token, NULL);
}

/* docs/design.md §1: S runs as execution 7 on worker A, then is restored as 8. */
/* guarantees: unix-vmm-socket-bridge-only, unix-bridge-socket-grant, epoch-revokes-grants */
Test(cgroup_cli, worked_example)
{
	const char *bsock = kh_path("bridge.sock"), *vsock = kh_path("fc-vsock.sock");
	struct kh_child bridge7, bridge8, mgr;
	char cap7[512], cap8[512], out[1024];
	pid_t fc7 = kh_listener_start(vsock);
	int rc;

	kh_keys();
	kh_child_start(&bridge7, true);
	kh_child_start(&bridge8, true);
	kh_child_start(&mgr, true);
	cr_assert_eq(kh_child_listen(&bridge7, bsock), 0);
	install("7", bridge7.pid, fc7, bsock, vsock);

	/* Execution 7's bridge reaches its VMM; nobody else does. */
	cr_assert_eq(kh_child_connect(&bridge7, vsock, NULL, NULL), 0);
	cr_assert_eq(kh_child_connect(&mgr, vsock, NULL, NULL), -EPERM);

	/* A capability selecting execution 8 (on worker B) reaches A. */
	kh_cap(cap8, sizeof(cap8), S, WORKER_B, 8, 1, 120, 0);
	rc = admit(mgr.pid, cap8, out, sizeof(out));
	cr_assert_eq(rc, 3, "admit cap for 8 on A: exit %d: %s", rc, out);
	cr_assert_eq(strncmp(out, "refresh-route: ", 15), 0, "%s", out);
	/* Nothing was granted: the kernel refuses the connect. */
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), -EPERM);
	cr_assert_eq(kh_counter(EG_K_DENY_NO_GRANT), 1);

	/* A capability for 7 is admitted while 7 is current. */
	kh_cap(cap7, sizeof(cap7), S, WORKER_A, 7, 1, 120, 0);
	rc = admit(mgr.pid, cap7, out, sizeof(out));
	cr_assert_eq(rc, 0, "admit cap for 7: exit %d: %s", rc, out);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), 0);

	/* 8 is installed here: 7's grants and 7's bridge are refused at once. */
	cr_assert_eq(kh_child_listen(&bridge8, kh_path("bridge8.sock")), 0);
	install("8", bridge8.pid, fc7, bsock, vsock);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), -EPERM, "7's grant");
	cr_assert_eq(kh_child_connect(&bridge7, vsock, NULL, NULL), -EPERM, "7's bridge");
	cr_assert_eq(kh_child_connect(&bridge8, vsock, NULL, NULL), 0, "8's bridge");
	cr_assert_eq(kh_counter(EG_K_DENY_NOT_BRIDGE), 2);
	/* And a capability for 7 now asks for a route refresh. */
	rc = admit(mgr.pid, cap7, out, sizeof(out));
	cr_assert_eq(rc, 3, "admit cap for 7 after 8: exit %d: %s", rc, out);
	cr_assert_str_eq(out, "refresh-route: generation-retired\n");
	/* A delayed install of 7 cannot roll the worker back. */
	{
		char b[16], v[16];

		snprintf(b, sizeof(b), "%d", (int)bridge7.pid);
		snprintf(v, sizeof(v), "%d", (int)fc7);
		rc = kh_cli(out, sizeof(out), "install", "--sandbox", S, "--worker", WORKER_A,
			    "--generation", "7", "--activation", "1", "--bridge-pid", b,
			    "--vmm-pid", v, NULL);
		cr_assert_eq(rc, 6, "stale install: exit %d: %s", rc, out);
	}
}

static bool field(const char *json, const char *needle)
{
	return strstr(json, needle) != NULL;
}

static void status_json(char *out, size_t size)
{
	int rc = kh_cli(out, size, "status", "--json", NULL);

	cr_assert_eq(rc, 0, "status: %s", out);
}

/* "link_id":N of the connect_unix program in status --json. */
static unsigned link_id(const char *json, unsigned *prog_id)
{
	const char *p = strstr(json, "\"hook\":\"connect_unix\"");
	unsigned link = 0;

	cr_assert_not_null(p, "status lists connect_unix: %s", json);
	cr_assert_eq(
	    sscanf(strstr(p, "\"prog_id\":"), "\"prog_id\":%u,\"link_id\":%u", prog_id, &link), 2);
	return link;
}

/* Connect loops for 1.5 s on vsock, a stranger's (*ro) and the registered
 * bridge's (*rb: the second loop child becomes the record's bridge), while
 * `execgate load` runs three times (with --mode mode, unless NULL). */
static void loops_across_reloads(const char *vsock, const char *mode, struct kh_loop_result *ro,
				 struct kh_loop_result *rb)
{
	struct kh_loop other, brg;
	struct eg_exec_record rec;
	__u8 sb[EG_ID_BYTES];
	char out[4096];
	int rc;

	kh_loop_start(&other, vsock, 1.5, NULL, NULL);
	kh_loop_start(&brg, vsock, 1.5, NULL, NULL);
	cr_assert_eq(eg_uuid_parse(S, sb), 0);
	cr_assert_eq(eg_record_read(&kh.maps, sb, &rec), 0);
	rec.bridge = kh_proc_id(brg.pid);
	cr_assert_eq(eg_record_write(&kh.maps, &rec), 0);
	kh_loop_go(&other);
	kh_loop_go(&brg);
	for (int i = 0; i < 3; i++) {
		if (mode)
			rc = kh_cli(out, sizeof(out), "load", "--cgroup", kh.cgroup, "--mode", mode,
				    NULL);
		else
			rc = kh_cli(out, sizeof(out), "load", "--cgroup", kh.cgroup, NULL);
		cr_assert_eq(rc, 0, "re-load %d: %s", i, out);
	}
	*ro = kh_loop_wait(&other);
	*rb = kh_loop_wait(&brg);
}

/* guarantees: unix-survives-loader-exit */
Test(cgroup_cli, killed_loader_and_reload_leave_no_gap)
{
	const char *bsock = kh_path("bridge.sock"), *vsock = kh_path("fc.sock");
	struct kh_child bridge;
	struct kh_loop_result ro, rb;
	static char json[16384];
	unsigned link1, link2, prog1, prog2;
	pid_t fc = kh_listener_start(vsock), loader;

	kh_child_start(&bridge, true);
	cr_assert_eq(kh_child_listen(&bridge, bsock), 0);
	install("7", bridge.pid, fc, bsock, vsock);
	status_json(json, sizeof(json));
	link1 = link_id(json, &prog1);

	/* A loader process holding every map killed with SIGKILL. */
	loader = fork();
	cr_assert_geq(loader, 0);
	if (loader == 0) {
		execl(getenv("EXECGATE_BIN") ? getenv("EXECGATE_BIN") : "build/execgate",
		      "execgate", "events", "--pin-dir", kh.pin_dir, (char *)NULL);
		_exit(127);
	}
	usleep(200000);
	cr_assert_eq(kill(loader, SIGKILL), 0);
	cr_assert_eq(waitpid(loader, NULL, 0), loader);

	/* Connect loops across a re-load: the stranger must never get in and
	 * the bridge must never be turned away. */
	loops_across_reloads(vsock, NULL, &ro, &rb);
	cr_assert_gt(ro.eperm, 0, "the stranger tried");
	cr_assert_eq(ro.ok, 0, "the stranger got in %lu times", ro.ok);
	cr_assert_eq(ro.other, 0, "stranger: errno %d", ro.other_errno);
	cr_assert_gt(rb.ok, 0, "the bridge connected");
	cr_assert_eq(rb.eperm + rb.other, 0, "the bridge was refused %lu times (errno %d)",
		     rb.eperm + rb.other, rb.other_errno);

	/* Same link, new program: adopted, swapped in place. */
	status_json(json, sizeof(json));
	link2 = link_id(json, &prog2);
	cr_assert_eq(link1, link2, "the pinned link was adopted");
	cr_assert_neq(prog1, prog2, "the program was replaced in place");
	cr_assert(field(json, "\"attach_type\":49,\"attach_type_name\":\"cgroup_unix_connect\""),
		  "%s", json);
}

/* The audit twin of the reload case above: under audit, re-loads with
 * --mode audit never leave a moment in which the stranger is refused (or
 * the bridge is), and every connect enforce would have refused is counted
 * as a would-deny. */
/* guarantees: none */
Test(cgroup_cli, reload_in_audit_never_refuses_and_counts_every_would_deny)
{
	const char *bsock = kh_path("bridge.sock"), *vsock = kh_path("fc.sock");
	struct kh_child bridge;
	struct kh_loop_result ro, rb;
	__u64 before;
	char out[4096];
	pid_t fc = kh_listener_start(vsock);
	int rc;

	kh_child_start(&bridge, true);
	cr_assert_eq(kh_child_listen(&bridge, bsock), 0);
	install("7", bridge.pid, fc, bsock, vsock);
	rc = kh_cli(out, sizeof(out), "mode", "audit", NULL);
	cr_assert_eq(rc, 0, "mode audit: %s", out);
	before = kh_would_deny(EG_HOOK_CONNECT_UNIX, EG_K_DENY_NOT_BRIDGE);

	loops_across_reloads(vsock, "audit", &ro, &rb);
	cr_assert_gt(ro.ok, 0, "the stranger connected");
	cr_assert_eq(ro.eperm + ro.other, 0, "the stranger was refused %lu times (errno %d)",
		     ro.eperm + ro.other, ro.other_errno);
	cr_assert_gt(rb.ok, 0, "the bridge connected");
	cr_assert_eq(rb.eperm + rb.other, 0, "the bridge was refused %lu times (errno %d)",
		     rb.eperm + rb.other, rb.other_errno);
	/* Each of the stranger's connects passed the path hook as a would-deny
	 * (on the LSM tier a second hook counts its own as well). */
	cr_assert_geq(
	    kh_would_deny(EG_HOOK_CONNECT_UNIX, EG_K_DENY_NOT_BRIDGE) - before, ro.ok,
	    "would-deny %llu for %lu connects",
	    (unsigned long long)(kh_would_deny(EG_HOOK_CONNECT_UNIX, EG_K_DENY_NOT_BRIDGE) -
				 before),
	    ro.ok);
	rc = kh_cli(out, sizeof(out), "status", "--require-enforce", NULL);
	cr_assert_neq(rc, 0, "status --require-enforce under audit: %s", out);
}

/* guarantees: none */
Test(cgroup_cli, bpftool_dump_shows_named_fields)
{
	const char *vsock = kh_path("fc.sock");
	struct kh_child bridge;
	char cmd[1024], out[4096], expect[256];
	struct eg_proc_id id;
	pid_t fc = kh_listener_start(vsock);
	int rc;

	kh_child_start(&bridge, true);
	install("7", bridge.pid, fc, kh_path("bridge.sock"), vsock);
	id = kh_proc_id(bridge.pid);
	snprintf(
	    cmd, sizeof(cmd),
	    "bpftool -j map dump pinned %s/eg_records | jq -e '.[0].formatted.value | "
	    ".generation == 7 and .epoch == 1 and .activation == 1 and .state == 1 and "
	    ".bridge.tgid == %u and .bridge.start_boottime_ns == %llu and .bridge.exe_ino == %llu "
	    "and .bridge.exe_dev == %u and .vmm.tgid == %d and (.sandbox | length) == 16'",
	    kh.pin_dir, id.tgid, (unsigned long long)id.start_boottime_ns,
	    (unsigned long long)id.exe_ino, id.exe_dev, (int)fc);
	rc = kh_run(out, sizeof(out), "sh", "-c", cmd, NULL);
	cr_assert_eq(rc, 0, "%s\n-> %s", cmd, out);
	cr_assert_str_eq(out, "true\n");

	snprintf(cmd, sizeof(cmd), "bpftool -j map dump pinned %s/eg_endpoints", kh.pin_dir);
	rc = kh_run(out, sizeof(out), "sh", "-c", cmd, NULL);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert(field(out, "\"role\":2"), "VMM endpoint listed: %s", out);
	cr_assert(field(out, "\"role\":1"), "bridge endpoint listed: %s", out);
	snprintf(expect, sizeof(expect), "\"path\":\"%s\"", vsock);
	cr_assert(field(out, expect), "path shown as a string: %s", out);
}

/* guarantees: none */
Test(cgroup_cli, status_reports_guarantees_and_counters)
{
	static char json[16384];

	status_json(json, sizeof(json));
	cr_assert(field(json, "\"name\":\"cgroup\",\"offered\":true,\"loaded\":true"), "%s", json);
	cr_assert(field(json, "{\"name\":\"unix-vmm-socket-bridge-only\",\"held\":true"), "%s",
		  json);
	cr_assert(field(json, "{\"name\":\"unix-survives-loader-exit\",\"held\":true"), "%s", json);
	cr_assert(field(json, "\"counters\":{\"allow-unregistered\":"), "%s", json);
	cr_assert(field(json, "\"eg_records\":{\"entries\":0,\"max_entries\":16384}"), "%s", json);

	/* After unload nothing is held, and status says why. */
	{
		char out[1024];

		cr_assert_eq(kh_cli(out, sizeof(out), "unload", NULL), 0, "%s", out);
		/* Nothing loaded: the report still, and exit 7. */
		cr_assert_eq(kh_cli(json, sizeof(json), "status", "--json", NULL), 7, "%s", json);
		cr_assert(field(json, "\"loaded\":false"), "%s", json);
		cr_assert(field(json, "{\"name\":\"unix-vmm-socket-bridge-only\",\"held\":false"),
			  "%s", json);
		kh.maps_open = false;
		eg_maps_close(&kh.maps);
	}
}

/* guarantees: none */
Test(cgroup_cli, usage_and_lookup_errors_have_their_exit_codes)
{
	char out[1024];

	cr_assert_eq(kh_cli(out, sizeof(out), "install", "--sandbox", "nope", NULL), 2, "%s", out);
	cr_assert_eq(kh_cli(out, sizeof(out), "retire", "--sandbox", S, NULL), 7, "%s", out);
	cr_assert_eq(kh_cli(out, sizeof(out), "revoke", "--pid", "1", "--sandbox", S, NULL), 7,
		     "%s", out);
	cr_assert_eq(kh_cli(out, sizeof(out), "keys", "remove", "0011223344556677", NULL), 7, "%s",
		     out);
	cr_assert_eq(kh_cli(out, sizeof(out), "load", "--require", "bogus", NULL), 2, "%s", out);
	/* A bridge that does not exist: an error naming it, nothing written. */
	cr_assert_eq(kh_cli(out, sizeof(out), "install", "--sandbox", S, "--worker", WORKER_A,
			    "--generation", "1", "--activation", "1", "--bridge-pid", "999999999",
			    NULL),
		     1, "%s", out);
	cr_assert_str_eq(out, "execgate: install: pid 999999999: no such process\n");
	cr_assert_eq(kh_cli(out, sizeof(out), "retire", "--sandbox", S, NULL), 7, "%s", out);
}

/* Puts fd (or nothing, for -1) at eg_grants' pin path. */
static void grants_pin(int fd)
{
	char pin[300];

	snprintf(pin, sizeof(pin), "%s/eg_grants", kh.pin_dir);
	cr_assert(unlink(pin) == 0 || errno == ENOENT, "%s: %s", pin, strerror(errno));
	if (fd >= 0)
		cr_assert_eq(bpf_obj_pin(fd, pin), 0, "%s: %s", pin, strerror(errno));
}

/* status --json's state-unread warning for part, whose read failed with
 * reason (strerror). */
static void assert_unread_warned(const char *json, const char *part, const char *reason)
{
	char want[512];

	snprintf(want, sizeof(want),
		 "{\"code\":\"state-unread\",\"message\":\"%s: not read: %s; the report shows "
		 "nothing for it\",\"part\":\"%s\"}",
		 part, reason, part);
	cr_assert(field(json, want), "no %s in: %s", want, json);
}

/* docs/operators.md §4: a part of the state status cannot read is left out
 * and named in a state-unread warning, never shown as 0; the exit code
 * stays 0. Two ways in: one map's fill (a program pinned where eg_grants
 * should be: its map info fails), and the pins themselves (eg_grants' pin
 * gone). The reports are taken first and the map pinned back before any
 * assertion, so a failure leaves the pins as the loader made them. */
/* guarantees: none */
Test(cgroup_cli, status_names_what_it_cannot_read_instead_of_a_zero)
{
	static const struct bpf_insn ret0[] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	static char before[16384], swapped[16384], text[8192], gone[16384];
	char pin[300];
	int prog, grants, rc_swapped, rc_text, rc_gone;

	snprintf(pin, sizeof(pin), "%s/eg_grants", kh.pin_dir);
	grants = bpf_obj_get(pin);
	cr_assert_geq(grants, 0, "%s: %s", pin, strerror(errno));
	prog = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "eg_not_a_map", "GPL", ret0, 2, NULL);
	cr_assert_geq(prog, 0, "a socket filter to pin: %s", strerror(errno));
	status_json(before, sizeof(before));

	grants_pin(prog);
	rc_swapped = kh_cli(swapped, sizeof(swapped), "status", "--json", NULL);
	rc_text = kh_cli(text, sizeof(text), "status", NULL);
	grants_pin(-1);
	rc_gone = kh_cli(gone, sizeof(gone), "status", "--json", NULL);
	grants_pin(grants);
	close(grants);
	close(prog);

	cr_assert(field(before, "\"eg_grants\":{\"entries\":0,"), "%s", before);
	cr_assert_null(strstr(before, "state-unread"), "%s", before);

	cr_assert_eq(rc_swapped, 0, "%s", swapped);
	assert_unread_warned(swapped, "eg_grants", "Invalid argument");
	cr_assert_null(strstr(swapped, "\"eg_grants\":{"), "no fill for eg_grants: %s", swapped);
	cr_assert(field(swapped, "\"eg_records\":{\"entries\":0,"), "the others stay: %s", swapped);
	cr_assert_eq(rc_text, 0, "%s", text);
	cr_assert(strstr(text, "\nwarning: state-unread: eg_grants: not read: Invalid argument; "
			       "the report shows nothing for it\n"),
		  "%s", text);
	cr_assert_null(strstr(text, "  eg_grants "), "%s", text);

	cr_assert_eq(rc_gone, 0, "%s", gone);
	assert_unread_warned(gone, "maps (the pins)", "No such file or directory");
	cr_assert_null(strstr(gone, "\"counters\":"), "%s", gone);
	cr_assert_null(strstr(gone, "\"maps\":"), "%s", gone);

	status_json(before, sizeof(before));
	cr_assert_null(strstr(before, "state-unread"), "pinned back: %s", before);
}

/* docs/operators.md §4: eg_counters is one element per CPU; a reason's
 * count is the sum of n[reason] over the CPUs, and status prints that. */
/* guarantees: none */
Test(cgroup_cli, counters_sum_over_the_cpu_slots_as_status_prints)
{
	static char json[16384];
	char cmd[512], out[512];
	struct kh_child c;
	unsigned long long summed, shown;
	const char *p;
	int rc;

	kh_child_start(&c, true);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(kh_child_connect(&c, kh_path("nobody.sock"), NULL, NULL), -ENOENT);
	kh_child_stop(&c);
	snprintf(cmd, sizeof(cmd),
		 "bpftool -j map dump pinned %s/eg_counters | jq -e 'if length == %d and "
		 "all(.[]; (.formatted.value.n | length) == %d) "
		 "then [.[].formatted.value.n[%d]] | add else error(\"layout\") end'",
		 kh.pin_dir, EG_COUNTER_CPUS, EG_COUNTER_SLOTS, EG_K_ALLOW_UNREGISTERED);
	rc = kh_run(out, sizeof(out), "sh", "-c", cmd, NULL);
	cr_assert_eq(rc, 0, "%s\n-> %s", cmd, out);
	summed = strtoull(out, NULL, 10);
	status_json(json, sizeof(json));
	p = strstr(json, "\"counters\":{\"allow-unregistered\":");
	cr_assert(p, "%s", json);
	shown = strtoull(p + strlen("\"counters\":{\"allow-unregistered\":"), NULL, 10);
	cr_assert_geq(summed, 5, "five unregistered connects counted: %llu", summed);
	/* Nothing else in the scratch cgroup connects between the two reads. */
	cr_assert_eq(shown, summed, "status %llu vs the bpftool sum %llu", shown, summed);
}

/* Pins of an older execgate (eg_counters a per-CPU array): load names the
 * map and the fix instead of failing with libbpf's bare EINVAL, creates
 * nothing, and loads once the stale pin is gone. */
/* guarantees: none */
Test(cgroup_cli, load_refuses_the_pins_of_an_older_layout_by_name)
{
	char out[2048], pin[300], expect[512];
	int fd, rc;

	cr_assert_eq(kh_cli(out, sizeof(out), "unload", NULL), 0, "%s", out);
	kh.maps_open = false;
	eg_maps_close(&kh.maps);
	cr_assert(!mkdir(kh.pin_dir, 0700) || errno == EEXIST, "%s: %s", kh.pin_dir,
		  strerror(errno));
	fd =
	    bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "eg_counters", 4, 8, EG_K_REASON_COUNT, NULL);
	cr_assert_geq(fd, 0, "creating an old-layout eg_counters: %s", strerror(errno));
	snprintf(pin, sizeof(pin), "%s/eg_counters", kh.pin_dir);
	rc = bpf_obj_pin(fd, pin);
	close(fd);
	cr_assert_eq(rc, 0, "pinning %s: %s", pin, strerror(errno));

	rc = kh_cli(out, sizeof(out), "load", "--cgroup", kh.cgroup, NULL);
	unlink(pin);
	cr_assert_eq(rc, 1, "load over an old pin: exit %d: %s", rc, out);
	snprintf(pin, sizeof(pin), "%s/eg_records", kh.pin_dir);
	cr_assert_neq(access(pin, F_OK), 0, "the refused load created %s", pin);
	snprintf(expect, sizeof(expect),
		 "execgate: load: cgroup tier: pin dir %s: eg_counters has the layout of another "
		 "execgate build (map type %d, key 4, value 8 bytes, %d entries; this build: type "
		 "%d, key 4, value %zu, %d entries); run `execgate unload` first\n",
		 kh.pin_dir, BPF_MAP_TYPE_PERCPU_ARRAY, EG_K_REASON_COUNT, BPF_MAP_TYPE_ARRAY,
		 sizeof(struct eg_cpu_counters), EG_COUNTER_CPUS);
	cr_assert_str_eq(out, expect);

	rc = kh_cli(out, sizeof(out), "load", "--cgroup", kh.cgroup, NULL);
	cr_assert_eq(rc, 0, "load once the stale pin is gone: %s", out);
}
