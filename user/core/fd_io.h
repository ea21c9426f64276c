/* SPDX-License-Identifier: Apache-2.0 */
/* Whole writes to a file descriptor, for the writers of key files, the
 * probe record and the node key (temp file + rename everywhere); and the
 * one-line state files' reader. */
#ifndef EXECGATE_CORE_FD_IO_H
#define EXECGATE_CORE_FD_IO_H

#include <stddef.h>

/* Writes all len bytes, retrying short writes and EINTR. 0 or -errno. */
int eg_write_all(int fd, const void *buf, size_t len);
/* Replaces path with exactly buf, crash-safe: a temporary dot file in the
 * same directory, written, fsync'ed, renamed over path, then the directory
 * fsync'ed. A reader sees the old contents or the new, never a mix. 0 or
 * -errno (the temporary file is removed again). */
int eg_write_file_atomic(const char *path, const void *buf, size_t len, unsigned mode);
/* The first line of path into line (its newline kept, cut at size - 1).
 * 0, -ENOENT (no file) or another -errno, -EINVAL for an empty file. */
int eg_read_first_line(const char *path, char *line, size_t size);

#endif
