// SPDX-License-Identifier: Apache-2.0
/* An install's plan (loader/records/install_plan.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "core/identity.h"
#include "core/ids.h"
#include "core/vsock_cid.h"
#include "loader/endpoints/inet.h"
#include "loader/records/install_plan.h"
#include "loader/endpoints/lsm_unix_inode.h"
#include "loader/endpoints/path_filter.h"
#include "loader/process/proc_id.h"
#include "loader/maps/view.h"

/* A path with a newline or another control character would forge lines in
 * logs and events; no real socket path needs one. */
static int check_path(const char *role, const char *path, char *err, size_t err_size)
{
	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		if (*p < 0x20 || *p == 0x7f) {
			snprintf(err, err_size, "%s socket: byte %zu is control character 0x%02x",
				 role, (size_t)(p - (const unsigned char *)path), *p);
			return -EINVAL;
		}
	return 0;
}

/* The LSM tier keys Unix endpoints by the bound socket's inode, which no
 * symlink, relative path or bind mount changes. The inode is the one the
 * path reaches without following a link (loader/endpoints/lsm_unix_inode.h): a link
 * is refused, since whoever can write the directory could point it at
 * another sandbox's socket. A path not bound yet gets no inode entry:
 * install again once the listener is up. */
static int plan_inode(struct eg_endpoint_plan *plan, size_t *np,
		      const struct eg_endpoint_plan *path_plan, char *err, size_t err_size)
{
	struct eg_endpoint_plan *p = &plan[*np];
	int rc, fd;

	memset(p, 0, sizeof(*p));
	/* The kernel's (dev, ino) of the listener, which on overlayfs is not
	 * what stat() reports. */
	rc = eg_unix_bound_inode(path_plan->text, &p->key.inode, &fd);
	if (rc == -ELOOP) {
		snprintf(err, err_size,
			 "endpoint %s: a component of the path is a symbolic link: refused (a "
			 "link can name another sandbox's socket); register the path without links",
			 path_plan->text);
		return -EINVAL;
	}
	if (rc == -ENOENT || rc == -ENOTDIR || rc == -ENOTSOCK)
		return 0; /* nothing bound there yet */
	if (rc && rc != -ENODATA) {
		snprintf(err, err_size, "endpoint %s: resolving the path: %s", path_plan->text,
			 strerror(-rc));
		return rc;
	}
	p->holds_fd = true;
	p->fd = fd;
	(*np)++;
	p->map = EG_MAP_INODE_ENDPOINTS;
	p->text = path_plan->text;
	p->role = path_plan->role;
	for (size_t j = 0; j + 1 < *np; j++)
		if (plan[j].map == EG_MAP_INODE_ENDPOINTS &&
		    !memcmp(&plan[j].key.inode, &p->key.inode, sizeof(p->key.inode))) {
			snprintf(err, err_size, "endpoint %s: the same socket as endpoint %s",
				 p->text, plan[j].text);
			return -EINVAL;
		}
	return 0;
}

/* Plan: every check of the spec alone, the new record (its epoch still
 * 1) and the endpoints it publishes. Reads /proc and the socket files,
 * nothing of the maps. */
