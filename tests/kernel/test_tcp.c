// SPDX-License-Identifier: Apache-2.0
/* The TCP / ServicePort tier on the running kernel: real TCP and UDP from a
 * gateway in a network namespace of its own (tcp_env.h) to a guest
 * address registered by install --service-addr, grants from admit with
 * ServicePort capabilities, and revocation of established streams when
 * the epoch moves or the sandbox is retired, by bpf_sock_destroy where the
 * kernel has it and by sock_diag SOCK_DESTROY (forced here, the only way on
 * 6.1). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <criterion/criterion.h>
#include <execgate/admin.h>
#include "core/ids.h"
#include "harness.h"
#include "loader/revokers/revoke.h"
#include "loader/records/runtime.h"
#include "loader/tiers/tcp_tier.h"
#include "not_offered.h"
#include "tcp_env.h"

#define SANDBOX "5f0c2c1e-7a4b-4c1d-9e3f-0000000000d1"
#define WORKER	"a0000000-0000-4000-8000-00000000000a"

/* The tcp tier needs no connect_unix: load requires no tier, and each
 * test checks that the tcp tier loaded (6.1 offers it, not the cgroup
 * tier). */
static void setup(void)
{
	kh_setup_shared_requiring(NULL);
}

TestSuite(tcp, .init = setup, .fini = kh_teardown, .timeout = 120);

static void tcp_tier_or_skip(void)
{
	if (!kh_tier_loaded("tcp"))
		kh_not_offered(KH_NEED_ANY, "tcp tier not loaded (no links/tcp_connect4)");
}

/* The JSON output's tcp_method of the last install or retire ("" null). */
static char last_method[64];

static unsigned streams_cut(const char *out)
{
	const char *cut = strstr(out, "\"tcp_cut\":"), *m = strstr(out, "\"tcp_method\":\"");

	last_method[0] = '\0';
	if (m)
		sscanf(m + strlen("\"tcp_method\":\""), "%63[^\"]", last_method);
	return cut ? (unsigned)strtoul(cut + strlen("\"tcp_cut\":"), NULL, 10) : 0;
}

/* The method the loader must pick on this kernel: bpf_sock_destroy where
 * it loads (6.5+), else sock_diag. */
/* bpf_sock_destroy exists from 6.5: there the kfunc revoker must load (a
 * program the verifier refused would otherwise pass unseen, through the
 * fallback); before it, the sock_diag fallback is the method. */
static const char *expected_method(void)
{
	struct utsname u;
	unsigned major = 0, minor = 0;
	char why[256];
	int rc;

	rc = eg_tcp_iter_probe(why, sizeof(why));
	cr_assert_eq(uname(&u), 0);
	if (sscanf(u.release, "%u.%u", &major, &minor) == 2 &&
	    (major > 6 || (major == 6 && minor >= 5)))
		cr_assert_eq(rc, 0, "kernel %s has bpf_sock_destroy, but the iter/tcp revoker: %s",
			     u.release, why);
	return rc ? EG_TCP_METHOD_DIAG : EG_TCP_METHOD_KFUNC;
}

/* install generation gen attempt act, the guest at TE_GUEST_ADDR and ::1,
 * ports TCP 7000 and UDP 7001. Returns the JSON output's tcp_cut. */
static unsigned install(unsigned gen, unsigned act)
{
	char g[16], a[16], me[16], out[4096];
	int rc;

	snprintf(g, sizeof(g), "%u", gen);
	snprintf(a, sizeof(a), "%u", act);
	snprintf(me, sizeof(me), "%d", (int)getpid());
	rc = kh_cli(out, sizeof(out), "install", "--sandbox", SANDBOX, "--worker", WORKER,
		    "--generation", g, "--activation", a, "--bridge-pid", me, "--service-addr",
		    TE_GUEST_ADDR, "--service-addr", "::1", "--service-port", "7000/tcp",
		    "--service-port", "7001/udp", "--service-port", "7003/tcp", "--json", NULL);
	cr_assert_eq(rc, 0, "install generation %u: exit %d: %s", gen, rc, out);
	return streams_cut(out);
}

