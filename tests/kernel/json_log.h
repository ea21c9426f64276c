/* SPDX-License-Identifier: Apache-2.0 */
/* Every JSON document the tests receive -- the output of each `execgate
 * ... --json` run and each answer of execgated -- appended, one entry a
 * line, to the file named by $EXECGATE_JSON_LOG (nothing when unset).
 * scripts/json-schema-check.py validates the whole log against
 * docs/schema/ at the end of make check (scripts/make/schema.mk), so a
 * document no schema allows fails the build even when the test that
 * produced it only looked at one member. Entries are the raw facts (argv,
 * exit code, output; method, path, status, body); the checker decides
 * which schema each document answers to. */
#ifndef EXECGATE_TESTS_JSON_LOG_H
#define EXECGATE_TESTS_JSON_LOG_H

#include <stddef.h>

/* Opens the log (as root, before any child drops its uid); every setup
 * calls it. */
void kh_json_log_open(void);
/* A CLI run: argv (NULL-terminated), its exit status, stdout+stderr. */
void kh_json_log_cli(char *const argv[], int rc, const char *out, size_t len);
/* An HTTP answer to "METHOD PATH" (request holds the request line). */
void kh_json_log_api(const char *request, size_t request_len, int status, const char *body,
		     size_t len);
/* One line of the GET /v1/events stream. */
void kh_json_log_event(const char *line, size_t len);

#endif
