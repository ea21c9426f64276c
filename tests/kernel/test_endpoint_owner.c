// SPDX-License-Identifier: Apache-2.0
/* Who may register a Unix endpoint, on the host kernel, through the CLI:
 * install resolves endpoint paths without following a symbolic link, and
 * a socket (by its inode, whatever name reaches it) that belongs to another
 * active sandbox is refused like its path is. Sandbox A is active; B's
 * install names A's VMM socket through a link in B's own directory, a
 * linked directory, or a hard link. Each is refused with nothing written,
 * A keeps its entries and its bridge, and B's retire and forget leave A's
 * entries alone. The same attack against the LSM tier runs in
 * test_lsm_inode.c. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "core/ids.h"
#include "harness.h"
#include "restrict.h"
#include "loader/endpoints/lsm_unix_inode.h"
#include "loader/endpoints/path_filter.h"

#define SANDBOX_A "5f0c2c1e-7a4b-4c1d-9e3f-0000000000a0"
#define SANDBOX_B "5f0c2c1e-7a4b-4c1d-9e3f-0000000000b0"
#define WORKER	  "a0000000-0000-4000-8000-00000000000a"

/* Many CLI runs: under TCG in the VM matrix one test takes over a minute. */
TestSuite(endpoint_owner, .init = kh_setup_shared, .fini = kh_teardown, .timeout = 240);

/* `execgate install` of sandbox at generation 7 with one VMM socket; the
 * exit status, with the output in out. */
static int install(const char *sandbox, pid_t bridge, pid_t vmm, const char *vmm_sock, char *out,
		   size_t size)
{
	char b[16], v[16];

	snprintf(b, sizeof(b), "%d", (int)bridge);
	snprintf(v, sizeof(v), "%d", (int)vmm);
	return kh_cli(out, size, "install", "--sandbox", sandbox, "--worker", WORKER,
		      "--generation", "7", "--activation", "1", "--bridge-pid", b, "--vmm-pid", v,
		      "--vmm-socket", vmm_sock, NULL);
}

/* The eg_inode_endpoints entry of the socket bound at path: 0 and *ep, or
 * -ENOENT. */
static int inode_entry(const char *path, struct eg_endpoint *ep)
{
	struct eg_inode_key key;
	int fd, rc;

	rc = eg_unix_bound_inode(path, &key, &fd);
	cr_assert_eq(rc, 0, "%s: not a listening socket: %s", path, strerror(-rc));
	rc = eg_endpoint_read(&kh.maps, EG_MAP_INODE_ENDPOINTS, &key, ep);
	close(fd);
	return rc;
}

static void assert_owned_by(const char *path, const char *sandbox, __u32 role)
{
	struct eg_endpoint ep;
	__u8 id[EG_ID_BYTES];

	cr_assert_eq(eg_uuid_parse(sandbox, id), 0);
	cr_assert_eq(inode_entry(path, &ep), 0, "%s: no inode entry", path);
	cr_assert_eq(memcmp(ep.sandbox, id, EG_ID_BYTES), 0, "%s: inode entry of another sandbox",
		     path);
	cr_assert_eq(ep.role, role);
}

static bool path_registered(const char *path)
{
	struct eg_path_key key;
	struct eg_endpoint ep;

	cr_assert_eq(eg_path_key_make(path, &key), 0);
	return eg_endpoint_read(&kh.maps, EG_MAP_ENDPOINTS, &key, &ep) == 0;
}

/* B left nothing behind: no record, no path entry. */
static void assert_b_not_installed(const char *b_path)
{
	char out[1024];
	int rc;

	rc = kh_cli(out, sizeof(out), "show", "--sandbox", SANDBOX_B, NULL);
	cr_assert_eq(rc, 7, "B has a record after a refused install: exit %d: %s", rc, out);
	cr_assert(!path_registered(b_path), "%s registered by a refused install", b_path);
}