static unsigned retire(void)
{
	char out[4096];
	int rc;

	rc = kh_cli(out, sizeof(out), "retire", "--sandbox", SANDBOX, "--json", NULL);
	cr_assert_eq(rc, 0, "retire: exit %d: %s", rc, out);
	return streams_cut(out);
}

/* A ServicePort token for gen/act and port "N/tcp|udp". */
static void cap(char *tok, size_t size, unsigned gen, const char *port)
{
	char seed[256], g[16];
	int rc;

	snprintf(seed, sizeof(seed), "%s/%s.seed", kh.keys_dir, kh.kid);
	snprintf(g, sizeof(g), "%u", gen);
	rc = kh_issue(tok, size, "cap", "--key", seed, "--sandbox", SANDBOX, "--worker", WORKER,
		      "--generation", g, "--activation", "1", "--scope", "serviceport", "--port",
		      port, "--ttl", "120", NULL);
	cr_assert_eq(rc, 0, "execgate-issue cap: %s", tok);
	tok[strcspn(tok, "\n")] = '\0';
}

static int admit(struct te_env *e, const char *tok, char *out, size_t size)
{
	return kh_cli(out, size, "admit", "--pid", te_gateway_pid(e), tok, NULL);
}

/* guarantees: tcp-serviceport-profile */
Test(tcp, connect4_needs_a_serviceport_grant_for_port_and_protocol)
{
	char tok[1024], out[2048];
	struct te_env e;
	__u64 denied;

	tcp_tier_or_skip();
	kh_keys();
	te_start(&e);
	install(7, 1);

	/* Unregistered address: passes. Registered, no grant: EPERM. */
	cr_assert_eq(te_connect(&e, 0, TE_OTHER_ADDR, TE_TCP_PORT, false), 0);
	denied = kh_counter(EG_K_DENY_NO_GRANT);
	cr_assert_eq(te_connect(&e, 1, TE_GUEST_ADDR, TE_TCP_PORT, false), -EPERM);
	cr_assert_eq(kh_counter(EG_K_DENY_NO_GRANT), denied + 1);
	cr_assert_geq(kh_events((__u32)e.gateway, EG_K_DENY_NO_GRANT), 1, "no denial event");

	/* A port outside the profile is a Deny, and grants nothing. */
	cap(tok, sizeof(tok), 7, "7002/tcp");
	cr_assert_eq(admit(&e, tok, out, sizeof(out)), 4, "admit 7002/tcp: %s", out);
	cr_assert(strstr(out, "port-not-allowed"), "%s", out);
	cr_assert_eq(te_connect(&e, 1, TE_GUEST_ADDR, TE_TCP_PORT + 2, false), -EPERM);

	/* The grant: TCP 7000 only. */
	cap(tok, sizeof(tok), 7, "7000/tcp");
	cr_assert_eq(admit(&e, tok, out, sizeof(out)), 0, "admit 7000/tcp: %s", out);
	cr_assert_eq(te_connect(&e, 2, TE_GUEST_ADDR, TE_TCP_PORT, false), 0);
	cr_assert_eq(te_send(&e, 2), 0);
	cr_assert_eq(te_recv(&e, 2), 1, "echo through the admitted stream");
	/* Same sandbox, a profile port not granted: EPERM. */
	cr_assert_eq(te_connect(&e, 3, TE_GUEST_ADDR, TE_TCP_PORT + 3, false), -EPERM);
	/* The grant is TCP: UDP to the same port is not covered. */
	cr_assert_eq(te_connect(&e, 4, TE_GUEST_ADDR, TE_TCP_PORT, true), -EPERM);
	/* v4-mapped v6 reaches the v4 address, and is checked as it. */
	cr_assert_eq(te_connect(&e, 5, "::ffff:127.0.0.2", TE_TCP_PORT + 3, false), -EPERM);

	/* Execution 8 installed: the grant of 7 is dead at once (and, dead,
	 * swept from eg_service_grants by the install's revocation pass). */
	install(8, 1);
	denied = kh_counter(EG_K_DENY_NO_GRANT);
	cr_assert_eq(te_connect(&e, 6, TE_GUEST_ADDR, TE_TCP_PORT, false), -EPERM);
	cr_assert_eq(kh_counter(EG_K_DENY_NO_GRANT), denied + 1);
	/* A token for 7 now refreshes the route and grants nothing. */
	cr_assert_eq(admit(&e, tok, out, sizeof(out)), 3, "stale admit: %s", out);
	cap(tok, sizeof(tok), 8, "7000/tcp");
	cr_assert_eq(admit(&e, tok, out, sizeof(out)), 0, "admit 8: %s", out);
	cr_assert_eq(te_connect(&e, 6, TE_GUEST_ADDR, TE_TCP_PORT, false), 0);

	/* Retired: fail closed. */
	retire();
	denied = kh_counter(EG_K_DENY_RETIRED);
	cr_assert_eq(te_connect(&e, 7, TE_GUEST_ADDR, TE_TCP_PORT, false), -EPERM);
	cr_assert_eq(kh_counter(EG_K_DENY_RETIRED), denied + 1);
}

