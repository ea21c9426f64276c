// SPDX-License-Identifier: Apache-2.0
/* The admission cache of the connect_unix hook (abi.h, "The admission
 * cache"; bpf/execgate_admit_cache.bpf.h): a process's connect again to a
 * path it was allowed on is decided by one lookup, and every change that
 * can deny makes that lookup a miss, so the full checks decide again.
 *
 * Each test first shows that the cache is what decides: with the grant
 * deleted behind the loader's back (no generation step), the next connect
 * is still allowed. Then the real change under test, made the way the
 * loader makes it, must deny the next connect with the full checks'
 * reason. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <criterion/criterion.h>
#include <jansson.h>
#include "core/ids.h"
#include "harness.h"

#define SANDBOX	  "5f0c2c1e-7a4b-4c1d-9e3f-0000000000c7"
#define SANDBOX_2 "5f0c2c1e-7a4b-4c1d-9e3f-0000000000c8"
#define WORKER_A  "a0000000-0000-4000-8000-00000000000a"

TestSuite(admit_cache, .init = kh_setup_shared, .fini = kh_teardown, .timeout = 90);

static void install_as(const char *sandbox, unsigned gen, pid_t bridge, pid_t vmm,
		       const char *bsock, const char *vmm_sock)
{
	char g[16], b[16], v[16], out[2048];
	int rc;

	snprintf(g, sizeof(g), "%u", gen);
	snprintf(b, sizeof(b), "%d", (int)bridge);
	snprintf(v, sizeof(v), "%d", (int)vmm);
	rc = kh_cli(out, sizeof(out), "install", "--sandbox", sandbox, "--worker", WORKER_A,
		    "--generation", g, "--activation", "1", "--bridge-pid", b, "--vmm-pid", v,
		    "--bridge-socket", bsock, "--vmm-socket", vmm_sock, NULL);
	cr_assert_eq(rc, 0, "install %s gen %u: exit %d: %s", sandbox, gen, rc, out);
}

/* SANDBOX at generation 7 on the scratch world's bridge.sock and
 * vmm.sock: a listener as its VMM (returned), *bridge started, listening
 * and installed as its bridge, and the issuer's key added. */
static pid_t sandbox_up(struct kh_child *bridge)
{
	pid_t fc = kh_listener_start(kh_path("vmm.sock"));

	kh_child_start(bridge, true);
	cr_assert_eq(kh_child_listen(bridge, kh_path("bridge.sock")), 0);
	install_as(SANDBOX, 7, bridge->pid, fc, kh_path("bridge.sock"), kh_path("vmm.sock"));
	kh_keys();
	return fc;
}

static void admit(const char *sandbox, pid_t pid, unsigned gen)
{
	char token[512], out[1024], p[16];
	int rc;

	kh_cap(token, sizeof(token), sandbox, WORKER_A, gen, 1, 120, 0);
	snprintf(p, sizeof(p), "%d", (int)pid);
	rc = kh_cli(out, sizeof(out), "admit", "--pid", p, token, NULL);
	cr_assert_eq(rc, 0, "admit of pid %d: exit %d: %s", (int)pid, rc, out);
	cr_assert_str_eq(out, "allow\n");
}

static struct eg_grant_key grant_key(const char *sandbox, pid_t pid)
{
	struct eg_grant_key k;

	memset(&k, 0, sizeof(k));
	k.proc = kh_proc_id(pid);
	cr_assert_eq(eg_uuid_parse(sandbox, k.sandbox), 0);
	return k;
}

/* The cache's entries for tgid, read from the pinned map. */
static int entries_of(pid_t tgid, struct eg_admit_entry *one)
{
	return kh_admit_entries(kh.maps.fd[EG_MAP_ADMIT_CACHE], tgid, NULL, one);
}

/* mgr connects to bsock (allowed, remembered), then its grant goes
 * without a step of the word: the next connect is allowed by the cache
 * alone. The grant is put back as it was. */