static void link_to_another_sandboxs_socket(void)
{
	char a_dir[160], b_dir[160], a_vmm[200], b_link[200], b_jail[200], b_via_jail[220],
	    b_later[220], out[2048];
	struct kh_child bridge_a, bridge_b, other;
	pid_t fc_a, fc_b;
	int rc;

	snprintf(a_dir, sizeof(a_dir), "%s", kh_path("a"));
	snprintf(b_dir, sizeof(b_dir), "%s", kh_path("b"));
	cr_assert_eq(mkdir(a_dir, 0700), 0);
	cr_assert_eq(mkdir(b_dir, 0700), 0);
	snprintf(a_vmm, sizeof(a_vmm), "%s/vmm.sock", a_dir);
	snprintf(b_link, sizeof(b_link), "%s/vmm.sock", b_dir);
	snprintf(b_jail, sizeof(b_jail), "%s/jail", b_dir);
	snprintf(b_via_jail, sizeof(b_via_jail), "%s/vmm.sock", b_jail);
	snprintf(b_later, sizeof(b_later), "%s/later.sock", b_jail);
	fc_a = kh_listener_start(a_vmm);
	fc_b = kh_listener_start(kh_path("b-own.sock"));
	kh_child_start(&bridge_a, true);
	kh_child_start(&bridge_b, true);
	kh_child_start(&other, true);
	rc = install(SANDBOX_A, bridge_a.pid, fc_a, a_vmm, out, sizeof(out));
	cr_assert_eq(rc, 0, "install A: %s", out);
	assert_owned_by(a_vmm, SANDBOX_A, EG_ROLE_VMM);

	/* A link in B's directory to A's socket. */
	cr_assert_eq(symlink(a_vmm, b_link), 0, "symlink: %s", strerror(errno));
	rc = install(SANDBOX_B, bridge_b.pid, fc_b, b_link, out, sizeof(out));
	cr_assert_eq(rc, 1, "install through a symlink: exit %d: %s", rc, out);
	cr_assert(strstr(out, "a component of the path is a symbolic link"), "%s", out);
	cr_assert(strstr(out, b_link), "the message names the path: %s", out);
	assert_b_not_installed(b_link);

	/* A directory of B's replaced by a link to A's: the socket's own name
	 * is no link, a component above it is. Refused whether or not a
	 * socket is bound there yet. */
	cr_assert_eq(symlink(a_dir, b_jail), 0);
	rc = install(SANDBOX_B, bridge_b.pid, fc_b, b_via_jail, out, sizeof(out));
	cr_assert_eq(rc, 1, "install through a linked directory: exit %d: %s", rc, out);
	cr_assert(strstr(out, "a component of the path is a symbolic link"), "%s", out);
	assert_b_not_installed(b_via_jail);
	rc = install(SANDBOX_B, bridge_b.pid, fc_b, b_later, out, sizeof(out));
	cr_assert_eq(rc, 1, "install of an unbound path through a link: exit %d: %s", rc, out);
	assert_b_not_installed(b_later);

	/* A's entry is A's, and A's VMM admits A's bridge only. */
	assert_owned_by(a_vmm, SANDBOX_A, EG_ROLE_VMM);
	cr_assert_eq(kh_child_connect(&bridge_a, a_vmm, NULL, NULL), 0, "A's bridge");
	cr_assert_eq(kh_child_connect(&other, a_vmm, NULL, NULL), -EPERM, "another process");
	cr_assert_eq(kh_child_connect(&bridge_b, a_vmm, NULL, NULL), -EPERM, "B's bridge");
}

/* guarantees: unix-vmm-socket-bridge-only */
Test(endpoint_owner, a_link_to_another_sandboxs_socket_is_refused)
{
	link_to_another_sandboxs_socket();
}

/* The same under the shipped unit's RestrictSUIDSGID=yes, whose seccomp
 * filter answers openat2 with ENOSYS: the path is then walked a component
 * at a time (loader/endpoints/lsm_unix_inode.c), and a link is refused all the same. */