/* The ServicePort profile an install registered is what list and show
 * print, in text and in JSON, and what install's own report carries. */
/* guarantees: none */
Test(tcp, list_and_show_print_the_serviceport_profile)
{
	static const char *const forms[][3] = {
	    {"list", NULL, NULL}, {"list", "--json", NULL}, {"show", "--sandbox", SANDBOX}};
	const char *ports_text = " ports 7000/tcp,7001/udp,7003/tcp service-addrs ";
	const char *ports_json = "\"ports\":[{\"port\":7000,\"proto\":\"tcp\"},{\"port\":7001,"
				 "\"proto\":\"udp\"},{\"port\":7003,\"proto\":\"tcp\"}],"
				 "\"service_addrs\":[";
	char out[8192], me[16];
	int rc;

	tcp_tier_or_skip();
	snprintf(me, sizeof(me), "%d", (int)getpid());
	rc = kh_cli(out, sizeof(out), "install", "--sandbox", SANDBOX, "--worker", WORKER,
		    "--generation", "7", "--activation", "1", "--bridge-pid", me, "--service-addr",
		    TE_GUEST_ADDR, "--service-addr", "::1", "--service-port", "7000/tcp",
		    "--service-port", "7001/udp", "--service-port", "7003/tcp", "--json", NULL);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert(strstr(out, ports_json), "install --json: %s", out);
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]) + 1; i++) {
		bool json = i == 1 || i == 3;

		if (i < 3)
			rc = kh_cli(out, sizeof(out), forms[i][0], forms[i][1], forms[i][2], NULL);
		else
			rc = kh_cli(out, sizeof(out), "show", "--sandbox", SANDBOX, "--json", NULL);
		cr_assert_eq(rc, 0, "form %zu: %s", i, out);
		cr_assert(strstr(out, json ? ports_json : ports_text), "form %zu: %s", i, out);
		/* Both addresses, in the map's order. */
		cr_assert(strstr(out, json ? "\"" TE_GUEST_ADDR "\"" : TE_GUEST_ADDR), "%s", out);
		cr_assert(strstr(out, json ? "\"::1\"" : "::1"), "%s", out);
	}
	/* Retired, the profile is still the record's; forgotten, it is gone. */
	rc = kh_cli(out, sizeof(out), "retire", "--sandbox", SANDBOX, "--json", NULL);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert(strstr(out, ports_json), "retire --json: %s", out);
	cr_assert_eq(kh_cli(out, sizeof(out), "forget", "--sandbox", SANDBOX, "--json", NULL), 0,
		     "%s", out);
	cr_assert(strstr(out, "\"endpoints_removed\":2,"), "two addresses: %s", out);
	cr_assert_eq(kh_cli(out, sizeof(out), "list", "--json", NULL), 0, "%s", out);
	cr_assert_str_eq(out, "{\"schema_version\":2,\"records\":[]}\n");
}

