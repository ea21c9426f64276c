/* SPDX-License-Identifier: Apache-2.0 */
/* Comparing the process found behind a socket with the one a runtime
 * record names, and saying how they differ (pure; no I/O).
 *
 * A process is (tgid, start time, executable dev+inode), as struct
 * eg_proc_id: the same tgid with another start time is a reused pid; the
 * same tgid and start time with another executable is a process that
 * exec()ed another binary. Either is a different process for us. */
#ifndef EXECGATE_CORE_PEER_CHECK_H
#define EXECGATE_CORE_PEER_CHECK_H

#include <stddef.h>
#include "abi/abi.h"

enum eg_peer_diff {
	EG_PEER_SAME = 0,
	EG_PEER_OTHER_PID = 1 << 0,
	EG_PEER_OTHER_START = 1 << 1,
	EG_PEER_OTHER_EXE = 1 << 2,
};

/* Bits of enum eg_peer_diff; EG_PEER_SAME when every field matches. */
unsigned eg_peer_diff(const struct eg_proc_id *expected, const struct eg_proc_id *found);

/* Why two identities differ, from the diff bits: "another process", "pid
 * reused (another start time)", "replaced executable". */
const char *eg_peer_diff_reason(unsigned diff);

/* "pid 4242 (start 123456, exe 8:1/99)": exe is the kernel dev as
 * major:minor and the inode. Returns the snprintf length. */
int eg_peer_id_text(const struct eg_proc_id *id, char *out, size_t size);

/* "bridge" or "VMM" for enum eg_endpoint_role; "endpoint" otherwise. */
const char *eg_peer_role_name(unsigned role);

/* The refusal: "<what>: listener is <found>, expected the <role> of
 * sandbox <sandbox_text> (<expected>): <reason>". what names the endpoint,
 * e.g. "connect /run/sbx/v.sock". */
void eg_peer_mismatch_text(const char *what, unsigned role, const char *sandbox_text,
			   const struct eg_proc_id *expected, const struct eg_proc_id *found,
			   char *out, size_t size);

#endif
