// SPDX-License-Identifier: Apache-2.0
/* execgate/daemon_ask.h: asking execgated what a command cannot see. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <jansson.h>
#include "execgate/commands.h"
#include "execgate/daemon_ask.h"
#include "frontend/unix_get.h"

/* A status is small and the daemon answers it at once: a daemon that
 * does not within this is reported as not answering. */
#define STATUS_TIMEOUT_MS 2000

bool eg_cli_same_pin_dir(const char *a, const char *b)
{
	struct stat sa, sb;

	if (!stat(a, &sa) && !stat(b, &sb))
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	return errno == EACCES && !strcmp(a, b);
}

int eg_cli_daemon_serves(const char *sock, const char *pin_dir, bool *loaded, char *said,
			 size_t said_size)
{
	json_t *doc, *dir;
	char *body = NULL;
	int status = 0, rc, serves = 0;

	*loaded = false;
	rc = eg_unix_get(sock, "/v1/status", STATUS_TIMEOUT_MS, &status, &body);
	if (rc) {
		snprintf(said, said_size, "no execgated answers at %s (%s)", sock,
			 rc == -EPROTO ? "not an HTTP answer" : strerror(-rc));
		return 0;
	}
	doc = json_loads(body, 0, NULL);
	free(body);
	dir = json_object_get(doc, "pin_dir");
	if (status == 200 && json_is_string(dir) &&
	    eg_cli_same_pin_dir(json_string_value(dir), pin_dir)) {
		*loaded = json_is_true(json_object_get(doc, "loaded"));
		snprintf(said, said_size, "the daemon at %s answers: %s", sock,
			 *loaded ? "loaded" : "not loaded");
		serves = 1;
	} else if (status == 503) {
		/* nothing loaded where it serves: its pin dir is in the reason */
		json_t *reason = json_object_get(doc, "reason");

		snprintf(said, said_size, "the daemon at %s answers: %s", sock,
			 json_is_string(reason) ? json_string_value(reason) : "not loaded");
		serves = json_is_string(reason) && strstr(json_string_value(reason), pin_dir);
	} else {
		snprintf(said, said_size, "the daemon at %s answers %d%s%s", sock, status,
			 json_is_string(dir) ? " for pin dir " : "",
			 json_is_string(dir) ? json_string_value(dir) : "");
	}
	json_decref(doc);
	return serves;
}

int eg_cli_pins_denied(const char *pin_dir, const char *sock)
{
	char said[512];
	bool loaded;

	if (!access(pin_dir, X_OK) || errno != EACCES)
		return -1;
	eg_cli_daemon_serves(sock, pin_dir, &loaded, said, sizeof(said));
	eg_cli_err("permission denied on %s; %s", pin_dir, said);
	return EG_EXIT_NO_ACCESS;
}
