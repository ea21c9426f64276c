// SPDX-License-Identifier: Apache-2.0
/* What this library was built as. Alone in its file so that the unit tests
 * (tests/unit/test_version.c) link the library's own answer without the
 * rest of the handle. */
#include <execgate/execgate.h>

const char *eg_version(void)
{
	return EXECGATE_VERSION;
}
