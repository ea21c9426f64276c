// SPDX-License-Identifier: Apache-2.0
/* The hybrid VSOCK handshake's text: what the bridge writes and the only
 * reply it accepts. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "core/vsock_handshake.h"

int eg_vsock_connect_line(uint32_t port, char *buf, size_t size)
{
	int n = snprintf(buf, size, "CONNECT %u\n", port);

	if (n < 0 || (size_t)n >= size)
		return -ENOSPC;
	return n;
}

/* One byte's escaped form into e (at most 5 bytes with NUL). */
static size_t escape_byte(unsigned char c, char e[5])
{
	switch (c) {
	case '\n':
		return (size_t)snprintf(e, 5, "\\n");
	case '\r':
		return (size_t)snprintf(e, 5, "\\r");
	case '\t':
		return (size_t)snprintf(e, 5, "\\t");
	case '\\':
		return (size_t)snprintf(e, 5, "\\\\");
	case '"':
		return (size_t)snprintf(e, 5, "\\\"");
	default:
		if (c >= 0x20 && c < 0x7f) {
			e[0] = (char)c;
			e[1] = '\0';
			return 1;
		}
		return (size_t)snprintf(e, 5, "\\x%02x", c);
	}
}

size_t eg_escape_bounded(const void *data, size_t len, char *out, size_t out_size)
{
	const unsigned char *p = data;
	size_t o = 0, total = 0, i;
	char e[5];

	if (!out_size)
		return 0;
	for (i = 0; i < len; i++)
		total += escape_byte(p[i], e);
	/* Everything fits, or stop early enough to leave room for "...". */
	for (i = 0; i < len; i++) {
		size_t n = escape_byte(p[i], e);

		if (total < out_size ? o + n >= out_size : o + n + 3 >= out_size)
			break;
		memcpy(out + o, e, n);
		o += n;
	}
	if (i < len)
		for (int k = 0; k < 3 && o + 1 < out_size; k++)
			out[o++] = '.';
	out[o] = '\0';
	return o;
}

int eg_vsock_reply_parse(const char *reply, size_t len, uint32_t *assigned, char *err,
			 size_t err_size)
{
	char shown[4 * EG_VSOCK_REPLY_MAX + 8];
	const char *nl = len ? memchr(reply, '\n', len) : NULL;
	uint64_t v = 0;
	size_t digits, i;

	eg_escape_bounded(reply, nl ? (size_t)(nl - reply) + 1 : len, shown, sizeof(shown));
	if (!len) {
		snprintf(err, err_size,
			 "hybrid vsock handshake: no reply (expected \"OK <port>\\n\")");
		return -EPROTO;
	}
	if (!nl) {
		snprintf(err, err_size,
			 "hybrid vsock handshake: reply \"%s\" has no end of line within %d bytes "
			 "(expected \"OK <port>\\n\")",
			 shown, EG_VSOCK_REPLY_MAX);
		return -EPROTO;
	}
	len = (size_t)(nl - reply); /* the line without its '\n' */
	if (len < 3 || memcmp(reply, "OK ", 3)) {
		snprintf(
		    err, err_size,
		    "hybrid vsock handshake: unexpected reply \"%s\" (expected \"OK <port>\\n\")",
		    shown);
		return -EPROTO;
	}
	digits = len - 3;
	if (!digits || digits > 10) {
		snprintf(
		    err, err_size,
		    "hybrid vsock handshake: reply \"%s\": port must be 1 to 10 decimal digits",
		    shown);
		return -EPROTO;
	}
	for (i = 3; i < len; i++) {
		if (reply[i] < '0' || reply[i] > '9') {
			snprintf(
			    err, err_size,
			    "hybrid vsock handshake: reply \"%s\": port is not a decimal number",
			    shown);
			return -EPROTO;
		}
		v = v * 10 + (uint64_t)(reply[i] - '0');
	}
	if (v > UINT32_MAX) {
		snprintf(err, err_size, "hybrid vsock handshake: reply \"%s\": port above %u",
			 shown, UINT32_MAX);
		return -EPROTO;
	}
	*assigned = (uint32_t)v;
	return 0;
}
