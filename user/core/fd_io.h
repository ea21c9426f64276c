/* SPDX-License-Identifier: Apache-2.0 */
/* Whole writes to a file descriptor, for the writers of key files, the
 * probe record and the node key (temp file + rename everywhere). */
#ifndef EXECGATE_CORE_FD_IO_H
#define EXECGATE_CORE_FD_IO_H

#include <stddef.h>

/* Writes all len bytes, retrying short writes and EINTR. 0 or -errno. */
int eg_write_all(int fd, const void *buf, size_t len);

#endif