/* guarantees: tcp-serviceport-profile */
Test(tcp, connect6_and_udp_sendmsg_are_checked)
{
	char tok[1024], out[2048];
	struct te_env e;

	tcp_tier_or_skip();
	kh_keys();
	te_start(&e);
	install(7, 1);

	cr_assert_eq(te_connect(&e, 0, "::1", TE_TCP_PORT, false), -EPERM);
	cr_assert_eq(te_sendto(&e, TE_GUEST_ADDR, TE_UDP_PORT), -EPERM);
	cr_assert_eq(te_sendto(&e, "::1", TE_UDP_PORT), -EPERM);
	cr_assert_eq(te_connect(&e, 1, TE_GUEST_ADDR, TE_UDP_PORT, true), -EPERM);
	cr_assert_eq(te_udp_count(&e), 0, "a denied datagram reached the guest");
	/* Unregistered: untouched. */
	cr_assert_eq(te_sendto(&e, TE_OTHER_ADDR, TE_UDP_PORT), 0);

	cap(tok, sizeof(tok), 7, "7001/udp");
	cr_assert_eq(admit(&e, tok, out, sizeof(out)), 0, "admit 7001/udp: %s", out);
	cr_assert_eq(te_sendto(&e, TE_GUEST_ADDR, TE_UDP_PORT), 0);
	cr_assert_eq(te_sendto(&e, "::1", TE_UDP_PORT), 0);
	cr_assert_eq(te_connect(&e, 1, TE_GUEST_ADDR, TE_UDP_PORT, true), 0);
	cr_assert_eq(te_send(&e, 1), 0);
	cr_assert_eq(te_udp_count(&e), 4, "guest datagrams (1 unregistered + 3 granted)");
	/* A UDP grant does not open TCP. */
	cr_assert_eq(te_connect(&e, 2, "::1", TE_TCP_PORT, false), -EPERM);
	cap(tok, sizeof(tok), 7, "7000/tcp");
	cr_assert_eq(admit(&e, tok, out, sizeof(out)), 0, "admit 7000/tcp: %s", out);
	cr_assert_eq(te_connect(&e, 2, "::1", TE_TCP_PORT, false), 0);
	cr_assert_eq(te_send(&e, 2), 0);
	cr_assert_eq(te_recv(&e, 2), 1);
}

/* A gateway granted TCP 7000 of execution 7. */
static void start_granted(struct te_env *e)
{
	char tok[1024], out[2048];

	tcp_tier_or_skip();
	kh_keys();
	te_start(e);
	install(7, 1);
	cap(tok, sizeof(tok), 7, "7000/tcp");
	cr_assert_eq(admit(e, tok, out, sizeof(out)), 0, "admit: %s", out);
}

/* What each end of the destroyed stream in the gateway's slot sees. */
static void assert_destroyed(struct te_env *e, int slot)
{
	int st = te_peer_state(e, slot, TE_CUT_WAIT_MS);

	cr_assert_eq(st, -ECONNRESET, "guest end of slot %d: state %d", slot, st);
	cr_assert_eq(te_send(e, slot), -ECONNABORTED, "gateway end %d, first call", slot);
	cr_assert_eq(te_send(e, slot), -EPIPE, "gateway end %d, next call", slot);
	cr_assert_eq(te_recv(e, slot), 0, "gateway end %d reads EOF after the error", slot);
}

/* The stream's tag, and what each end sees when it is cut (by the method
 * this kernel offers): the gateway's next send fails with ECONNABORTED
 * (the error bpf_sock_destroy and SOCK_DESTROY set) and
 * the one after with EPIPE; the guest's read fails with ECONNRESET (the
 * RST). The loader runs in the host namespace, the stream lives in the
 * gateway's. */
/* guarantees: tcp-stream-revocation */
Test(tcp, install_of_a_new_generation_destroys_stale_streams_in_the_gateway_netns)
{
	int tags_fd = kh.maps.fd[EG_MAP_INET_TAGS], state;
	unsigned long long epoch;
	struct te_env e;

	start_granted(&e);
	cr_assert_eq(te_connect(&e, 0, TE_GUEST_ADDR, TE_TCP_PORT, false), 0);
	cr_assert_eq(te_connect(&e, 1, TE_OTHER_ADDR, TE_TCP_PORT, false), 0);
	cr_assert_eq(te_send(&e, 0), 0);
	cr_assert_eq(te_recv(&e, 0), 1);
	cr_assert_eq(te_tag(&e, 0, tags_fd, &epoch, &state), 0, "admitted stream has no tag");
	cr_assert_eq(epoch, 1);
	cr_assert_eq(state, EG_INET_ESTABLISHED, "sockops did not mark it established");
	cr_assert_eq(te_tag(&e, 1, tags_fd, NULL, NULL), -ENOENT, "unregistered stream tagged");

	/* A new attempt of the same generation keeps the stream. */
	cr_assert_eq(install(7, 2), 0);
	cr_assert_eq(te_send(&e, 0), 0);
	cr_assert_eq(te_recv(&e, 0), 1);

	/* Generation 8: cut, in the gateway's namespace. */
	cr_assert_eq(install(8, 1), 1, "install reports one TCP stream cut");
	cr_assert_str_eq(last_method, expected_method());
	assert_destroyed(&e, 0);
	/* The stream to an unregistered address is untouched. */
	cr_assert_eq(te_send(&e, 1), 0);
	cr_assert_eq(te_recv(&e, 1), 1);
	cr_assert_eq(te_peer_state(&e, 1, 0), 1, "the unregistered stream's guest end");
}

