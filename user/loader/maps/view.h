/* SPDX-License-Identifier: Apache-2.0 */
/* The library's own value types (include/execgate/types.h) filled from the
 * pinned maps' keys and values (bpf/abi/abi.h) and back: the one
 * place where the public ABI meets the kernel layout. */
#ifndef EXECGATE_LOADER_VIEW_H
#define EXECGATE_LOADER_VIEW_H

#include "abi/abi.h"
#include "execgate/execgate.h"
#include "execgate/types.h"
#include "loader/revokers/revoke.h"

void eg_process_of(const struct eg_proc_id *k, struct eg_process *out);
void eg_proc_id_of(const struct eg_process *p, struct eg_proc_id *out);
/* The record as the library returns it (the lock is not part of it). */
void eg_runtime_record_of(const struct eg_exec_record *k, struct eg_runtime_record *out);
void eg_grant_info_of(const struct eg_grant *g, struct eg_grant_info *out);
void eg_vsock_key_of(const struct eg_vsock_addr *a, struct eg_vsock_key *out);
void eg_inet_addr_of(const struct eg_inet_key *k, struct eg_inet_addr *out);
void eg_inet_key_of(const struct eg_inet_addr *a, struct eg_inet_key *out);
/* What the revokers did (per kind, with timings), as the library reports a
 * stream cut; error is the first kind's errno, or -EIO when the streams
 * were cut but the intent could not be cleared. The only conversion
 * between the two types, and one way: the public struct is an answer,
 * never an input to the loader (loader/revokers/revoke.h says why they differ). */
void eg_stream_cuts_of(const struct eg_revoke_report *r, struct eg_stream_cuts *out);

#endif
