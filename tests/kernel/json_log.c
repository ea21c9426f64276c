// SPDX-License-Identifier: Apache-2.0
/* The JSON document log (json_log.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <jansson.h>
#include "json_log.h"

static int log_fd = -1;

void kh_json_log_open(void)
{
	const char *path = getenv("EXECGATE_JSON_LOG");

	if (log_fd >= 0 || !path || !*path)
		return;
	log_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	cr_assert_geq(log_fd, 0, "json log %s: %s", path, strerror(errno));
}

/* One entry, one write(2) on an O_APPEND descriptor: entries of processes
 * that write at once never interleave. The descriptor is opened once, by
 * root, in the test's setup: a forked child that dropped its uid
 * (tests/daemon/dd.c req_as) writes through the one it inherited. A log
 * that cannot be written fails the test: a missing entry would go
 * unchecked. */
static void append(json_t *entry)
{
	const char *path = getenv("EXECGATE_JSON_LOG");
	char *text;
	size_t n;

	if (!path || !*path) {
		json_decref(entry);
		return;
	}
	kh_json_log_open();
	cr_assert_not_null(entry, "json log: out of memory");
	text = json_dumps(entry, JSON_COMPACT);
	json_decref(entry);
	cr_assert_not_null(text, "json log: out of memory");
	n = strlen(text);
	text[n] = '\n'; /* json_dumps' NUL becomes the newline */
	cr_assert_eq(write(log_fd, text, n + 1), (ssize_t)(n + 1), "json log %s: short write",
		     path);
	free(text);
}

/* Output that is not UTF-8 cannot be a JSON document: logged as such, and
 * the checker fails on it. */
static json_t *text_or_marker(const char *s, size_t len)
{
	json_t *v = json_stringn(s, len);

	return v ? v : json_string("<not UTF-8>");
}

void kh_json_log_cli(char *const argv[], int rc, const char *out, size_t len)
{
	json_t *args = json_array();
	bool json = false;

	for (int i = 0; argv[i]; i++) {
		json = json || !strcmp(argv[i], "--json");
		json_array_append_new(args, text_or_marker(argv[i], strlen(argv[i])));
	}
	if (!json) {
		json_decref(args);
		return;
	}
	append(json_pack("{s:s,s:o,s:i,s:o}", "src", "cli", "argv", args, "rc", rc, "out",
			 text_or_marker(out, len)));
}

void kh_json_log_api(const char *request, size_t request_len, int status, const char *body,
		     size_t len)
{
	size_t line = 0;

	char text[512];
	size_t o = 0;

	/* The request line only classifies the answer: bytes a test sent
	 * outside printable ASCII (a bad path) as \xNN. */
	for (; line < request_len && request[line] != '\r' && request[line] != '\n' &&
	       o + 5 < sizeof(text);
	     line++) {
		unsigned char c = (unsigned char)request[line];

		if (c >= 0x20 && c < 0x7f)
			text[o++] = (char)c;
		else
			o += (size_t)snprintf(text + o, 5, "\\x%02x", c);
	}
	text[o] = '\0';
	append(json_pack("{s:s,s:s,s:i,s:o}", "src", "api", "request", text, "status", status,
			 "body", text_or_marker(body, len)));
}

void kh_json_log_event(const char *line, size_t len)
{
	append(json_pack("{s:s,s:o}", "src", "api-event", "line", text_or_marker(line, len)));
}
