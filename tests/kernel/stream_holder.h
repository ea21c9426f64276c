/* SPDX-License-Identifier: Apache-2.0 */
/* A bridge that holds streams: a child in the scratch cgroup that connects
 * Unix streams to one path and keeps them, driven by one-byte commands over
 * a socketpair; and the checks of a cut stream (EOF on receive, EPIPE on
 * send; where the LSM tier is loaded too, its lease may answer a receive
 * with EPIPE first), as tests/kernel/test_revoke.c asserts them. */
#ifndef EXECGATE_TEST_KERNEL_STREAM_HOLDER_H
#define EXECGATE_TEST_KERNEL_STREAM_HOLDER_H

#include <stdbool.h>
#include <sys/types.h>

struct sh_holder {
	pid_t pid;
	int ctl;
};

/* Forks the holder (tracked for teardown) and moves it into kh.cgroup. */
void sh_start(struct sh_holder *h, const char *path);
/* 'c': connect one more stream (0 or -errno); 'w': how many held streams
 * still carry a byte out; 'r': how many have a byte to read (the peer sent
 * it before the command; not waited for); 'e': how many are cut (EOF in,
 * EPIPE out). */
int sh_cmd(struct sh_holder *h, char cmd);
/* A listening Unix stream socket on path (in the calling process). */
int sh_listen(const char *path);
/* Drains what the peer sent, then: is fd cut (EOF in, EPIPE out)? */
bool sh_end_cut(int fd);
/* Whether the LSM tier's stream lease is loaded in kh.pin_dir: it refuses
 * I/O on a stale stream (EPIPE) before any cut, so a stale stream is never
 * seen alive there. */
bool sh_lease_loaded(void);

#endif
