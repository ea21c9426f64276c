/* SPDX-License-Identifier: Apache-2.0 */
/* JSON forms shared by the handlers (docs/api.md gives the schema). */
#ifndef EXECGATE_DAEMON_JSON_H
#define EXECGATE_DAEMON_JSON_H

#include <jansson.h>
#include <execgate/execgate.h>

json_t *egd_json_uuid(const __u8 id[EG_ID_BYTES]);
json_t *egd_json_proc(const struct eg_proc_id *p);
json_t *egd_json_record(const struct eg_exec_record *r);
/* The "streams" member of install and retire: the keys and shapes of
 * `execgate install/retire --json` (json_streams in user/execgate/
 * cmd_install.c, which prints without jansson). */
json_t *egd_json_streams(const struct eg_stream_cuts *s);
/* The verdict object of POST /v1/admit and /v1/check. */
json_t *egd_json_verdict(const struct eg_verdict_result *res, const struct eg_request *req);

/* The same verdict object as text, written straight into buf (what
 * json_dumps(egd_json_verdict(), JSON_COMPACT) gives, byte for byte; the
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
int egd_get_uuid(json_t *o, const char *name, bool required, __u8 out[EG_ID_BYTES], char *why,
		 size_t why_size);

#endif
