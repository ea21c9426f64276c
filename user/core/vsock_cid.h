/* SPDX-License-Identifier: Apache-2.0 */
/* VSOCK CIDs that never address a VMM's guest: 0 (the hypervisor), 2 (the
 * host) and VMADDR_CID_ANY (-1, the wildcard). install refuses them as
 * endpoints and eg_connect_vsock refuses to connect to them, so a record
 * can never guard, or send a bridge to, the host's own VSOCK services.
 * CID 1 (VMADDR_CID_LOCAL, this kernel's vsock_loopback) is not in the set:
 * docs/operators.md says what a CID-1 endpoint does and does not guard. */
#ifndef EXECGATE_CORE_VSOCK_CID_H
#define EXECGATE_CORE_VSOCK_CID_H

#include <stdbool.h>
#include <stdint.h>

static inline bool eg_vsock_cid_never_guest(uint32_t cid)
{
	return cid == 0 || cid == 2 || cid == UINT32_MAX;
}

#endif
