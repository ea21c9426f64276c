// SPDX-License-Identifier: Apache-2.0
/* Test-only crash points (loader/fault.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "loader/fault.h"

void eg_fault_point(const char *name)
{
	const char *want = getenv(EG_FAULT_ENV);

	if (!want)
		return;
	if (!strcmp(want, name))
		_exit(EG_FAULT_EXIT); /* no atexit, no flush: as abrupt as a kill */
	if (!strncmp(want, EG_FAULT_STALL, strlen(EG_FAULT_STALL)) &&
	    !strcmp(want + strlen(EG_FAULT_STALL), name)) {
		struct timespec left = {.tv_sec = EG_FAULT_STALL_S};

		while (nanosleep(&left, &left) && errno == EINTR)
			; /* a signal to the thread does not end the stall */
	}
}
