// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/* A task iterator that writes one struct eg_task_start per task it visits.
 * user/loader/process/task_start.c runs it with a tid filter (bpf_iter_link_info
 * task.tid, kernel 6.1+), so it visits the one task asked about. It reads
 * the same fields, through the same pointers, as eg_current_proc() in the
 * hooks, so what userspace installs is bit for bit what a connect of that
 * process presents: the group leader's start_boottime in ns (not the
 * /proc/PID/stat tick), and the executable's inode and superblock s_dev. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "abi/task_start_abi.h"

char LICENSE[] SEC("license") = "GPL";

__u32 eg_task_start_abi SEC(".data") = EG_TASK_START_ABI; /* checked on adopting a pin */
/* Set before load to a hash of this object's bytes, so that a pin names the
 * build whose program it holds (user/loader/process/task_start.c). */
__u64 eg_task_start_build SEC(".data") = 0;

SEC("iter/task")
int eg_task_start(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct eg_task_start out = {};
	struct task_struct *leader;
	struct mm_struct *mm;
	struct file *exe;
	struct inode *inode;

	if (!t || eg_task_start_abi != EG_TASK_START_ABI)
		return 0; /* end of iteration (the second: never, it keeps the ABI word) */
	leader = t->group_leader;
	if (!leader)
		return 0;
	out.tid = t->pid;
	out.tgid = t->tgid;
	out.start_boottime_ns = leader->start_boottime;
	mm = t->mm;
	exe = mm ? mm->exe_file : NULL;
	inode = exe ? exe->f_inode : NULL;
	if (inode) {
		out.exe_ino = inode->i_ino;
		out.exe_dev = inode->i_sb->s_dev;
		out.has_exe = 1;
	}
	bpf_seq_write(ctx->meta->seq, &out, sizeof(out));
	return 0;
}