static void show_the_cache_decides(struct kh_child *mgr, const char *bsock, const char *sandbox)
{
	struct eg_grant_key k = grant_key(sandbox, mgr->pid);
	struct eg_admit_entry e;
	struct eg_grant g;
	__u64 allowed = kh_counter(EG_K_ALLOW_GRANT);

	cr_assert_eq(kh_child_connect(mgr, bsock, NULL, NULL), 0, "granted connect");
	cr_assert_eq(entries_of(mgr->pid, &e), 1, "one entry for the process");
	cr_assert_str_eq(e.path, bsock);
	cr_assert_eq(e.tag.role, EG_ROLE_BRIDGE);
	cr_assert_eq(e.proc.tgid, (__u32)mgr->pid);
	cr_assert_eq(eg_grant_read(&kh.maps, &k, &g), 0, "reading the grant");
	cr_assert(e.expiry_ns <= g.expiry_ns && e.expiry_ns <= eg_boottime_ns() + EG_ADMIT_TTL_NS,
		  "the entry ends with its grant or its own lifetime, the earlier");
	cr_assert_eq(bpf_map_delete_elem(kh.maps.fd[EG_MAP_GRANTS], &k), 0);
	cr_assert_eq(kh_child_connect(mgr, bsock, NULL, NULL), 0,
		     "no grant, unmoved word: the cache allows");
	cr_assert_eq(kh_counter(EG_K_ALLOW_GRANT), allowed + 2);
	cr_assert_eq(bpf_map_update_elem(kh.maps.fd[EG_MAP_GRANTS], &k, &g, BPF_NOEXIST), 0);
}

/* guarantees: unix-bridge-socket-grant, unix-socket-epoch-tag */
Test(admit_cache, a_second_connect_is_decided_by_one_lookup_until_the_word_moves)
{
	const char *bsock = kh_path("bridge.sock");
	struct kh_child bridge, mgr;
	struct eg_grant_key k;
	struct eg_sk_tag tag;
	bool tagged = false;
	__u8 sb[EG_ID_BYTES];
	__u64 word;

	sandbox_up(&bridge);
	kh_child_start(&mgr, true);
	admit(SANDBOX, mgr.pid, 7);
	show_the_cache_decides(&mgr, bsock, SANDBOX);

	/* An admission writes its grant without a step of the word
	 * (eg_grant_admit_write()): the cached allows of the sandbox stay. */
	cr_assert_eq(eg_uuid_parse(SANDBOX, sb), 0);
	word = kh.maps.admit_gen[eg_admit_stripe(sb)];
	admit(SANDBOX, mgr.pid, 7);
	cr_assert_eq(kh.maps.admit_gen[eg_admit_stripe(sb)], word, "an admission moved the word");

	/* A hit tags the socket as the full checks did. */
	cr_assert_eq(kh_child_connect(&mgr, bsock, &tag, &tagged), 0);
	cr_assert(tagged);
	cr_assert_eq(memcmp(tag.sandbox, sb, EG_ID_BYTES), 0);
	cr_assert_eq(tag.epoch, 1);
	cr_assert_eq(tag.generation, 7);
	cr_assert_eq(tag.role, EG_ROLE_BRIDGE);

	/* Without the grant, a step of the word is all it takes. */
	k = grant_key(SANDBOX, mgr.pid);
	cr_assert_eq(bpf_map_delete_elem(kh.maps.fd[EG_MAP_GRANTS], &k), 0);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), 0, "still cached");
	eg_admit_invalidate(&kh.maps, sb);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), -EPERM, "word moved: full checks");
	cr_assert_eq(kh_counter(EG_K_DENY_NO_GRANT), 1);
	cr_assert_eq(kh_events((__u32)mgr.pid, EG_K_DENY_NO_GRANT), 1);
}

