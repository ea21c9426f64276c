// SPDX-License-Identifier: Apache-2.0
/* The admission cache in the LSM tier's socket_connect (abi.h, "The
 * admission cache"; bpf/lsm.bpf.c): a process's VSOCK connect again to an
 * address it was allowed on is decided by one lookup, and every change
 * that can deny makes that lookup a miss, so the full checks decide again.
 * Real connections to CID 1 through vsock_loopback, inside the VM matrix.
 *
 * As in test_admit_cache.c, each test first shows that the cache is what
 * decides: with the record deleted behind the loader's back (no generation
 * step), the next connect is still allowed. Then the real change, made the
 * way the loader makes it, must deny with the full checks' reason. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <criterion/criterion.h>
#include "harness.h"
#include "loader/maps/maps.h"
#include "test_lsm_common.h"
#include "test_lsm_env.h"
#include "test_lsm_unix_install.h"

static struct lsm_env env;

static void fini(void)
{
	lsm_env_fini(&env);
}

TestSuite(lsm_admit_cache, .fini = fini, .timeout = 90);

static const __u8 sandbox_s[EG_ID_BYTES] = {0x5a, 0x4d, 0xb0, 0x03, 7};
static const __u8 sandbox_t[EG_ID_BYTES] = {0x5a, 0x4d, 0xb0, 0x03, 8};

/* The cache's entries for tgid; *key and *one: the last one seen. */
static int entries_of(pid_t tgid, struct eg_admit_key *key, struct eg_admit_entry *one)
{
	return kh_admit_entries(env.rt.maps.fd[EG_MAP_ADMIT_CACHE], tgid, key, one);
}

/* The VMM listening on CID 1:port (its slot: the last one opened), and
 * sandbox_s at generation 7 with bridge as its bridge. */
static int last_listener;

static unsigned vsock_up(struct agent **vmm, struct agent **bridge)
{
	unsigned port = lsm_env_vsock_port(0);
	int ls;

	eg_test_require_vm_vsock();
	*vmm = agent_start(&env, false);
	*bridge = agent_start(&env, false);
	ls = agent_listen_vsock(*vmm, port);
	cr_assert_geq(ls, 0, "vsock listen on port %u: %s", port, strerror(-ls));
	last_listener = ls;
	lsm_env_install_vsock(&env, sandbox_s, 7, 1, *bridge, *vmm, port, EG_INSTALLED_NEW);
	return port;
}

/* bridge connects to 1:port (allowed, remembered: one entry, checked field
 * by field), then the record goes without a step of the word: the next
 * connect is allowed by the cache alone. The record is put back as it was. */
static void show_the_cache_decides(struct agent *bridge, unsigned port)
{
	int fd = env.rt.maps.fd[EG_MAP_RECORDS];
	__u64 allowed = lsm_env_counter(&env, EG_K_ALLOW_BRIDGE);
	const struct eg_vsock_key *at;
	struct eg_exec_record rec;
	struct eg_admit_entry e;
	struct eg_admit_key k;
	int rc;

	rc = agent_connect_vsock(bridge, 1, port);
	cr_assert_geq(rc, 0, "the bridge's connect to 1:%u: %s", port, strerror(-rc));
	cr_assert_eq(entries_of(bridge->pid, &k, &e), 1, "one entry for the bridge");
	cr_assert_eq(k.len, EG_ADMIT_LEN_VSOCK);
	cr_assert_eq(k.path_hash, (__u64)1 << 32 | port, "the key is the address");
	cr_assert_eq(e.key_len, EG_ADMIT_LEN_VSOCK);
	at = (const struct eg_vsock_key *)e.path;
	cr_assert(at->cid == 1 && at->port == port, "the entry names 1:%u, not %u:%u", port,
		  at->cid, at->port);
	for (size_t i = sizeof(*at); i < sizeof(e.path); i++)
		cr_assert_eq(e.path[i], 0, "byte %zu after the address", i);
	cr_assert_eq(e.proc.tgid, (__u32)bridge->pid);
	cr_assert_eq(e.tag.role, EG_ROLE_VMM);
	cr_assert_eq(eg_record_read(&env.rt.maps, sandbox_s, &rec), 0, "reading the record");
	cr_assert_eq(e.tag.epoch, rec.epoch);
	cr_assert(e.expiry_ns <= eg_boottime_ns() + EG_ADMIT_TTL_NS,
		  "no grant to end the bridge's allow: the entry's own lifetime does");

	cr_assert_eq(bpf_map_delete_elem(fd, sandbox_s), 0);
	rc = agent_connect_vsock(bridge, 1, port);
	cr_assert_eq(bpf_map_update_elem(fd, sandbox_s, &rec, BPF_NOEXIST), 0, "record back");
	cr_assert_geq(rc, 0, "no record, unmoved word: the cache allows: %s", strerror(-rc));
	cr_assert_eq(lsm_env_counter(&env, EG_K_ALLOW_BRIDGE), allowed + 2);
}

