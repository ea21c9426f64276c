/* SPDX-License-Identifier: Apache-2.0 */
/* A bare Unix-socket request/response server: bench-daemon's floor for
 * what any server on this socket type pays, with no HTTP in it. */
#ifndef EG_BENCH_UNIX_ECHO_H
#define EG_BENCH_UNIX_ECHO_H
#include <stddef.h>
#include <sys/types.h>

/* Forks a server on path: one thread per online CPU, each with its own
 * epoll set; connections go round-robin to the threads. Every req_len bytes
 * read on a connection are answered with the resp_len bytes of resp. Returns
 * the server's pid once it accepts, or -1 (errno set). */
pid_t ux_echo_start(const char *path, size_t req_len, const char *resp, size_t resp_len);

/* Stops and reaps the server. */
void ux_echo_stop(pid_t pid);

#endif
