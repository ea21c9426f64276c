// SPDX-License-Identifier: Apache-2.0
/* Peer identity comparison and its error text. */
#include <stdio.h>
#include "core/peer_check.h"

unsigned eg_peer_diff(const struct eg_proc_id *expected, const struct eg_proc_id *found)
{
	unsigned d = EG_PEER_SAME;

	if (expected->tgid != found->tgid)
		d |= EG_PEER_OTHER_PID;
	if (expected->start_boottime_ns != found->start_boottime_ns)
		d |= EG_PEER_OTHER_START;
	if (expected->exe_dev != found->exe_dev || expected->exe_ino != found->exe_ino)
		d |= EG_PEER_OTHER_EXE;
	return d;
}

const char *eg_peer_diff_reason(unsigned diff)
{
	if (diff & EG_PEER_OTHER_PID)
		return "another process";
	if (diff & EG_PEER_OTHER_START)
		return "pid reused (another start time)";
	if (diff & EG_PEER_OTHER_EXE)
		return "replaced executable";
	return "same process";
}

int eg_peer_id_text(const struct eg_proc_id *id, char *out, size_t size)
{
	/* exe_dev is the kernel's s_dev encoding: MAJOR << 20 | MINOR. */
	return snprintf(out, size, "pid %u (start %llu, exe %u:%u/%llu)", id->tgid,
			(unsigned long long)id->start_boottime_ns, id->exe_dev >> 20,
			id->exe_dev & ((1u << 20) - 1), (unsigned long long)id->exe_ino);
}

const char *eg_peer_role_name(unsigned role)
{
	switch (role) {
	case EG_ROLE_BRIDGE:
		return "bridge";
	case EG_ROLE_VMM:
		return "VMM";
	default:
		return "endpoint";
	}
}

void eg_peer_mismatch_text(const char *what, unsigned role, const char *sandbox_text,
			   const struct eg_proc_id *expected, const struct eg_proc_id *found,
			   char *out, size_t size)
{
	char e[96], f[96];

	eg_peer_id_text(expected, e, sizeof(e));
	eg_peer_id_text(found, f, sizeof(f));
	snprintf(out, size, "%s: listener is %s, expected the %s of sandbox %s (%s): %s", what, f,
		 eg_peer_role_name(role), sandbox_text, e,
		 eg_peer_diff_reason(eg_peer_diff(expected, found)));
}