/* guarantees: epoch-revokes-grants, unix-bridge-socket-grant */
Test(admit_cache, retire_revoke_and_a_new_execution_each_deny_a_cached_allow)
{
	const char *bsock = kh_path("bridge.sock"), *vmm = kh_path("vmm.sock");
	struct kh_child bridge, a, b, c;
	char out[2048], p[16];
	pid_t fc = sandbox_up(&bridge);

	kh_child_start(&a, true);
	kh_child_start(&b, true);
	kh_child_start(&c, true);
	admit(SANDBOX, a.pid, 7);
	admit(SANDBOX, b.pid, 7);
	admit(SANDBOX, c.pid, 7);

	/* revoke */
	show_the_cache_decides(&a, bsock, SANDBOX);
	snprintf(p, sizeof(p), "%d", (int)a.pid);
	cr_assert_eq(kh_cli(out, sizeof(out), "revoke", "--pid", p, "--sandbox", SANDBOX, NULL), 0,
		     "%s", out);
	cr_assert_eq(kh_child_connect(&a, bsock, NULL, NULL), -EPERM, "revoked");
	cr_assert_eq(kh_counter(EG_K_DENY_NO_GRANT) + kh_counter(EG_K_DENY_GRANT_EPOCH), 1);

	/* a new execution */
	show_the_cache_decides(&b, bsock, SANDBOX);
	install_as(SANDBOX, 8, bridge.pid, fc, bsock, vmm);
	cr_assert_eq(kh_child_connect(&b, bsock, NULL, NULL), -EPERM, "epoch 1's grant");
	cr_assert_eq(kh_counter(EG_K_DENY_NO_GRANT) + kh_counter(EG_K_DENY_GRANT_EPOCH), 2);

	/* retire */
	admit(SANDBOX, c.pid, 8);
	show_the_cache_decides(&c, bsock, SANDBOX);
	cr_assert_eq(kh_cli(out, sizeof(out), "retire", "--sandbox", SANDBOX, NULL), 0, "%s", out);
	cr_assert_eq(kh_child_connect(&c, bsock, NULL, NULL), -EPERM, "retired");
	cr_assert_eq(kh_counter(EG_K_DENY_RETIRED), 1);
}

/* guarantees: unix-vmm-socket-bridge-only */
Test(admit_cache, a_new_bridge_denies_the_old_one_cached_at_the_vmm_socket)
{
	const char *bsock = kh_path("bridge.sock"), *vmm = kh_path("vmm.sock");
	struct kh_child bridge, bridge2;
	struct eg_admit_entry e;
	pid_t fc = sandbox_up(&bridge);

	kh_child_start(&bridge2, true);
	cr_assert_eq(kh_child_connect(&bridge, vmm, NULL, NULL), 0);
	cr_assert_eq(kh_child_connect(&bridge, vmm, NULL, NULL), 0);
	cr_assert_eq(entries_of(bridge.pid, &e), 1);
	cr_assert_eq(e.tag.role, EG_ROLE_VMM);
	cr_assert(e.expiry_ns <= eg_boottime_ns() + EG_ADMIT_TTL_NS,
		  "no grant to end the bridge's allow: the entry's own lifetime does");
	cr_assert_eq(kh_counter(EG_K_ALLOW_BRIDGE), 2);

	install_as(SANDBOX, 8, bridge2.pid, fc, bsock, vmm);
	cr_assert_eq(kh_child_connect(&bridge, vmm, NULL, NULL), -EPERM, "the old bridge");
	cr_assert_eq(kh_counter(EG_K_DENY_NOT_BRIDGE), 1);
	cr_assert_eq(kh_child_connect(&bridge2, vmm, NULL, NULL), 0, "the new bridge");
}

/* The loader re-points a path only after its sandbox retired, which moves
 * the word already; eg_endpoint_write() moves the old sandbox's word itself
 * too, and that alone must deny. */
/* guarantees: unix-bridge-socket-grant */
Test(admit_cache, a_path_given_to_another_sandbox_denies_what_the_old_one_cached)
{
	const char *bsock = kh_path("bridge.sock");
	const char *bsock2 = kh_path("bridge2.sock"), *vmm2 = kh_path("vmm2.sock");
	struct kh_child bridge, mgr;
	struct eg_path_key key;
	struct eg_endpoint ep;
	pid_t fc2 = kh_listener_start(vmm2);

	sandbox_up(&bridge);
	kh_child_start(&mgr, true);
	install_as(SANDBOX_2, 1, bridge.pid, fc2, bsock2, vmm2);
	admit(SANDBOX, mgr.pid, 7);
	show_the_cache_decides(&mgr, bsock, SANDBOX);

	memset(&key, 0, sizeof(key));
	strncpy(key.path, bsock, sizeof(key.path) - 1);
	cr_assert_eq(eg_endpoint_read(&kh.maps, EG_MAP_ENDPOINTS, &key, &ep), 0);
	cr_assert_eq(eg_uuid_parse(SANDBOX_2, ep.sandbox), 0);
	cr_assert_eq(eg_endpoint_write(&kh.maps, EG_MAP_ENDPOINTS, &key, &ep), 0);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), -EPERM, "another sandbox's path");
	cr_assert_eq(kh_counter(EG_K_DENY_NO_GRANT), 1);
}