/* eg_inet_tags is keyed by the socket's cookie and preallocated: the tag
 * an admitted connect inserts is deleted by the cgroup sock_release
 * program when the socket is closed, so the map holds open sockets only. */
/* guarantees: tcp-stream-revocation */
Test(tcp, a_tag_lives_as_long_as_its_socket)
{
	int tags_fd = kh.maps.fd[EG_MAP_INET_TAGS], state;
	unsigned long long epoch, cookie;
	struct eg_inet_tag tag;
	__u64 key;
	struct te_env e;

	start_granted(&e);
	cr_assert_eq(te_connect(&e, 0, TE_GUEST_ADDR, TE_TCP_PORT, false), 0);
	cr_assert_eq(te_send(&e, 0), 0);
	cr_assert_eq(te_recv(&e, 0), 1);
	cr_assert_eq(te_tag(&e, 0, tags_fd, &epoch, &state), 0, "admitted stream has no tag");
	cr_assert_eq(state, EG_INET_ESTABLISHED);
	cr_assert_eq(te_cookie(&e, 0, &cookie), 0);
	key = cookie;
	cr_assert_eq(bpf_map_lookup_elem(tags_fd, &key, &tag), 0, "no tag under cookie %llu",
		     cookie);
	cr_assert_eq(tag.port, TE_TCP_PORT);
	cr_assert_eq(te_close(&e, 0), 0);
	cr_assert_eq(bpf_map_lookup_elem(tags_fd, &key, &tag), -ENOENT,
		     "the tag of closed socket %llu is still in eg_inet_tags", cookie);
}

/* A full eg_inet_tags denies an admitted connect (deny-no-tag: an untagged
 * stream would escape revocation), status shows the map full, and one
 * released tag makes room again. The map is filled with cookies no socket
 * has (the kernel counts cookies up from 1). */
/* guarantees: tcp-stream-revocation */
Test(tcp, a_full_tag_map_denies_the_connect_until_a_tag_is_released)
{
	int tags_fd = kh.maps.fd[EG_MAP_INET_TAGS];
	struct eg_inet_tag fake = {.state = EG_INET_CONNECTING};
	char out[16384], want[128];
	unsigned filled = 0;
	__u64 key, before;
	struct te_env e;

	start_granted(&e);
	for (key = 1ULL << 62;; key++) {
		if (!bpf_map_update_elem(tags_fd, &key, &fake, BPF_NOEXIST)) {
			filled++;
			continue;
		}
		cr_assert_eq(errno, E2BIG, "filling eg_inet_tags: %s", strerror(errno));
		break;
	}
	cr_assert_eq(filled, EG_MAX_INET_TAGS, "eg_inet_tags held %u entries before the fill",
		     EG_MAX_INET_TAGS - filled);
	kh_cli(out, sizeof(out), "status", NULL);
	snprintf(want, sizeof(want), "%-20s %u / %u", "eg_inet_tags", EG_MAX_INET_TAGS,
		 EG_MAX_INET_TAGS);
	cr_assert(strstr(out, want), "status does not show a full eg_inet_tags: %s", out);

	before = kh_counter(EG_K_DENY_NO_TAG);
	cr_assert_eq(te_connect(&e, 0, TE_GUEST_ADDR, TE_TCP_PORT, false), -EPERM,
		     "an admitted connect passed untagged");
	cr_assert_eq(kh_counter(EG_K_DENY_NO_TAG), before + 1);
	cr_assert_geq(kh_events((__u32)e.gateway, EG_K_DENY_NO_TAG), 1, "no denial event");
	/* Unregistered addresses need no tag. */
	cr_assert_eq(te_connect(&e, 1, TE_OTHER_ADDR, TE_TCP_PORT, false), 0);

	key = 1ULL << 62;
	cr_assert_eq(bpf_map_delete_elem(tags_fd, &key), 0);
	cr_assert_eq(te_connect(&e, 0, TE_GUEST_ADDR, TE_TCP_PORT, false), 0);
	cr_assert_eq(te_tag(&e, 0, tags_fd, NULL, NULL), 0, "admitted stream has no tag");
	cr_assert_eq(te_send(&e, 0), 0);
	cr_assert_eq(te_recv(&e, 0), 1);
}

