// SPDX-License-Identifier: Apache-2.0
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "daemon/log.h"

#define MSG_MAX 1024

size_t egd_log_escape(const char *in, size_t len, char *out, size_t size)
{
	size_t o = 0;

	if (!size)
		return 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)in[i];

		if (ch >= 0x20 && ch < 0x7f && ch != '\\') {
			if (o + 1 >= size)
				break;
			out[o++] = (char)ch;
		} else {
			if (o + 4 >= size)
				break;
			snprintf(out + o, size - o, "\\x%02x", ch);
			o += 4;
		}
	}
	out[o] = '\0';
	return o;
}

void egd_log_va(int prio, const char *fmt, va_list ap)
{
	char msg[MSG_MAX], line[4 * MSG_MAX + 32];
	int n, m;

	m = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (m < 0)
		return;
	if ((size_t)m >= sizeof(msg))
		m = (int)sizeof(msg) - 1;
	/* Messages quote clients (a URL, a header, a key id) and the
	 * kernel (a path): every byte outside printable ASCII, and the
	 * backslash that starts an escape, is written as \xNN, so a client
	 * can neither end a line, nor move the cursor, nor fake an escape. */
	n = snprintf(line, sizeof(line), "<%d>execgated: ", prio);
	n += (int)egd_log_escape(msg, (size_t)m, line + n, sizeof(line) - (size_t)n - 1);
	line[n++] = '\n';
	/* One write per line, so lines from concurrent threads never mix. */
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}

void egd_log(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	egd_log_va(prio, fmt, ap);
	va_end(ap);
}

void egd_log_library(int level, const char *msg, void *ctx)
{
	(void)ctx;
	/* One journal line per line of the message; blank lines are dropped
	 * (libbpf ends most messages with a newline, a verifier log has many). */
	while (*msg) {
		const char *nl = strchr(msg, '\n');
		size_t len = nl ? (size_t)(nl - msg) : strlen(msg);

		if (len)
			egd_log(level, "%.*s", (int)(len < 4096 ? len : 4096), msg);
		msg += len + (nl ? 1 : 0);
	}
}
