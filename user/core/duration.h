/* SPDX-License-Identifier: Apache-2.0 */
/* A duration as operators write it: a positive decimal number and one unit,
 * s, m, h or d ("30s", "10m", "2h", "1d"). Nothing else: no sign, no
 * space, no fraction, no second unit, nothing that overflows 64-bit
 * nanoseconds. */
#ifndef EXECGATE_CORE_DURATION_H
#define EXECGATE_CORE_DURATION_H

#include <stdint.h>

/* 0 and *ns, or -EINVAL. */
int eg_duration_parse(const char *s, int64_t *ns);

#endif
