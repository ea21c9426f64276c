/* SPDX-License-Identifier: Apache-2.0 */
/* The JSON objects of the CLI's --json and of execgated's answers, built
 * once, here, with jansson: `execgate X --json` and the API print the same
 * members in the same shapes. docs/schema/ holds one JSON Schema per
 * document; docs/api.md describes them. Never installed: the front ends
 * link the static library. The one header of user/lib a front end may
 * include (scripts/make/layers.mk), so public types only.
 *
 * Every builder returns a new reference, or NULL when jansson could not
 * allocate. */
#ifndef EXECGATE_LIB_JSON_H
#define EXECGATE_LIB_JSON_H

#include <stdio.h>
#include <jansson.h>
#include "execgate/execgate.h"

/* Moves only when a member is removed, renamed, or changes type or
 * meaning; members are added within a version (docs/api.md). */
#define EG_JSON_SCHEMA_VERSION 2

/* A document: {"schema_version": 2} to add members to. */
json_t *eg_json_doc(void);
/* One document as one compact line on f; takes the reference. 0 or
 * -ENOMEM/-EIO. */
int eg_json_print(FILE *f, json_t *doc);

json_t *eg_json_uuid(const uint8_t id[EG_ID_BYTES]);
/* 32 lowercase hex digits: a token id, wherever it is printed. */
json_t *eg_json_token_id(const uint8_t id[EG_ID_BYTES]);
json_t *eg_json_proc(const struct eg_process *p);
/* Bytes from the kernel or a client (comm, a socket path) as printable
 * text: anything outside printable ASCII, and the backslash, become \xNN,
 * so the string is valid UTF-8 and a path cannot forge a line. */
json_t *eg_json_bytes(const char *s, size_t max);

/* The record object. addrs: the ServicePort addresses (service_addrs),
 * NULL to leave the member out (the verdict's record: admit reads no
 * address map). */
json_t *eg_json_record(const struct eg_runtime_record *r, const struct eg_inet_addr *addrs,
		       size_t naddrs);
/* {"schema_version", "records": [...]}: records are appended by the
 * caller. */
json_t *eg_json_list(json_t **records);
/* Calls fn for every record on w with its ServicePort addresses, the
 * list's text and JSON forms both (eg_worker_list's order and stop rule);
 * an address read that fails stops it with its errno and err. */
typedef int (*eg_record_addrs_fn)(const struct eg_runtime_record *r,
				  const struct eg_inet_addr *addrs, size_t naddrs, void *ctx);
int eg_list_with_addrs(struct eg_worker *w, eg_record_addrs_fn fn, void *ctx, char *err,
		       size_t err_size);
/* The list document of every record on w with its ServicePort addresses
 * (`execgate list --json`, GET /v1/sandboxes): 0 with *doc, or a negative
 * errno with err (empty when only memory ran out). */
int eg_json_list_worker(struct eg_worker *w, json_t **doc, char *err, size_t err_size);
/* show: {"schema_version", "record", "endpoints", "grants"}. */
json_t *eg_json_show(const struct eg_sandbox_info *info);

/* The verdict of admit and check. */
json_t *eg_json_verdict(const struct eg_verdict_result *res, const struct eg_request *req);
/* `execgate verdict verify`: a signed verdict, decoded. */
json_t *eg_json_claim(const struct eg_verdict_claim *v);

/* The "streams" member of install and retire. */
json_t *eg_json_streams(const struct eg_stream_cuts *s);
json_t *eg_json_install(const struct eg_install_report *rep, const struct eg_inet_addr *addrs,
			size_t naddrs);
json_t *eg_json_retire(const struct eg_runtime_record *after, const struct eg_inet_addr *addrs,
		       size_t naddrs, const struct eg_stream_cuts *streams);
json_t *eg_json_forget(const uint8_t sandbox[EG_ID_BYTES], unsigned endpoints_removed,
		       const struct eg_stream_cuts *streams);

/* Keys: {"schema_version", "keys": [...]}, entries appended with
 * eg_json_key_add; a change is {"schema_version", "kid", "added"|"removed"}. */
json_t *eg_json_keys(json_t **keys);
int eg_json_key_add(json_t *keys, const char *kid, const uint8_t pk[32]);
json_t *eg_json_key_change(const char *kid, const char *what, bool value);
/* The "warnings" of the key set and of a key change (the key files the
 * load skipped, eg_worker_keys_warnings' lines): one string per line, its
 * bytes as eg_json_bytes writes them. NULL on ENOMEM. */
json_t *eg_json_lines(const char *text);

/* A denial (eg_worker_events_next), at its realtime_ns; worker_id may be
 * NULL (JSON null) when the worker's id is not known. */
json_t *eg_json_event(const struct eg_denial *d, const char *worker_id);
/* RFC 3339 UTC with nanoseconds. */
void eg_json_rfc3339(int64_t wall_ns, char out[64]);

/* {"schema_version", "error", "reason"}. */
json_t *eg_json_error(const char *error, const char *reason);

/* The worker id recorded in state_dir (node.worker, eg_node_key_init) as
 * UUID text; -ENOENT when none is recorded. */
int eg_node_worker_id_text(const char *state_dir, char out[EG_UUID_TEXT_LEN]);

#endif
