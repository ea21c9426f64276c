/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/* What bpf/iter_task_start.bpf.c writes for one task, read by
 * user/loader/process/task_start.c: a process's identity exactly as the execgate
 * hooks read it from the current task (bpf/execgate_common.bpf.h,
 * eg_current_proc), start time in ns included. /proc/PID/stat only has it
 * in 10 ms ticks. Included by bpf/ (after vmlinux.h) and by user/. */
#ifndef EXECGATE_TASK_START_ABI_H
#define EXECGATE_TASK_START_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* In the program's .data: a pinned program of another build (another
 * record) is not adopted (user/loader/process/task_start.c). */
#define EG_TASK_START_ABI 1

struct eg_task_start {
	__u32 tid;		 /* task->pid, initial PID namespace */
	__u32 tgid;		 /* task->tgid */
	__u64 start_boottime_ns; /* task->group_leader->start_boottime */
	__u64 exe_ino;		 /* mm->exe_file->f_inode->i_ino, 0 without exe */
	__u32 exe_dev;		 /* ...->i_sb->s_dev (MAJOR << 20 | MINOR) */
	__u32 has_exe;		 /* 0: no mm or no exe_file (kernel thread, exiting) */
};
_Static_assert(sizeof(struct eg_task_start) == 32, "eg_task_start size");

#endif