/* guarantees: unix-bridge-socket-grant, pid-reuse-ns-identity */
Test(admit_cache, an_entry_ends_with_its_grant_and_with_its_binary)
{
	const char *bsock = kh_path("bridge.sock");
	struct kh_child bridge, mgr, other;
	struct eg_exec_record rec;
	struct eg_grant g;
	__u8 sb[EG_ID_BYTES];
	__u64 word;

	sandbox_up(&bridge);
	kh_child_start(&mgr, true);
	kh_child_start(&other, true);
	cr_assert_eq(eg_uuid_parse(SANDBOX, sb), 0);
	cr_assert_eq(eg_record_read(&kh.maps, sb, &rec), 0);

	/* A grant of 3 s, extended by a write of the same grant to 8 s: an
	 * extension moves no word (the entries it allowed stay right). */
	memset(&g, 0, sizeof(g));
	g.key = grant_key(SANDBOX, mgr.pid);
	g.generation = rec.generation;
	g.epoch = rec.epoch;
	g.scope = 1;
	g.expiry_ns = eg_boottime_ns() + 3ULL * 1000000000ULL;
	cr_assert_eq(eg_grant_write(&kh.maps, &g), 0);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), 0);
	word = kh.maps.admit_gen[eg_admit_stripe(sb)];
	g.expiry_ns += 5ULL * 1000000000ULL;
	cr_assert_eq(eg_grant_write(&kh.maps, &g), 0);
	cr_assert_eq(kh.maps.admit_gen[eg_admit_stripe(sb)], word, "an extension moved the word");
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), 0);
	sleep(4);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), 0, "the grant lives: full checks");
	cr_assert_eq(kh_counter(EG_K_ALLOW_GRANT), 3);
	sleep(5);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), -EPERM, "expired");
	cr_assert_eq(kh_counter(EG_K_DENY_GRANT_EXPIRED), 1);

	/* An earlier expiry written over a live grant is a narrowing: the
	 * word moves, and the cached allow goes with the grant's. */
	g.key = grant_key(SANDBOX, other.pid);
	g.expiry_ns = eg_boottime_ns() + 100ULL * 1000000000ULL;
	cr_assert_eq(eg_grant_write(&kh.maps, &g), 0);
	cr_assert_eq(kh_child_connect(&other, bsock, NULL, NULL), 0);
	g.expiry_ns = eg_boottime_ns() - 1000000000ULL; /* the coarse clock lags a tick */
	cr_assert_eq(eg_grant_write(&kh.maps, &g), 0);
	cr_assert_neq(kh.maps.admit_gen[eg_admit_stripe(sb)], word, "a narrowing moved no word");
	cr_assert_eq(kh_child_connect(&other, bsock, NULL, NULL), -EPERM, "narrowed");
	cr_assert_eq(kh_counter(EG_K_DENY_GRANT_EXPIRED), 2);

	/* The same pid after exec() of another binary is another process:
	 * the entry's identity does not match, and its grant neither. */
	g.expiry_ns = eg_boottime_ns() + 100ULL * 1000000000ULL;
	cr_assert_eq(eg_grant_write(&kh.maps, &g), 0);
	cr_assert_eq(kh_child_connect(&other, bsock, NULL, NULL), 0);
	cr_assert_eq(entries_of(other.pid, NULL), 1);
	cr_assert_eq(kh_child_exec_connect(&other, bsock), -EPERM, "another binary, same pid");
	cr_assert_eq(kh_counter(EG_K_DENY_NO_GRANT), 1);
}