/* guarantees: vsock-vmm-bridge-only */
Test(lsm_admit_cache, a_new_execution_denies_the_old_bridge_cached_at_the_vsock_endpoint,
     .description = "a cached VSOCK allow ends with the execution that made it")
{
	struct agent *vmm, *bridge, *bridge8, *other;
	unsigned port;
	__u64 deny0;
	int rc;

	lsm_env_init(&env);
	port = vsock_up(&vmm, &bridge);
	bridge8 = agent_start(&env, false);
	other = agent_start(&env, false);
	show_the_cache_decides(bridge, port);
	deny0 = lsm_env_counter(&env, EG_K_DENY_NOT_BRIDGE);

	rc = agent_connect_vsock(other, 1, port);
	cr_assert_eq(rc, -EPERM, "another process, no entry of its own: %d", rc);
	cr_assert_eq(lsm_env_counter(&env, EG_K_DENY_NOT_BRIDGE), deny0 + 1);

	lsm_env_install_vsock(&env, sandbox_s, 8, 1, bridge8, vmm, port, EG_INSTALLED_REPLACED);
	rc = agent_connect_vsock(bridge, 1, port);
	cr_assert_eq(rc, -EPERM, "the bridge of generation 7: %d (%s)", rc, strerror(-rc));
	cr_assert_eq(lsm_env_counter(&env, EG_K_DENY_NOT_BRIDGE), deny0 + 2);
	cr_assert_eq(lsm_env_count_events(&env, bridge->pid, EG_K_DENY_NOT_BRIDGE,
					  EG_HOOK_LSM_SOCKET_CONNECT),
		     1, "denied by the full checks of socket_connect");
	rc = agent_connect_vsock(bridge8, 1, port);
	cr_assert_geq(rc, 0, "the bridge of generation 8: %s", strerror(-rc));
}

/* The loader re-points an endpoint only after its sandbox retired, which
 * moves the word already; eg_endpoint_write() moves the old sandbox's word
 * itself too, and that alone must deny. */
/* guarantees: vsock-vmm-bridge-only */
Test(lsm_admit_cache, an_address_given_to_another_sandbox_denies_what_the_old_one_cached,
     .description = "a VSOCK endpoint re-pointed to another sandbox is decided again")
{
	struct agent *vmm, *bridge, *bridge_t;
	struct eg_vsock_key key;
	struct eg_endpoint ep;
	unsigned port;
	__u64 deny0;
	int rc;

	lsm_env_init(&env);
	port = vsock_up(&vmm, &bridge);
	bridge_t = agent_start(&env, false);
	lsm_env_install_vsock(&env, sandbox_t, 1, 1, bridge_t, vmm, lsm_env_vsock_port(1),
			      EG_INSTALLED_NEW);
	show_the_cache_decides(bridge, port);
	deny0 = lsm_env_counter(&env, EG_K_DENY_NOT_BRIDGE);

	key = (struct eg_vsock_key){.cid = 1, .port = port};
	cr_assert_eq(eg_endpoint_read(&env.rt.maps, EG_MAP_VSOCK_ENDPOINTS, &key, &ep), 0);
	memcpy(ep.sandbox, sandbox_t, EG_ID_BYTES);
	cr_assert_eq(eg_endpoint_write(&env.rt.maps, EG_MAP_VSOCK_ENDPOINTS, &key, &ep), 0);
	rc = agent_connect_vsock(bridge, 1, port);
	cr_assert_eq(rc, -EPERM, "another sandbox's address: %d (%s)", rc, strerror(-rc));
	cr_assert_eq(lsm_env_counter(&env, EG_K_DENY_NOT_BRIDGE), deny0 + 1);
	rc = agent_connect_vsock(bridge_t, 1, port);
	cr_assert_geq(rc, 0, "its own bridge: %s", strerror(-rc));
}

/* A hit whose socket cannot be tagged (net.core.optmem_max 0: VSOCK
 * sockets are not per network namespace, so the VM's own sysctl) goes on
 * to the full checks, which deny with deny-no-tag, counted once. */