/* The tag map's capacity is the operator's (load --inet-tags): a reload
 * without the flag keeps the pinned map's, one with another capacity is
 * refused with the reason and leaves the pins as they were, and only a
 * load after an unload changes it. */
/* guarantees: none */
Test(tcp, load_inet_tags_sizes_the_tag_map_and_a_reload_keeps_it)
{
	char out[16384], want[128];
	int rc;

	tcp_tier_or_skip();
	snprintf(want, sizeof(want), "%-20s 0 / %u", "eg_inet_tags", EG_MAX_INET_TAGS);
	kh_cli(out, sizeof(out), "status", NULL);
	cr_assert(strstr(out, want), "default capacity not in status: %s", out);

	rc = kh_cli(out, sizeof(out), "load", "--cgroup", kh.cgroup, "--inet-tags", "16384", NULL);
	cr_assert_eq(rc, 1, "resize while pinned: exit %d: %s", rc, out);
	cr_assert(strstr(out, "eg_inet_tags holds 65536") && strstr(out, "execgate unload"), "%s",
		  out);
	kh_cli(out, sizeof(out), "status", NULL);
	cr_assert(strstr(out, want), "a refused resize changed the map: %s", out);
	rc = kh_cli(out, sizeof(out), "load", "--cgroup", kh.cgroup, "--inet-tags", "1000", NULL);
	cr_assert_eq(rc, 2, "below the minimum: exit %d: %s", rc, out);
	cr_assert(strstr(out, "--inet-tags 1000: not a number from 1024 to 1048576"), "%s", out);
	/* The library's own check, for callers other than the CLI: before
	 * anything is probed or loaded. */
	{
		char err[512] = "";

		rc = eg_load_sized(kh.pin_dir, kh.state_dir, kh.cgroup, NULL, EG_INET_TAGS_MAX + 1,
				   err, sizeof(err));
		cr_assert_eq(rc, -EINVAL, "eg_load_sized(%u): %d %s", EG_INET_TAGS_MAX + 1, rc,
			     err);
		cr_assert(strstr(err, "inet tags 1048577: not between 1024 and 1048576"), "%s",
			  err);
	}

	rc = kh_cli(out, sizeof(out), "unload", NULL);
	cr_assert_eq(rc, 0, "unload: %s", out);
	rc = kh_cli(out, sizeof(out), "load", "--cgroup", kh.cgroup, "--inet-tags", "16384", NULL);
	cr_assert_eq(rc, 0, "load --inet-tags 16384: exit %d: %s", rc, out);
	snprintf(want, sizeof(want), "%-20s 0 / 16384", "eg_inet_tags");
	kh_cli(out, sizeof(out), "status", NULL);
	cr_assert(strstr(out, want), "status: %s", out);
	rc = kh_cli(out, sizeof(out), "load", "--cgroup", kh.cgroup, NULL);
	cr_assert_eq(rc, 0, "reload without --inet-tags: exit %d: %s", rc, out);
	kh_cli(out, sizeof(out), "status", NULL);
	cr_assert(strstr(out, want), "a reload did not keep the pinned capacity: %s", out);
	rc = kh_cli(out, sizeof(out), "load", "--cgroup", kh.cgroup, "--inet-tags", "16384", NULL);
	cr_assert_eq(rc, 0, "reload naming the pinned capacity: exit %d: %s", rc, out);
}