/* guarantees: unix-bridge-socket-grant */
Test(admit_cache, a_full_cache_costs_a_miss_never_a_verdict)
{
	const char *bsock = kh_path("bridge.sock");
	int fd = kh.maps.fd[EG_MAP_ADMIT_CACHE];
	struct kh_child bridge, mgr, none;
	struct eg_admit_entry junk;
	struct eg_admit_key k;

	sandbox_up(&bridge);
	kh_child_start(&mgr, true);
	kh_child_start(&none, true);
	admit(SANDBOX, mgr.pid, 7);
	/* Filled past its size with entries of no process: the LRU makes room
	 * for every insert. */
	memset(&junk, 0, sizeof(junk));
	memset(&k, 0, sizeof(k));
	for (__u32 i = 0; i < EG_ADMIT_CACHE_SIZE + 1024; i++) {
		k.path_hash = i;
		k.tgid = 0x7fffffff;
		cr_assert_eq(bpf_map_update_elem(fd, &k, &junk, BPF_ANY), 0, "filling: %s",
			     strerror(errno));
	}
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), 0, "allowed, full cache");
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), 0);
	cr_assert_eq(kh_child_connect(&none, bsock, NULL, NULL), -EPERM, "no grant, full cache");
	cr_assert_eq(kh_counter(EG_K_ALLOW_GRANT), 2);
	cr_assert_eq(kh_counter(EG_K_DENY_NO_GRANT), 1);
}

/* A write that is not the loader's (bpftool, an older execgate during an
 * upgrade) moves no word: the cached allow outlives it by at most the
 * entry's lifetime, EG_ADMIT_TTL_NS. Connects every 20 ms after a raw
 * delete of the record: none may be allowed once the entry's end (plus a
 * tick of the coarse clock) has passed, and one must be denied by then.
 * How many are allowed before it is not asserted: where the LSM tier runs
 * too (6.12), its unix_stream_connect hook, which has no cache, denies the
 * first one; on a slow guest the second may come late. */
/* guarantees: unix-fail-closed */
Test(admit_cache, a_map_edited_behind_the_loader_is_seen_within_the_entry_lifetime)
{
	const char *vmm = kh_path("vmm.sock");
	const __u64 tick = 20ULL * 1000000ULL; /* above a coarse tick at HZ >= 100 */
	struct eg_admit_entry e;
	struct kh_child bridge;
	__u8 sb[EG_ID_BYTES];
	unsigned allowed = 0;
	int rc;

	sandbox_up(&bridge);
	cr_assert_eq(kh_child_connect(&bridge, vmm, NULL, NULL), 0);
	cr_assert_eq(entries_of(bridge.pid, &e), 1);
	cr_assert_eq(eg_uuid_parse(SANDBOX, sb), 0);
	cr_assert_eq(bpf_map_delete_elem(kh.maps.fd[EG_MAP_RECORDS], sb), 0);
	for (;;) {
		__u64 before = eg_boottime_ns();

		rc = kh_child_connect(&bridge, vmm, NULL, NULL);
		if (rc == -EPERM)
			break;
		cr_assert_eq(rc, 0, "connect: %s", strerror(-rc));
		cr_assert(before < e.expiry_ns + tick,
			  "allowed %llu ms after the entry's end, with no record",
			  (unsigned long long)((before - e.expiry_ns) / 1000000));
		allowed++;
		usleep(20000);
	}
	cr_assert_eq(kh_counter(EG_K_DENY_NO_RECORD), 1);
	cr_log_info("%u connects allowed by the cache after the delete", allowed);
}

/* A hit whose socket cannot be tagged (net.core.optmem_max 0 in the
 * process's network namespace, as cgroup::an_admitted_connect_that_cannot_
 * be_tagged_is_denied sets it) goes on to the full checks, which deny with
 * deny-no-tag. status lists the cache's fill with the other maps. */
