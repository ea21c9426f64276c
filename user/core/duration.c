// SPDX-License-Identifier: Apache-2.0
/* Durations like 30s, 10m, 2h, 1d (core/duration.h). */
#include <errno.h>
#include <stddef.h>
#include "core/duration.h"

int eg_duration_parse(const char *s, int64_t *ns)
{
	static const struct {
		char unit;
		int64_t ns;
	} units[] = {
	    {'s', 1000000000LL},
	    {'m', 60LL * 1000000000LL},
	    {'h', 3600LL * 1000000000LL},
	    {'d', 86400LL * 1000000000LL},
	};
	int64_t n = 0;
	size_t i = 0;

	if (!s || s[0] < '0' || s[0] > '9')
		return -EINVAL;
	for (; s[i] >= '0' && s[i] <= '9'; i++) {
		if (n > (INT64_MAX - (s[i] - '0')) / 10)
			return -EINVAL;
		n = n * 10 + (s[i] - '0');
	}
	if (!n || !s[i] || s[i + 1])
		return -EINVAL;
	for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		if (s[i] != units[u].unit)
			continue;
		if (n > INT64_MAX / units[u].ns)
			return -EINVAL;
		*ns = n * units[u].ns;
		return 0;
	}
	return -EINVAL;
}
