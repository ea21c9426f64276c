/* SPDX-License-Identifier: Apache-2.0 */
/* The hybrid VSOCK handshake text (core/vsock_handshake.h) and the escaping
 * of what a peer sent back. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include "core/vsock_handshake.h"

static int parse(const char *s, uint32_t *port, char *err, size_t size)
{
	return eg_vsock_reply_parse(s, strlen(s), port, err, size);
}

Test(vsock_handshake, connect_line)
{
	char buf[32];

	cr_assert_eq(eg_vsock_connect_line(52, buf, sizeof(buf)), 11);
	cr_assert_str_eq(buf, "CONNECT 52\n");
	cr_assert_eq(eg_vsock_connect_line(4294967295u, buf, sizeof(buf)), 19);
	cr_assert_str_eq(buf, "CONNECT 4294967295\n");
	cr_assert_eq(eg_vsock_connect_line(52, buf, 11), -ENOSPC, "no room for the NUL");
}

Test(vsock_handshake, ok_reply_gives_the_assigned_port_not_the_one_asked)
{
	uint32_t port = 7;
	char err[256] = "";

	cr_assert_eq(parse("OK 1073741824\n", &port, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(port, 1073741824u);
	cr_assert_eq(parse("OK 0\n", &port, err, sizeof(err)), 0);
	cr_assert_eq(port, 0);
	cr_assert_eq(parse("OK 4294967295\n", &port, err, sizeof(err)), 0);
	cr_assert_eq(port, 4294967295u);
	/* Bytes after the line are not the parser's (the reader stops at '\n'). */
	cr_assert_eq(eg_vsock_reply_parse("OK 9\nguest", 10, &port, err, sizeof(err)), 0);
	cr_assert_eq(port, 9);
}

Test(vsock_handshake, every_other_reply_is_refused_by_name)
{
	static const struct {
		const char *reply, *err;
	} bad[] = {
	    {"", "hybrid vsock handshake: no reply (expected \"OK <port>\\n\")"},
	    {"OK 52", "hybrid vsock handshake: reply \"OK 52\" has no end of line within 32 bytes "
		      "(expected \"OK <port>\\n\")"},
	    {"ERR no such port\n", "hybrid vsock handshake: unexpected reply \"ERR no such "
				   "port\\n\" (expected \"OK <port>\\n\")"},
	    {"ok 52\n", "hybrid vsock handshake: unexpected reply \"ok 52\\n\" (expected \"OK "
			"<port>\\n\")"},
	    {"OK\n", "hybrid vsock handshake: unexpected reply \"OK\\n\" (expected \"OK "
		     "<port>\\n\")"},
	    {"OK \n", "hybrid vsock handshake: reply \"OK \\n\": port must be 1 to 10 decimal "
		      "digits"},
	    {"OK 52\r\n", "hybrid vsock handshake: reply \"OK 52\\r\\n\": port is not a "
			  "decimal number"},
	    {"OK -1\n", "hybrid vsock handshake: reply \"OK -1\\n\": port is not a decimal "
			"number"},
	    {"OK  52\n", "hybrid vsock handshake: reply \"OK  52\\n\": port is not a decimal "
			 "number"},
	    {"OK 4294967296\n", "hybrid vsock handshake: reply \"OK 4294967296\\n\": port above "
				"4294967295"},
	    {"OK 12345678901\n", "hybrid vsock handshake: reply \"OK 12345678901\\n\": port must "
				 "be 1 to 10 decimal digits"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint32_t port = 77;
		char err[256] = "";

		cr_assert_eq(parse(bad[i].reply, &port, err, sizeof(err)), -EPROTO, "%zu", i);
		cr_assert_str_eq(err, bad[i].err, "%zu", i);
		cr_assert_eq(port, 77, "port untouched on error");
	}
}

Test(vsock_handshake, binary_reply_is_escaped)
{
	const char reply[] = {'\x01', 'O', 'K', '"', '\\', '\xff', '\n'};
	uint32_t port;
	char err[256];

	cr_assert_eq(eg_vsock_reply_parse(reply, sizeof(reply), &port, err, sizeof(err)), -EPROTO);
	cr_assert_str_eq(err, "hybrid vsock handshake: unexpected reply "
			      "\"\\x01OK\\\"\\\\\\xff\\n\" (expected \"OK <port>\\n\")");
	/* An embedded NUL is a byte like any other. */
	cr_assert_eq(eg_vsock_reply_parse("OK 5\0\n", 6, &port, err, sizeof(err)), -EPROTO);
	cr_assert_str_eq(err,
			 "hybrid vsock handshake: reply \"OK 5\\x00\\n\": port is not a decimal "
			 "number");
}

Test(vsock_handshake, escape_is_bounded)
{
	char out[12];

	cr_assert_eq(eg_escape_bounded("abc", 3, out, sizeof(out)), 3);
	cr_assert_str_eq(out, "abc");
	cr_assert_eq(eg_escape_bounded("abcdefghijk", 11, out, sizeof(out)), 11);
	cr_assert_str_eq(out, "abcdefghijk", "exactly fits");
	cr_assert_eq(eg_escape_bounded("abcdefghijkl", 12, out, sizeof(out)), 11);
	cr_assert_str_eq(out, "abcdefgh...");
	/* An escape is never cut in half. */
	cr_assert_eq(eg_escape_bounded("abcdef\x01xyz", 10, out, sizeof(out)), 9);
	cr_assert_str_eq(out, "abcdef...");
	cr_assert_eq(eg_escape_bounded("abc", 3, out, 3), 2);
	cr_assert_str_eq(out, "..");
	cr_assert_eq(eg_escape_bounded("abc", 3, out, 1), 0);
	cr_assert_str_eq(out, "");
	cr_assert_eq(eg_escape_bounded("", 0, out, sizeof(out)), 0);
	cr_assert_str_eq(out, "");
	/* The longest reply a reader keeps fits the parser's buffer whole. */
	char big[EG_VSOCK_REPLY_MAX], shown[4 * EG_VSOCK_REPLY_MAX + 8];

	memset(big, 0xfe, sizeof(big));
	cr_assert_eq(eg_escape_bounded(big, sizeof(big), shown, sizeof(shown)),
		     4 * EG_VSOCK_REPLY_MAX);
}