int eg_install_plan(const struct eg_install_spec *spec, struct eg_install_plan *pl, char *err,
		    size_t err_size)
{
	struct eg_endpoint_plan *plan = pl->ep;
	size_t *np = &pl->n;
	struct eg_identity id;
	int rc;

	memset(pl, 0, sizeof(*pl));
	if (spec->n_bridge_sockets > EG_WORKER_MAX_ENDPOINTS ||
	    spec->n_vmm_sockets > EG_WORKER_MAX_ENDPOINTS ||
	    spec->n_vsock > EG_WORKER_MAX_ENDPOINTS || spec->n_ports > EG_RECORD_MAX_PORTS ||
	    spec->n_service_addrs > EG_WORKER_MAX_ENDPOINTS) {
		snprintf(err, err_size, "install: at most %d endpoints of each kind and %d ports",
			 EG_WORKER_MAX_ENDPOINTS, EG_RECORD_MAX_PORTS);
		return -EINVAL;
	}
	for (size_t i = 0; i < spec->n_bridge_sockets; i++)
		if (check_path("bridge", spec->bridge_sockets[i], err, err_size))
			return -EINVAL;
	for (size_t i = 0; i < spec->n_vmm_sockets; i++)
		if (check_path("vmm", spec->vmm_sockets[i], err, err_size))
			return -EINVAL;

	if (spec->generation > EG_GENERATION_MAX) {
		char s[EG_UUID_TEXT_LEN];

		eg_uuid_format(spec->sandbox, s);
		snprintf(
		    err, err_size,
		    "sandbox %s: generation %llu is above the largest generation %llu (2^53-1): "
		    "refused (a sandbox at the ceiling could never be replaced)",
		    s, (unsigned long long)spec->generation, EG_GENERATION_MAX);
		return -EINVAL;
	}

	/* Build the new record; nothing is written before every check passed. */
	pl->nr.state = EG_RECORD_ACTIVE;
	eg_identity_from_spec(&id, spec);
	eg_identity_to_exec(&pl->nr, &id);
	pl->nr.epoch = 1;
	EG_PORTS_COPY(pl->nr.ports, pl->nr.nports, spec->ports, spec->n_ports);
	rc = eg_proc_identify(spec->bridge_pid, &pl->nr.bridge, err, err_size);
	if (rc)
		return rc;
	if (spec->vmm_pid) {
		rc = eg_proc_identify(spec->vmm_pid, &pl->nr.vmm, err, err_size);
		if (rc)
			return rc;
	}

	for (size_t i = 0; i < spec->n_bridge_sockets + spec->n_vmm_sockets; i++) {
		bool bridge = i < spec->n_bridge_sockets;
		const char *path = bridge ? spec->bridge_sockets[i]
					  : spec->vmm_sockets[i - spec->n_bridge_sockets];
		struct eg_endpoint_plan *p = &plan[(*np)];

		memset(p, 0, sizeof(*p));
		p->map = EG_MAP_ENDPOINTS;
		p->text = path;
		p->role = bridge ? EG_ROLE_BRIDGE : EG_ROLE_VMM;
		if (eg_path_key_make(path, &p->key.path)) {
			snprintf(err, err_size,
				 "endpoint %s: must be an absolute path shorter than %d bytes",
				 path, EG_UNIX_PATH_MAX);
			return -EINVAL;
		}
		for (size_t j = 0; j < (*np); j++)
			if (plan[j].map == EG_MAP_ENDPOINTS &&
			    !memcmp(&plan[j].key.path, &p->key.path, sizeof(p->key.path))) {
				snprintf(err, err_size, "endpoint %s: given twice", path);
				return -EINVAL;
			}
		(*np)++;
		rc = plan_inode(plan, np, p, err, err_size);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < spec->n_vsock; i++) {
		struct eg_endpoint_plan *p = &plan[(*np)++];

		memset(p, 0, sizeof(*p));
		p->map = EG_MAP_VSOCK_ENDPOINTS;
		eg_vsock_key_of(&spec->vsock[i], &p->key.vsock);
		p->role = EG_ROLE_VMM;
		snprintf(pl->vsock_text[i], sizeof(pl->vsock_text[i]), "vsock %u:%u",
			 spec->vsock[i].cid, spec->vsock[i].port);
		p->text = pl->vsock_text[i];
		/* Registered, the host's own address would be guarded for every
		 * process on this kernel, and no VMM's guest is ever there. */
		if (eg_vsock_cid_never_guest(spec->vsock[i].cid)) {
			snprintf(err, err_size,
				 "endpoint %s: CID %u is never a VMM's guest (0 is the hypervisor, "
				 "2 the host, %u any): refused",
				 p->text, spec->vsock[i].cid, UINT32_MAX);
			return -EINVAL;
		}
		for (size_t j = 0; j + 1 < *np; j++)
			if (plan[j].map == EG_MAP_VSOCK_ENDPOINTS &&
			    !memcmp(&plan[j].key.vsock, &p->key.vsock, sizeof(p->key.vsock))) {
				snprintf(err, err_size, "endpoint %s: given twice", p->text);
				return -EINVAL;
			}
	}
	for (size_t i = 0; i < spec->n_service_addrs; i++) {
		struct eg_endpoint_plan *p = &plan[(*np)];

		memset(p, 0, sizeof(*p));
		p->map = EG_MAP_INET_ENDPOINTS;
		p->role = EG_ROLE_SERVICE;
		struct eg_inet_key given;

		eg_inet_key_of(&spec->service_addrs[i], &given);
		p->text = eg_inet_key_format(&given, pl->inet_text[i]);
		if (eg_inet_key_check(&given, &p->key.inet)) {
			snprintf(err, err_size,
				 "service address %s: not an IPv4/IPv6 unicast address", p->text);
			return -EINVAL;
		}
		for (size_t j = 0; j < (*np); j++)
			if (plan[j].map == EG_MAP_INET_ENDPOINTS &&
			    !memcmp(&plan[j].key.inet, &p->key.inet, sizeof(p->key.inet))) {
				snprintf(err, err_size, "service address %s: given twice", p->text);
				return -EINVAL;
			}
		(*np)++;
	}
	return 0;
}

void eg_install_plan_release(struct eg_install_plan *pl)
{
	for (size_t i = 0; i < pl->n; i++)
		if (pl->ep[i].holds_fd) {
			close(pl->ep[i].fd);
			pl->ep[i].holds_fd = false;
		}
}
