/* SPDX-License-Identifier: Apache-2.0 */
/* What the libFuzzer harnesses of tests/fuzz/ share: the invariant check
 * (a failed one aborts, which libFuzzer reports with the input) and the
 * start-up every harness needs. Header-only: each harness is built alone
 * with the core sources (Makefile, scripts/make/fleet.mk, keys.mk). */
#ifndef EXECGATE_TESTS_FUZZ_H
#define EXECGATE_TESTS_FUZZ_H

#include <stdio.h>
#include <stdlib.h>
#include <sodium.h>

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "invariant failed: %s (%s:%d)\n", #cond, __FILE__,         \
				__LINE__);                                                         \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* For LLVMFuzzerInitialize: libsodium ready, or abort. */
static inline void fuzz_init(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (sodium_init() < 0)
		abort();
}

#endif