/* guarantees: tcp-stream-revocation */
Test(tcp, retire_destroys_every_stream_of_the_sandbox)
{
	struct te_env e;
	int n;

	start_granted(&e);
	n = te_connect_many(&e, 0, 100, TE_GUEST_ADDR, TE_TCP_PORT);
	cr_assert_eq(n, 100, "connects: %d", n);
	n = te_connect_many(&e, 100, 50, "::1", TE_TCP_PORT);
	cr_assert_eq(n, 50, "v6 connects: %d", n);
	cr_assert_eq(te_send_many(&e, 0, 150), 0);
	/* The guest must have accepted each end read below before the cut: a
	 * connection reset in the accept queue is never accepted (accept()
	 * fails with ECONNABORTED), so its state could not be read (-ENOENT,
	 * seen once in a loaded make check). The echo says it was accepted. */
	for (int k = 0; k < 150; k += 37)
		cr_assert_eq(te_recv(&e, k), 1, "echo on slot %d", k);

	cr_assert_eq(retire(), 150, "retire reports 150 TCP streams cut");
	cr_assert_str_eq(last_method, expected_method());
	cr_assert_eq(te_send_many(&e, 0, 150), 150, "a cut stream still sends");
	for (int k = 0; k < 150; k += 37) {
		int st = te_peer_state(&e, k, TE_CUT_WAIT_MS);

		cr_assert_eq(st, -ECONNRESET, "guest end %d: %d (%s)", k, st,
			     st < 0 ? strerror(-st) : "open or EOF");
	}
	/* Nothing left to cut. */
	install(9, 1);
	cr_assert_eq(retire(), 0);
}

/* slot: connect to addr, then one echo, so the guest has accepted it: its
 * k-th accepted connection is then the k-th connected slot. */
static void connect_echo(struct te_env *e, int slot, const char *addr)
{
	cr_assert_eq(te_connect(e, slot, addr, TE_TCP_PORT, false), 0, "connect slot %d", slot);
	cr_assert_eq(te_send(e, slot), 0);
	cr_assert_eq(te_recv(e, slot), 1, "echo on slot %d", slot);
}

/* The sock_diag fallback, forced where bpf_sock_destroy exists too: the
 * iter/tcp finder yields each stale socket's 4-tuple and cookie, and a
 * SOCK_DESTROY request in the gateway's namespace destroys it. Measured:
 * each end sees what bpf_sock_destroy gives it (both abort the socket
 * with ECONNABORTED): the gateway's next send ECONNABORTED, then EPIPE,
 * then EOF; the guest's read ECONNRESET. In process, as test_revoke does
 * for the Unix fallback: the CLI would take the kfunc. */
/* guarantees: tcp-stream-revocation */
Test(tcp, sock_diag_fallback_destroys_stale_streams_in_the_gateway_netns)
{
	const struct eg_revoke_count *tcp;
	struct eg_revoke_report rep;
	struct eg_exec_record after;
	struct eg_runtime rt;
	__u8 sb[EG_ID_BYTES];
	struct te_env e;
	char err[512];

	start_granted(&e);
	connect_echo(&e, 0, TE_GUEST_ADDR);
	connect_echo(&e, 1, TE_OTHER_ADDR);
	connect_echo(&e, 2, "::1");
	cr_assert_eq(te_connect_many(&e, 3, 100, TE_GUEST_ADDR, TE_TCP_PORT), 100);

	cr_assert_eq(eg_uuid_parse(SANDBOX, sb), 0);
	cr_assert_eq(eg_runtime_open(&rt, kh.pin_dir, kh.state_dir, true, err, sizeof(err)), 0,
		     "%s", err);
	eg_revoke_tcp_force_diag(true);
	tcp = &rep.kind[EG_REVOKE_TCP];
	/* Current epoch: nothing is stale. */
	cr_assert_eq(eg_revoke_stale(&rt, sb, 1, false, &rep), 0, "%s", rep.err);
	cr_assert_str_eq(tcp->method, EG_TCP_METHOD_DIAG);
	cr_assert_eq(tcp->cut, 0);
	for (int k = 0; k <= 2; k++) {
		cr_assert_eq(te_send(&e, k), 0, "slot %d: a current stream was cut", k);
		cr_assert_eq(te_recv(&e, k), 1);
	}

	cr_assert_eq(eg_retire_report(&rt, sb, &after, &rep, err, sizeof(err)), 0, "%s", err);
	eg_revoke_tcp_force_diag(false);
	eg_runtime_close(&rt);
	cr_assert_str_eq(rep.err, "");
	cr_assert_str_eq(tcp->method, EG_TCP_METHOD_DIAG);
	cr_assert_eq(tcp->cut, 102, "retire cut %u TCP streams, not 102", tcp->cut);
	cr_assert_eq(tcp->unreachable, 0);
	assert_destroyed(&e, 0); /* v4 */
	assert_destroyed(&e, 2); /* v6 */
	cr_assert_eq(te_send_many(&e, 3, 100), 100, "a cut stream still sends");
	/* The stream to an unregistered address is untouched. */
	cr_assert_eq(te_send(&e, 1), 0);
	cr_assert_eq(te_recv(&e, 1), 1);
	cr_assert_eq(te_peer_state(&e, 1, 0), 1, "the unregistered stream's guest end");
}

