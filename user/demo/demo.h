/* SPDX-License-Identifier: Apache-2.0 */
/* execgate-demo: the actors of the two-worker demo (scripts/demo-two-workers.sh)
 * and of tests/kernel/test_two_workers.c. Not installed: stand-ins for the
 * parts of a real deployment execgate does not ship.
 *
 *   firecracker  Firecracker's host-side VSOCK Unix socket (hybrid VSOCK
 *                handshake) with a guest-agent stand-in behind it
 *   impostor     a listener that bound a VMM socket path; counts bytes
 *   manager      a sandbox manager on one worker: admits itself, connects
 *                to the bridge socket, sends one request (or a terminal)
 *   frontend     the API front end: route cache + worker-signed verdicts
 *   as-pid       runs a program under a given (reused) pid
 *
 * Each prints what it did as lines of text; a line "= KEY VALUE" is a
 * result the demo script checks. */
#ifndef EXECGATE_DEMO_DEMO_H
#define EXECGATE_DEMO_DEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Host-side ports the Firecracker stand-in assigns: the n-th connection
 * gets EGD_ASSIGNED_BASE + n, never the port asked for. */
#define EGD_ASSIGNED_BASE 1073741824u

int egd_firecracker(int argc, char **argv);
int egd_impostor(int argc, char **argv);
int egd_manager(int argc, char **argv);
int egd_frontend(int argc, char **argv);
int egd_as_pid(int argc, char **argv);

/* --name VALUE option lookup over argv[from..]: the value, or NULL. Every
 * option of these tools takes a value, except the flags listed by
 * egd_flag. */
const char *egd_opt(int argc, char **argv, const char *name);
bool egd_flag(int argc, char **argv, const char *name);
/* Appends one line to a log file (O_APPEND, one write). */
void egd_log(const char *file, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Joins a cgroup v2 directory (writes our pid to cgroup.procs). 0 or -errno. */
int egd_join_cgroup(const char *cgroup);
/* "EPERM" for EPERM, ... */
const char *egd_errno_name(int err);
long long egd_unix_ms(void);

#endif
