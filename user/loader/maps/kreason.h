/* SPDX-License-Identifier: Apache-2.0 */
/* Names of the kernel verdict reasons (enum eg_kreason) and hooks, as
 * status, events and the docs spell them. */
#ifndef EXECGATE_LOADER_KREASON_H
#define EXECGATE_LOADER_KREASON_H

#include "abi/abi.h"
#include "execgate/text.h" /* eg_kreason_name, eg_hook_name */

#endif
