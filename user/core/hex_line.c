// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <sodium.h>
#include <unistd.h>
#include "core/hex_line.h"

int eg_hex_line_read(int fd, uint8_t *out, size_t len)
{
	char buf[2 * EG_HEX_LINE_MAX_BYTES + 2];
	size_t hex_len = 2 * len, got = 0, bin_len;
	ssize_t n = 0;
	int rc = 0;

	if (len > EG_HEX_LINE_MAX_BYTES)
		return -EINVAL;
	/* Read one byte more than the longest valid file to see over-length. */
	while (got < hex_len + 2) {
		n = read(fd, buf + got, hex_len + 2 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (n < 0) {
		rc = -errno;
		goto cleanup;
	}
	if (got == hex_len + 1 && buf[hex_len] == '\n')
		got--;
	if (got != hex_len || sodium_hex2bin(out, len, buf, hex_len, NULL, &bin_len, NULL) != 0 ||
	    bin_len != len)
		rc = -EINVAL;
cleanup:
	sodium_memzero(buf, sizeof(buf));
	return rc;
}