/* guarantees: stream-lease */
Test(lsm_admit_cache, a_vsock_hit_that_cannot_tag_is_denied,
     .description = "a cached VSOCK allow still fails closed without room for its tag")
{
	struct agent *vmm, *bridge;
	__u64 allow0, notag0;
	unsigned port;
	int rc, old;

	lsm_env_init(&env);
	port = vsock_up(&vmm, &bridge);
	show_the_cache_decides(bridge, port);
	allow0 = lsm_env_counter(&env, EG_K_ALLOW_BRIDGE);
	notag0 = lsm_env_counter(&env, EG_K_DENY_NO_TAG);

	old = kh_vm_optmem_set(0);
	rc = agent_connect_vsock(bridge, 1, port);
	kh_vm_optmem_set(old);
	cr_assert_eq(rc, -EPERM, "cached, but no room for the tag: %d (%s)", rc, strerror(-rc));
	cr_assert_eq(lsm_env_counter(&env, EG_K_DENY_NO_TAG), notag0 + 1);
	cr_assert_eq(lsm_env_counter(&env, EG_K_ALLOW_BRIDGE), allow0, "not also an allow");
	rc = agent_connect_vsock(bridge, 1, port);
	cr_assert_geq(rc, 0, "room again: %s", strerror(-rc));
	cr_assert_eq(lsm_env_counter(&env, EG_K_ALLOW_BRIDGE), allow0 + 1);
}

/* A record deleted with a raw map call moves no word: the entry's own
 * lifetime (at most EG_ADMIT_TTL_NS) bounds how long it is not seen. */
/* guarantees: vsock-vmm-bridge-only */
Test(lsm_admit_cache, a_raw_record_delete_is_seen_within_the_entry_lifetime,
     .description = "a VSOCK entry outlives a map edited behind the loader by at most 1 s")
{
	const __u64 tick = 20ULL * 1000000ULL; /* above a tick at HZ >= 100 */
	struct agent *vmm, *bridge;
	struct eg_admit_entry e;
	unsigned port, allowed = 0;
	int rc;

	lsm_env_init(&env);
	port = vsock_up(&vmm, &bridge);
	rc = agent_connect_vsock(bridge, 1, port);
	cr_assert_geq(rc, 0, "connect: %s", strerror(-rc));
	cr_assert_eq(entries_of(bridge->pid, NULL, &e), 1);
	cr_assert_eq(bpf_map_delete_elem(env.rt.maps.fd[EG_MAP_RECORDS], sandbox_s), 0);
	for (;;) {
		__u64 before = eg_boottime_ns();

		rc = agent_connect_vsock(bridge, 1, port);
		if (rc == -EPERM)
			break;
		cr_assert_geq(rc, 0, "connect: %s", strerror(-rc));
		cr_assert(before < e.expiry_ns + tick,
			  "allowed %llu ms after the entry's end, with no record",
			  (unsigned long long)((before - e.expiry_ns) / 1000000));
		/* both ends closed: the listener's backlog never fills */
		agent_close(bridge, rc);
		rc = agent_accept(vmm, last_listener);
		cr_assert_geq(rc, 0, "accept: %s", strerror(-rc));
		agent_close(vmm, rc);
		allowed++;
		usleep(20000);
	}
	cr_assert_eq(lsm_env_count_events(&env, bridge->pid, EG_K_DENY_NO_RECORD,
					  EG_HOOK_LSM_SOCKET_CONNECT),
		     1);
	cr_assert_geq(allowed, 1, "the entry allowed at least the first connect after the delete");
	cr_log_info("%u connects allowed by the cache after the delete", allowed);
}

/* A Unix path: the connect hook that decides it (connect_unix where the
 * kernel has it, socket_connect on 6.1) remembers the allow, and
 * unix_stream_connect's listener check reads the record all the same.
 * With the record gone behind the loader's back, the path hook's cache
 * allows and unix_stream_connect denies: the event names that hook. A new
 * execution then denies the old bridge at the path hook. */