/* guarantees: unix-socket-epoch-tag */
Test(admit_cache, a_hit_that_cannot_tag_is_denied_and_status_shows_the_fill)
{
	const char *bsock = kh_path("bridge.sock");
	struct kh_child bridge, mgr;
	json_t *doc, *fill;
	json_error_t jerr;
	char out[65536];
	int rc;

	sandbox_up(&bridge);
	kh_child_start(&mgr, true);
	admit(SANDBOX, mgr.pid, 7);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), 0);
	cr_assert_eq(entries_of(mgr.pid, NULL), 1, "cached");

	rc = kh_cli(out, sizeof(out), "status", "--json", NULL);
	cr_assert_eq(rc, 0, "status: %s", out);
	doc = json_loads(out, 0, &jerr);
	cr_assert_not_null(doc, "status --json: %s", jerr.text);
	fill = json_object_get(json_object_get(doc, "maps"), "eg_admit_cache");
	cr_assert(json_integer_value(json_object_get(fill, "entries")) >= 1,
		  "status maps.eg_admit_cache: %s", fill ? json_dumps(fill, 0) : "(none)");
	cr_assert_eq(json_integer_value(json_object_get(fill, "max_entries")), EG_ADMIT_CACHE_SIZE);
	json_decref(doc);

	rc = kh_child_optmem(&mgr, 0);
	cr_assert_eq(rc, 0,
		     "setting optmem_max in the child's namespace: %s (a kernel that keeps it "
		     "machine-wide runs this test in a VM only)",
		     strerror(-rc));
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), -EPERM, "cached, but no tag");
	cr_assert_eq(kh_counter(EG_K_DENY_NO_TAG), 1);
	cr_assert_eq(kh_counter(EG_K_ALLOW_GRANT), 1, "the denial is not also counted an allow");
	cr_assert_eq(kh_child_optmem(&mgr, 131072), 0);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), 0, "room again");
	cr_assert_eq(kh_counter(EG_K_ALLOW_GRANT), 2);
}

/* A hit compares, in its copy, the kind and length the key names
 * (key_len) and the whole path: an entry that names another kind of
 * address (or a path of another length), or another path, under the same
 * key is a miss. With the grant gone behind the loader's back, a miss
 * denies and a hit would allow. */
/* guarantees: unix-bridge-socket-grant */
Test(admit_cache, an_entry_naming_another_address_under_the_key_misses)
{
	const char *bsock = kh_path("bridge.sock");
	int fd = kh.maps.fd[EG_MAP_ADMIT_CACHE];
	struct eg_admit_entry e, other;
	struct kh_child bridge, mgr;
	struct eg_admit_key ak;
	struct eg_grant_key k;
	struct eg_grant g;

	sandbox_up(&bridge);
	kh_child_start(&mgr, true);
	admit(SANDBOX, mgr.pid, 7);
	show_the_cache_decides(&mgr, bsock, SANDBOX);
	cr_assert_eq(kh_admit_entries(fd, mgr.pid, &ak, &e), 1);
	cr_assert_eq(e.key_len, ak.len, "an entry repeats its key's length");
	k = grant_key(SANDBOX, mgr.pid);
	cr_assert_eq(eg_grant_read(&kh.maps, &k, &g), 0);
	cr_assert_eq(bpf_map_delete_elem(kh.maps.fd[EG_MAP_GRANTS], &k), 0);

	other = e;
	other.key_len = EG_ADMIT_LEN_VSOCK;
	cr_assert_eq(bpf_map_update_elem(fd, &ak, &other, BPF_EXIST), 0);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), -EPERM, "a VSOCK entry's kind");
	other = e;
	other.path[strlen(other.path) - 1] ^= 1;
	cr_assert_eq(bpf_map_update_elem(fd, &ak, &other, BPF_EXIST), 0);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), -EPERM, "another path");
	cr_assert_eq(kh_counter(EG_K_DENY_NO_GRANT), 2, "both decided by the full checks");

	cr_assert_eq(bpf_map_update_elem(fd, &ak, &e, BPF_EXIST), 0);
	cr_assert_eq(kh_child_connect(&mgr, bsock, NULL, NULL), 0, "the entry as it was: a hit");
	cr_assert_eq(bpf_map_update_elem(kh.maps.fd[EG_MAP_GRANTS], &k, &g, BPF_NOEXIST), 0);
}
