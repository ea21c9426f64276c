// SPDX-License-Identifier: Apache-2.0
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include "daemon/log.h"

void egd_log(int prio, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n, m;

	n = snprintf(line, sizeof(line), "<%d>execgated: ", prio);
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	n += m;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	/* One write per line, so lines from concurrent threads never mix. */
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}
