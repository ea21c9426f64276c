// SPDX-License-Identifier: Apache-2.0
/* The log cannot be forged by a client: a URL with ESC, CR and 0xff, sent
 * by uid nobody on a connection it then resets, reaches the daemon's
 * stderr (the journal) only escaped -- in libmicrohttpd's own messages as
 * in ours. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "dd.h"

TestSuite(daemon_log, .init = dd_setup, .fini = dd_teardown, .timeout = 120);

#define FORGED "/v1/\x1b[2J\x1b[HFORGED\rexecgated: keys: removed x\xff"

static const char *const requests[] = {
    /* complete, then reset before the answer is read */
    "GET " FORGED " HTTP/1.1\r\nHost: x\r\n\r\n",
    /* a header cut short, then reset */
    "GET " FORGED " HTTP/1.1\r\nHost: x\r\nX-\x1b: \x1b[31m\xff",
    /* the same bytes in a header value and a body */
    "POST /v1/admit HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nX-A: \x1b[2J\xff\r\n\r\n{\"\x1b",
    /* a request line with no version */
    "GET " FORGED "\r\n\r\n",
    /* raw bytes where the method goes */
    "\x1b[2J\xff\r\x7f " FORGED " HTTP/1.1\r\n\r\n",
};

/* As nobody: each request on its own connection, then a reset (SO_LINGER
 * 0), 20 times over. */
static void send_as_nobody(void)
{
	pid_t pid = fork();
	int st;

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(99);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() == 1)
			_exit(97);
		for (int round = 0; round < 20; round++)
			for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++) {
				struct linger lg = {.l_onoff = 1, .l_linger = 0};
				int fd = dd_connect();

				if (fd < 0)
					_exit(10);
				if (write(fd, requests[i], strlen(requests[i])) < 0)
					_exit(11);
				/* half the time the answer has been made */
				if (round % 2)
					usleep(20000);
				setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
				close(fd);
			}
		_exit(0);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the nobody client: status 0x%x", st);
}

static char *read_log(size_t *len)
{
	FILE *f = fopen(dd.log, "r");
	char *buf;

	cr_assert_not_null(f, "%s", dd.log);
	buf = malloc(1 << 22);
	*len = fread(buf, 1, (1 << 22) - 1, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

Test(daemon_log, client_bytes_are_escaped)
{
	size_t len, bad = 0, first_bad = 0;
	struct dd_resp r;
	char *log;

	send_as_nobody();
	/* the daemon is alive and has finished with every connection */
	usleep(500000);
	r = dd_req("GET", "/v1/keys", NULL);
	cr_assert_eq(r.status, 200, "after the clients: %d", r.status);
	dd_resp_free(&r);
	dd_stop(SIGTERM);

	log = read_log(&len);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)log[i];

		if ((c < 0x20 && c != '\n') || c >= 0x7f) {
			if (!bad++)
				first_bad = i;
		}
	}
	cr_expect_eq(bad, 0, "%zu raw bytes in the log, the first 0x%02x at %zu: %.120s", bad,
		     bad ? (unsigned char)log[first_bad] : 0, first_bad,
		     bad ? log + (first_bad > 60 ? first_bad - 60 : 0) : "");
	/* libmicrohttpd did quote the client, and escaped */
	cr_expect(strstr(log, "\\x1b[2J"), "no escaped ESC in the log:\n%.2000s", log);
	cr_expect(strstr(log, "FORGED\\x0dexecgated: keys: removed x\\xff"),
		  "no escaped CR / 0xff in the log:\n%.2000s", log);
	/* every line is one of ours */
	for (char *line = log; *line;) {
		char *nl = strchr(line, '\n');

		cr_expect(!strncmp(line, "<", 1) && strstr(line, ">execgated: ") &&
			      strstr(line, ">execgated: ") < (nl ? nl : line + strlen(line)),
			  "a line not from the daemon's logger: %.200s", line);
		if (!nl)
			break;
		line = nl + 1;
	}
	free(log);
}

/* Every line of log is one of the daemon's: "<N>execgated: ". */
static void expect_only_daemon_lines(const char *log)
{
	for (const char *line = log; *line;) {
		const char *nl = strchr(line, '\n');

		cr_expect(line[0] == '<' && strstr(line, ">execgated: ") &&
			      strstr(line, ">execgated: ") < (nl ? nl : line + strlen(line)),
			  "a line not from the daemon's logger: %.200s", line);
		if (!nl)
			break;
		line = nl + 1;
	}
}

/* The library's messages, libbpf's included, reach the daemon's log
 * through eg_log_set_sink as the daemon's own journal lines: with
 * --verbose libbpf's debug lines are there at priority 7, without it no
 * debug line is. */
Test(daemon_log, library_messages_are_daemon_lines)
{
	size_t len;
	char *log;

	/* dd_setup's daemon ran without --verbose, and loaded the programs */
	dd_stop(SIGTERM);
	log = read_log(&len);
	cr_expect_null(strstr(log, "<7>"), "a debug line without --verbose:\n%.2000s", log);
	cr_expect_null(strstr(log, "libbpf: loading object"),
		       "libbpf's debug output without --verbose:\n%.2000s", log);
	expect_only_daemon_lines(log);
	free(log);

	cr_assert_eq(truncate(dd.log, 0), 0, "%s: %s", dd.log, strerror(errno));
	dd.verbose = true;
	dd_start(); /* adopts the pinned programs: libbpf opens their objects */
	dd_stop(SIGTERM);
	dd.verbose = false;
	log = read_log(&len);
	cr_expect(strstr(log, "<7>execgated: libbpf: "),
		  "no libbpf debug line in the daemon's format with --verbose:\n%.2000s", log);
	expect_only_daemon_lines(log);
	free(log);
}