/* guarantees: unix-vmm-socket-bridge-only */
Test(endpoint_owner, a_link_is_refused_without_openat2)
{
	kh_child_restrict = KR_DENY_OPENAT2;
	link_to_another_sandboxs_socket();
}

/* guarantees: unix-vmm-socket-bridge-only */
Test(endpoint_owner, another_active_sandboxs_socket_is_refused_by_any_name)
{
	char a_vmm[200], b_hard[200], b_own[200], out[2048];
	struct kh_child bridge_a, bridge_b, other;
	pid_t fc_a, fc_b;
	int rc, direct;

	snprintf(a_vmm, sizeof(a_vmm), "%s", kh_path("a-vmm.sock"));
	snprintf(b_hard, sizeof(b_hard), "%s", kh_path("b-vmm.sock"));
	snprintf(b_own, sizeof(b_own), "%s", kh_path("b-own.sock"));
	fc_a = kh_listener_start(a_vmm);
	fc_b = kh_listener_start(b_own);
	kh_child_start(&bridge_a, true);
	kh_child_start(&bridge_b, true);
	kh_child_start(&other, true);
	rc = install(SANDBOX_A, bridge_a.pid, fc_a, a_vmm, out, sizeof(out));
	cr_assert_eq(rc, 0, "install A: %s", out);

	/* A's path itself: the path conflict. */
	direct = install(SANDBOX_B, bridge_b.pid, fc_b, a_vmm, out, sizeof(out));
	cr_assert_eq(direct, 1, "install of A's path: exit %d: %s", direct, out);
	cr_assert(strstr(out, "registered to active sandbox " SANDBOX_A), "%s", out);

	/* Another name of the same socket, with no link to refuse: the inode
	 * is A's, and the answer is the path conflict's. */
	cr_assert_eq(link(a_vmm, b_hard), 0, "link: %s", strerror(errno));
	rc = install(SANDBOX_B, bridge_b.pid, fc_b, b_hard, out, sizeof(out));
	cr_assert_eq(rc, direct, "install of a hard link to A's socket: exit %d: %s", rc, out);
	cr_assert(strstr(out, "its socket (inode "), "%s", out);
	cr_assert(strstr(out, "registered to active sandbox " SANDBOX_A), "%s", out);
	assert_b_not_installed(b_hard);
	assert_owned_by(a_vmm, SANDBOX_A, EG_ROLE_VMM);

	/* B with a socket of its own, retired and forgotten: A's entries stay. */
	rc = install(SANDBOX_B, bridge_b.pid, fc_b, b_own, out, sizeof(out));
	cr_assert_eq(rc, 0, "install B: %s", out);
	assert_owned_by(b_own, SANDBOX_B, EG_ROLE_VMM);
	rc = kh_cli(out, sizeof(out), "retire", "--sandbox", SANDBOX_B, NULL);
	cr_assert_eq(rc, 0, "retire B: %s", out);
	rc = kh_cli(out, sizeof(out), "forget", "--sandbox", SANDBOX_B, NULL);
	cr_assert_eq(rc, 0, "forget B: %s", out);
	cr_assert(!path_registered(b_own));
	assert_owned_by(a_vmm, SANDBOX_A, EG_ROLE_VMM);
	cr_assert(path_registered(a_vmm));
	cr_assert_eq(kh_child_connect(&bridge_a, a_vmm, NULL, NULL), 0, "A's bridge");
	cr_assert_eq(kh_child_connect(&other, a_vmm, NULL, NULL), -EPERM, "another process");

	/* Retired, A's socket may be taken over: the rule paths follow. */
	rc = kh_cli(out, sizeof(out), "retire", "--sandbox", SANDBOX_A, NULL);
	cr_assert_eq(rc, 0, "retire A: %s", out);
	rc = install(SANDBOX_B, bridge_b.pid, fc_b, b_hard, out, sizeof(out));
	cr_assert_eq(rc, 0, "install B on a retired sandbox's socket: %s", out);
	assert_owned_by(a_vmm, SANDBOX_B, EG_ROLE_VMM);
}
