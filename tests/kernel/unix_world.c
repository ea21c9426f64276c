// SPDX-License-Identifier: Apache-2.0
/* The Unix world and its situations of unix_world.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <criterion/criterion.h>
#include "core/ids.h"
#include "loader/endpoints/lsm_unix_inode.h"
#include "loader/endpoints/path_filter.h"
#include "loader/records/runtime.h"
#include "unix_world.h"

void uw_install(const struct unix_world *w, const char *gen)
{
	char b[16], v[16], out[2048];
	int rc;

	snprintf(b, sizeof(b), "%d", (int)w->bridge.pid);
	snprintf(v, sizeof(v), "%d", (int)w->fc);
	rc = kh_cli(out, sizeof(out), "install", "--sandbox", w->sandbox, "--worker", UW_WORKER,
		    "--generation", gen, "--activation", "1", "--bridge-pid", b, "--vmm-pid", v,
		    "--bridge-socket", w->bsock, "--vmm-socket", w->vsock, NULL);
	cr_assert_eq(rc, 0, "install: exit %d: %s", rc, out);
}

void uw_start(struct unix_world *w, const char *sandbox)
{
	memset(w, 0, sizeof(*w));
	w->sandbox = sandbox;
	w->bsock = kh_path("bridge.sock");
	w->vsock = kh_path("vmm.sock");
	w->fc = kh_listener_start(w->vsock);
	kh_child_start(&w->bridge, true);
	kh_child_start(&w->caller, true);
	cr_assert_eq(kh_child_listen(&w->bridge, w->bsock), 0);
	uw_install(w, "7");
}

struct eg_exec_record uw_record(const struct unix_world *w)
{
	struct eg_exec_record r;
	__u8 sb[EG_ID_BYTES];

	cr_assert_eq(eg_uuid_parse(w->sandbox, sb), 0);
	cr_assert_eq(eg_record_read(&kh.maps, sb, &r), 0, "reading the record");
	return r;
}

void uw_write_grant(pid_t pid, const struct eg_exec_record *rec, const __u8 *sandbox, __u64 epoch,
		    __u64 expiry)
{
	struct eg_grant g;

	memset(&g, 0, sizeof(g));
	g.key.proc = kh_proc_id(pid);
	memcpy(g.key.sandbox, sandbox ? sandbox : rec->sandbox, EG_ID_BYTES);
	g.generation = rec->generation;
	g.epoch = epoch;
	g.expiry_ns = expiry;
	g.scope = 1;
	cr_assert_eq(eg_grant_write(&kh.maps, &g), 0, "writing a grant");
}

void uw_mode(const char *m, const char *sandbox)
{
	char out[1024];
	int rc;

	if (sandbox)
		rc = kh_cli(out, sizeof(out), "mode", m, "--sandbox", sandbox, NULL);
	else
		rc = kh_cli(out, sizeof(out), "mode", m, NULL);
	cr_assert_eq(rc, 0, "execgate mode %s: exit %d: %s", m, rc, out);
}

const char *uw_not_bridge(struct unix_world *w)
{
	return w->vsock; /* the caller is not the registered bridge */
}

const char *uw_no_grant(struct unix_world *w)
{
	return w->bsock;
}

const char *uw_granted(struct unix_world *w)
{
	struct eg_exec_record r = uw_record(w);

	uw_write_grant(w->caller.pid, &r, NULL, r.epoch, eg_boottime_ns() + UW_ALIVE_NS);
	return w->bsock;
}

const char *uw_grant_other(struct unix_world *w)
{
	struct eg_exec_record r = uw_record(w);
	__u8 other[EG_ID_BYTES];

	memcpy(other, r.sandbox, EG_ID_BYTES);
	other[EG_ID_BYTES - 1] ^= 0x5a;
	uw_write_grant(w->caller.pid, &r, other, r.epoch, eg_boottime_ns() + UW_ALIVE_NS);
	return w->bsock;
}

const char *uw_grant_epoch(struct unix_world *w)
{
	struct eg_exec_record r;

	uw_install(w, "8"); /* epoch 2 */
	r = uw_record(w);
	uw_write_grant(w->caller.pid, &r, NULL, r.epoch - 1, eg_boottime_ns() + UW_ALIVE_NS);
	return w->bsock;
}

const char *uw_grant_expired(struct unix_world *w)
{
	struct eg_exec_record r = uw_record(w);

	uw_write_grant(w->caller.pid, &r, NULL, r.epoch, eg_boottime_ns() - UW_EXPIRED_AGO_NS);
	return w->bsock;
}

const char *uw_retired(struct unix_world *w)
{
	char out[1024];
	int rc = kh_cli(out, sizeof(out), "retire", "--sandbox", w->sandbox, NULL);

	cr_assert_eq(rc, 0, "retire: %s", out);
	return w->vsock;
}

const char *uw_no_record(struct unix_world *w)
{
	__u8 sb[EG_ID_BYTES];

	cr_assert_eq(eg_uuid_parse(w->sandbox, sb), 0);
	cr_assert_eq(bpf_map_delete_elem(kh.maps.fd[EG_MAP_RECORDS], sb), 0);
	return w->vsock;
}

/* An endpoint whose role no record knows: the record half fails closed.
 * Both maps a path can be found by, the path's and the inode's. */
const char *uw_inconsistent(struct unix_world *w)
{
	struct eg_path_key key;
	struct eg_endpoint ep;
	struct eg_inode_key ik;
	int fd = -1, rc;

	cr_assert_eq(eg_path_key_make(w->vsock, &key), 0);
	cr_assert_eq(eg_endpoint_read(&kh.maps, EG_MAP_ENDPOINTS, &key, &ep), 0);
	ep.role = 99;
	cr_assert_eq(eg_endpoint_write(&kh.maps, EG_MAP_ENDPOINTS, &key, &ep), 0);
	rc = eg_unix_bound_inode(w->vsock, &ik, &fd);
	if ((rc == 0 || rc == -ENODATA) && kh.maps.fd[EG_MAP_INODE_ENDPOINTS] >= 0 &&
	    !eg_endpoint_read(&kh.maps, EG_MAP_INODE_ENDPOINTS, &ik, &ep)) {
		ep.role = 99;
		cr_assert_eq(eg_endpoint_write(&kh.maps, EG_MAP_INODE_ENDPOINTS, &ik, &ep), 0);
	}
	if (fd >= 0)
		close(fd);
	return w->vsock;
}

/* An admitted connect whose socket cannot be tagged
 * (test_cgroup_connect.c): a live grant, and no room under
 * net.core.optmem_max for the caller's socket-local storage, in its own
 * network namespace or, where the kernel keeps it machine-wide, in the VM. */
static int optmem_vm_old = -1;

const char *uw_no_tag(struct unix_world *w)
{
	int rc;

	uw_granted(w);
	rc = kh_child_optmem(&w->caller, 0);
	if (rc) {
		cr_assert_eq(rc, -ENOENT, "optmem_max in the caller's namespace: %s",
			     strerror(-rc));
		optmem_vm_old = kh_vm_optmem_set(0);
	}
	return w->bsock;
}

void uw_no_tag_done(struct unix_world *w)
{
	if (optmem_vm_old >= 0) {
		kh_vm_optmem_set(optmem_vm_old);
		optmem_vm_old = -1;
	} else {
		cr_assert_eq(kh_child_optmem(&w->caller, 131072), 0);
	}
}
