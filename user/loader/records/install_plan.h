/* SPDX-License-Identifier: Apache-2.0 */
/* The first step of an install (loader/records/install.c plans, decides,
 * publishes): an install spec checked on its own and turned into the new
 * record and the endpoints it will publish. Reads /proc and the socket
 * files, nothing of the maps. */
#ifndef EXECGATE_LOADER_INSTALL_PLAN_H
#define EXECGATE_LOADER_INSTALL_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include "abi/abi.h"
#include "execgate/execgate.h"
#include "execgate/text.h" /* EG_INET_TEXT_MAX */
#include "loader/maps/maps.h"

struct eg_endpoint_plan {
	enum eg_map_id map;
	union {
		struct eg_path_key path;
		struct eg_vsock_key vsock;
		struct eg_inode_key inode;
		struct eg_inet_key inet;
	} key;
	const char *text; /* for messages; for an inode, the path that names it */
	__u32 role;
	bool exists, same;
	bool holds_fd; /* inode: fd keeps the socket file (and its number) alive */
	int fd;
};

/* Every endpoint of one install: a Unix path, then its socket's inode when
 * bound, then VSOCK and service addresses. */
#define EG_INSTALL_PLAN_MAX (6 * EG_WORKER_MAX_ENDPOINTS)

/* One install, from its spec to what it publishes: the new record, its
 * endpoints, and the text that names each in messages (held here, not in
 * function-static buffers, so that two installs never share them). */
struct eg_install_plan {
	struct eg_exec_record nr;
	struct eg_endpoint_plan ep[EG_INSTALL_PLAN_MAX];
	size_t n;
	char vsock_text[EG_WORKER_MAX_ENDPOINTS][32];
	char inet_text[EG_WORKER_MAX_ENDPOINTS][EG_INET_TEXT_MAX];
};

/* Checks spec and fills pl (the record's epoch still 1); 0, or -errno
 * with err. pl holds open fds either way: release it. */
int eg_install_plan(const struct eg_install_spec *spec, struct eg_install_plan *pl, char *err,
		    size_t err_size);
/* Closes what the plan holds open (the bound sockets' files). */
void eg_install_plan_release(struct eg_install_plan *pl);

#endif
