/* SPDX-License-Identifier: Apache-2.0 */
/* Firecracker's hybrid VSOCK handshake, host side (pure; no I/O).
 *
 * Firecracker exposes a guest's VSOCK as a Unix socket on the host. A
 * host-initiated connection writes `CONNECT <port>\n` and reads one line,
 * `OK <n>\n`, where n is the host-side port Firecracker assigned to this
 * connection: NOT the guest port asked for, so a reader that expects its
 * own port back refuses every real Firecracker. Anything else (an error
 * line, a closed socket, a line without its end) means the guest side was
 * not reached and nothing may be forwarded. */
#ifndef EXECGATE_CORE_VSOCK_HANDSHAKE_H
#define EXECGATE_CORE_VSOCK_HANDSHAKE_H

#include <stddef.h>
#include <stdint.h>

/* Longest reply line read, newline included. "OK 4294967295\n" is 14
 * bytes; a reader stops after this many bytes without a newline. */
#define EG_VSOCK_REPLY_MAX 32

/* Writes "CONNECT <port>\n" (no NUL counted); returns its length, or
 * -ENOSPC when size is too small. */
int eg_vsock_connect_line(uint32_t port, char *buf, size_t size);

/* Parses a reply: the bytes read up to and including the first '\n', or
 * every byte read when no newline came. 0 with *assigned set for exactly
 * "OK <decimal u32>\n"; -EPROTO otherwise, with err naming what came back
 * (escaped, bounded) and what is wrong with it. */
int eg_vsock_reply_parse(const char *reply, size_t len, uint32_t *assigned, char *err,
			 size_t err_size);

/* Printable ASCII as is, \n \r \t \\ \" as escapes, other bytes as \xHH;
 * at most out_size - 1 characters, ending in "..." when data did not fit.
 * Returns the length written. */
size_t eg_escape_bounded(const void *data, size_t len, char *out, size_t out_size);

#endif
