/* SPDX-License-Identifier: Apache-2.0 */
/* The inode key (struct eg_inode_key) of the Unix socket bound at a path, as
 * BPF sees it in lsm/unix_stream_connect. */
#ifndef EXECGATE_LOADER_LSM_UNIX_INODE_H
#define EXECGATE_LOADER_LSM_UNIX_INODE_H

#include "execgate/abi.h"

/* 0: *key is the kernel's view of the listening socket bound at path (from
 * sock_diag UNIX_DIAG_VFS). -ENODATA: path is a socket but sock_diag found
 * no listener on it (not listening yet, or no unix_diag); *key then holds
 * stat()'s view, which differs from the kernel's on overlayfs. -ENOTSOCK,
 * -ENOENT, ...: no socket at path, *key undefined. */
int eg_unix_bound_inode(const char *path, struct eg_inode_key *key);

#endif
