/* SPDX-License-Identifier: Apache-2.0 */
/* Names of the kernel verdict reasons (enum eg_kreason) and hooks, as
 * status, events and the docs spell them. */
#ifndef EXECGATE_LOADER_KREASON_H
#define EXECGATE_LOADER_KREASON_H

#include "execgate/abi.h"

const char *eg_kreason_name(__u32 reason); /* "deny-no-grant"; "unknown" */
const char *eg_hook_name(__u32 hook);	   /* "connect_unix"; "unknown" */

#endif
