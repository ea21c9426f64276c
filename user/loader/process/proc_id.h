/* SPDX-License-Identifier: Apache-2.0 */
/* A process's identity as BPF will see it (struct eg_proc_id), read by a
 * task iterator (loader/process/task_start.h: start time in ns, the executable as
 * the hooks see it) and confirmed through a pidfd, after systemd's PidRef:
 * open the pidfd first, read, then check the pidfd still names a live
 * process. If the process died and its PID was reused while we read, the
 * pidfd still points at the dead one and the check fails.
 *
 * Residuals (docs/operators.md): none from the clock (ns, the kernel's own
 * value); a kernel whose task iterator does not load gets no identity at
 * all (-EOPNOTSUPP), never a tick-precise one. The loader must run in the
 * initial PID and time namespaces (checked). */
#ifndef EXECGATE_LOADER_PROC_ID_H
#define EXECGATE_LOADER_PROC_ID_H

#include <stddef.h>
#include <sys/types.h>
#include "abi/abi.h"

/* 0, -ESRCH (no such process, or it exited while being read), -EINVAL (pid
 * is a thread, not a process), or another negative errno. err names the pid
 * and the reason. */
int eg_proc_identify(pid_t pid, struct eg_proc_id *out, char *err, size_t err_size);

/* The same for the process a pidfd names (SO_PEERPIDFD, pidfd_open):
 * -ESRCH when it has exited, -EBADF when fd is not a pidfd. */
int eg_proc_identify_pidfd(int pidfd, struct eg_proc_id *out, char *err, size_t err_size);

/* 0 while the process a pidfd names lives, -ESRCH once it has exited. */
int eg_proc_pidfd_alive(int pidfd);

/* The pieces, exposed for tests and diagnostics: /proc/PID/stat field 22
 * (ticks; identify does not use it). */
int eg_proc_stat_start_ticks(pid_t pid, __u64 *ticks);
__u32 eg_kernel_dev(dev_t st_dev); /* userspace st_dev -> kernel s_dev */

/* -EPERM with err when this process is not in the initial PID and time
 * namespaces, where /proc numbers match what BPF reads. */
int eg_proc_check_namespaces(char *err, size_t err_size);

#endif