/* `execgate events` names the destination of a denied inet connect or
 * send: address, port and protocol, in JSON and in text, and the hook
 * (connect4 / sendmsg6). */
/* guarantees: tcp-serviceport-profile */
Test(tcp, denial_events_carry_the_destination)
{
	char out[8192];
	struct te_env e;
	int rc;

	tcp_tier_or_skip();
	kh_keys();
	te_start(&e);
	install(7, 1);
	cr_assert_eq(te_connect(&e, 0, TE_GUEST_ADDR, TE_TCP_PORT, false), -EPERM);
	rc = kh_cli(out, sizeof(out), "events", "--json", "--drain", NULL);
	cr_assert_eq(rc, 0, "events: exit %d: %s", rc, out);
	cr_expect(strstr(out, "\"hook\":\"connect4\""), "%s", out);
	cr_expect(strstr(out, "\"inet\":{\"addr\":\"" TE_GUEST_ADDR "\",\"port\":7000,"
			      "\"proto\":\"tcp\"}"),
		  "%s", out);
	cr_expect(strstr(out, "\"sandbox\":\"" SANDBOX "\""), "%s", out);

	cr_assert_eq(te_sendto(&e, "::1", TE_UDP_PORT), -EPERM);
	rc = kh_cli(out, sizeof(out), "events", "--drain", NULL);
	cr_assert_eq(rc, 0, "events: exit %d: %s", rc, out);
	cr_expect(strstr(out, "sendmsg6: deny-no-grant sandbox " SANDBOX), "%s", out);
	cr_expect(strstr(out, "inet ::1 port 7001/udp"), "%s", out);
}

/* The CLI's install report warns, as the API's does, about endpoints no
 * loaded tier enforces, on stderr and in its JSON. */
/* guarantees: none */
Test(tcp, install_warns_about_endpoints_no_tier_enforces)
{
	char out[8192], me[16], status[8192];
	int rc;

	tcp_tier_or_skip();
	snprintf(me, sizeof(me), "%d", (int)getpid());
	rc = kh_cli(out, sizeof(out), "install", "--sandbox", SANDBOX, "--worker", WORKER,
		    "--generation", "1", "--activation", "1", "--bridge-pid", me, "--service-port",
		    "7000/tcp", "--vsock", "3:5000", "--json", NULL);
	cr_assert_eq(rc, 0, "install: exit %d: %s", rc, out);
	cr_expect(strstr(out, "warning: ports-without-service-addrs: "), "%s", out);
	cr_expect(strstr(out, "\"warnings\":[") &&
		      strstr(out, "{\"code\":\"ports-without-service-addrs\""),
		  "%s", out);
	kh_cli(status, sizeof(status), "status", NULL);
	if (strstr(status, "tier lsm: loaded"))
		cr_expect(!strstr(out, "vsock-not-enforced"), "lsm loaded, yet: %s", out);
	else
		cr_expect(strstr(out, "warning: vsock-not-enforced: ") &&
			      strstr(out, "{\"code\":\"vsock-not-enforced\""),
			  "no lsm tier, no warning: %s", out);
}
