// SPDX-License-Identifier: Apache-2.0
/* Test-only crash points (loader/fault.h). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "loader/fault.h"

void eg_fault_point(const char *name)
{
	const char *want = getenv(EG_FAULT_ENV);

	if (want && !strcmp(want, name))
		_exit(EG_FAULT_EXIT); /* no atexit, no flush: as abrupt as a kill */
}
