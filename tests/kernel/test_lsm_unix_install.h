/* SPDX-License-Identifier: Apache-2.0 */
/* Installing sandbox S with a Unix VMM socket, shared by the Unix LSM tests. */
#ifndef EXECGATE_TEST_LSM_UNIX_INSTALL_H
#define EXECGATE_TEST_LSM_UNIX_INSTALL_H

#include <string.h>
#include <criterion/criterion.h>
#include "test_lsm_env.h"

static const __u8 lsm_sandbox_s[EG_ID_BYTES] = {0x5a, 0x4d, 0xb0, 0x02, 7};

static inline void lsm_install_unix(struct lsm_env *e, __u64 gen, __u32 act, struct agent *bridge,
				    struct agent *vmm, const char *vmm_socket,
				    enum eg_install_outcome want)
{
	struct lsm_install in = {.generation = gen,
				 .activation = act,
				 .bridge = bridge->pid,
				 .vmm = vmm ? vmm->pid : 0,
				 .vmm_socket = vmm_socket};
	struct eg_install_result res;

	memcpy(in.sandbox, lsm_sandbox_s, EG_ID_BYTES);
	lsm_env_install_ok(e, &in, want, &res);
	/* the socket is bound: its inode must be registered for the LSM tier */
	cr_assert_eq(res.inodes, vmm_socket ? 1u : 0u, "inode endpoints registered: %u",
		     res.inodes);
}

#endif