/* guarantees: unix-vmm-socket-bridge-only */
Test(lsm_admit_cache, a_unix_path_is_cached_by_the_hook_that_decides_it,
     .description = "a cached Unix allow: the listener check still reads the record")
{
	struct agent *vmm, *bridge, *bridge8;
	struct eg_exec_record rec;
	struct eg_admit_entry e;
	struct eg_admit_key k;
	char path[256];
	int fd, rc;

	lsm_env_init(&env);
	lsm_env_path(&env, "vmm.sock", path, sizeof(path));
	vmm = agent_start(&env, false);
	bridge = agent_start(&env, true);
	bridge8 = agent_start(&env, true);
	cr_assert_geq(agent_listen_unix(vmm, path), 0);
	lsm_install_unix(&env, 7, 1, bridge, vmm, path, EG_INSTALLED_NEW);

	rc = agent_connect_unix(bridge, path);
	cr_assert_geq(rc, 0, "the bridge's connect: %s", strerror(-rc));
	cr_assert_eq(entries_of(bridge->pid, &k, &e), 1, "one entry for the bridge");
	cr_assert_eq(k.len, strlen(path));
	cr_assert_eq(e.key_len, strlen(path));
	cr_assert_str_eq(e.path, path);
	cr_assert_eq(e.tag.role, EG_ROLE_VMM);

	fd = env.rt.maps.fd[EG_MAP_RECORDS];
	cr_assert_eq(eg_record_read(&env.rt.maps, lsm_sandbox_s, &rec), 0);
	cr_assert_eq(bpf_map_delete_elem(fd, lsm_sandbox_s), 0);
	rc = agent_connect_unix(bridge, path);
	cr_assert_eq(bpf_map_update_elem(fd, lsm_sandbox_s, &rec, BPF_NOEXIST), 0, "record back");
	cr_assert_eq(rc, -EPERM, "no record: the listener check denies: %d", rc);
	cr_assert_eq(lsm_env_count_events(&env, bridge->pid, EG_K_DENY_NO_RECORD,
					  EG_HOOK_LSM_UNIX_STREAM_CONNECT),
		     1, "denied by unix_stream_connect");
	cr_assert_eq(
	    lsm_env_count_events(&env, bridge->pid, EG_K_DENY_NO_RECORD,
				 EG_HOOK_LSM_SOCKET_CONNECT) +
		lsm_env_count_events(&env, bridge->pid, EG_K_DENY_NO_RECORD, EG_HOOK_CONNECT_UNIX),
	    0, "the path hook's cache allowed");

	lsm_install_unix(&env, 8, 1, bridge8, vmm, path, EG_INSTALLED_REPLACED);
	rc = agent_connect_unix(bridge, path);
	cr_assert_eq(rc, -EPERM, "the bridge of generation 7: %d", rc);
	cr_assert_eq(lsm_env_count_events(&env, bridge->pid, EG_K_DENY_NOT_BRIDGE,
					  env.cgroup_tier ? EG_HOOK_CONNECT_UNIX
							  : EG_HOOK_LSM_SOCKET_CONNECT),
		     1, "denied by the path hook's full checks");
	rc = agent_connect_unix(bridge8, path);
	cr_assert_geq(rc, 0, "the bridge of generation 8: %s", strerror(-rc));
}

/* A VSOCK hit compares, in its copy, the kind (key_len) and the address:
 * an entry that names another kind, or another address, under the key is
 * a miss. With the record gone behind the loader's back, a miss denies
 * and a hit would allow. */
/* guarantees: vsock-vmm-bridge-only */
Test(lsm_admit_cache, an_entry_naming_another_address_under_the_key_misses,
     .description = "a VSOCK hit needs the entry's own kind and address")
{
	struct eg_admit_entry e, other;
	struct eg_exec_record rec;
	struct agent *vmm, *bridge;
	struct eg_admit_key ak;
	unsigned port;
	__u64 norec0;
	int fd, rfd, rc;

	lsm_env_init(&env);
	fd = env.rt.maps.fd[EG_MAP_ADMIT_CACHE]; /* open once the world is up */
	rfd = env.rt.maps.fd[EG_MAP_RECORDS];
	port = vsock_up(&vmm, &bridge);
	show_the_cache_decides(bridge, port);
	cr_assert_eq(entries_of(bridge->pid, &ak, &e), 1);
	cr_assert_eq(eg_record_read(&env.rt.maps, sandbox_s, &rec), 0);
	cr_assert_eq(bpf_map_delete_elem(rfd, sandbox_s), 0);
	norec0 = lsm_env_counter(&env, EG_K_DENY_NO_RECORD);

	other = e;
	other.key_len = 0; /* what an older program wrote there */
	cr_assert_eq(bpf_map_update_elem(fd, &ak, &other, BPF_EXIST), 0);
	rc = agent_connect_vsock(bridge, 1, port);
	cr_assert_eq(rc, -EPERM, "an entry of another kind: %d", rc);
	other = e;
	((struct eg_vsock_key *)other.path)->port ^= 1;
	cr_assert_eq(bpf_map_update_elem(fd, &ak, &other, BPF_EXIST), 0);
	rc = agent_connect_vsock(bridge, 1, port);
	cr_assert_eq(rc, -EPERM, "an entry of another address: %d", rc);
	cr_assert_eq(lsm_env_counter(&env, EG_K_DENY_NO_RECORD), norec0 + 2,
		     "both decided by the full checks");

	cr_assert_eq(bpf_map_update_elem(fd, &ak, &e, BPF_EXIST), 0);
	rc = agent_connect_vsock(bridge, 1, port);
	cr_assert_eq(bpf_map_update_elem(rfd, sandbox_s, &rec, BPF_NOEXIST), 0, "record back");
	cr_assert_geq(rc, 0, "the entry as it was: a hit: %s", strerror(-rc));
}
