/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's side of the JSON forms: the verdict's hot-path text and the
 * strict readers of request bodies. The objects themselves are built by
 * the library (lib/json.h; docs/schema/ holds their schemas). */
#ifndef EXECGATE_DAEMON_JSON_H
#define EXECGATE_DAEMON_JSON_H

#include <jansson.h>
#include <execgate/execgate.h>
#include "lib/json.h"

/* The verdict object of POST /v1/admit and /v1/check as text, written
 * straight into buf (what json_dumps(eg_json_verdict(), JSON_COMPACT), the
 * one builder the CLI uses too (lib/json.h), gives, byte for byte; the
 * tests compare them). The hot path of every admit and check: building and
 * dumping the jansson tree costs more than a cached verdict itself. The
 * length, or -ENOSPC when buf is too small. */
int egd_verdict_text(const struct eg_verdict_result *res, const struct eg_request *req, char *buf,
		     size_t size);

/* Strict field readers: absent -> *present false (when allowed), wrong
 * type or range -> -EINVAL with why. */
int egd_get_u64(json_t *o, const char *name, bool required, uint64_t max, uint64_t *out,
		bool *present, char *why, size_t why_size);
int egd_get_str(json_t *o, const char *name, bool required, const char **out, char *why,
		size_t why_size);
int egd_get_uuid(json_t *o, const char *name, bool required, uint8_t out[EG_ID_BYTES], char *why,
		 size_t why_size);

#endif
