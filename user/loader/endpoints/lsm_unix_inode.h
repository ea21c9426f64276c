/* SPDX-License-Identifier: Apache-2.0 */
/* The inode key (struct eg_inode_key) of the Unix socket bound at a path, as
 * BPF sees it in lsm/unix_stream_connect, and the link-free walk install
 * resolves every endpoint path with. */
#ifndef EXECGATE_LOADER_LSM_UNIX_INODE_H
#define EXECGATE_LOADER_LSM_UNIX_INODE_H

#include "abi/abi.h"

/* An O_PATH descriptor of what path names, reached without following any
 * symbolic link in any component (openat2 RESOLVE_NO_SYMLINKS), or the
 * negative errno: -ELOOP when a component is a symbolic link. */
int eg_unix_path_open(const char *path);

/* Resolves path with eg_unix_path_open(). 0: *key is the kernel's view of
 * the listening socket bound at path (from sock_diag UNIX_DIAG_VFS).
 * -ENODATA: path is a socket but sock_diag found no listener on it (not
 * listening yet, or no unix_diag); *key then holds stat()'s view, which
 * differs from the kernel's on overlayfs. On both, *fd_out is the open
 * descriptor of the socket file: hold it while *key is used, so that the
 * inode cannot be freed and its number given to another socket; close it
 * after. -ELOOP (a component is a symbolic link), -ENOTSOCK, -ENOENT, ...:
 * no socket reached, *key undefined, *fd_out is -1. */
int eg_unix_bound_inode(const char *path, struct eg_inode_key *key, int *fd_out);

#endif
