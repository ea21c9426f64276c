/* SPDX-License-Identifier: Apache-2.0 */
/* The fleet's retry back-off (docs/fleet.md, "Worker side"): doubled at
 * each failure up to a ceiling, and each wait drawn at random between half
 * and all of it, so that the workers that lost one etcd member together
 * (a leader kill, a restart) do not all come back in the same instant.
 * Pure: the caller gives the random draw; tests/unit/test_backoff.c. */
#ifndef EXECGATE_FLEET_BACKOFF_H
#define EXECGATE_FLEET_BACKOFF_H

#include <stdint.h>

/* The back-off after one more failure: cur_ms doubled, at most max_ms. */
unsigned eg_backoff_next(unsigned cur_ms, unsigned max_ms);
/* The wait to sleep for a back-off of ms: a point of [ms/2, ms] picked by
 * rnd, uniform over rnd ("equal jitter": never less than half, so a
 * storm is spread without retrying much sooner than the back-off says). */
unsigned eg_backoff_jittered(unsigned ms, uint32_t rnd);

#endif
