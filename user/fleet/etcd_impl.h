/* SPDX-License-Identifier: Apache-2.0 */
/* Inside the etcd client: the strict readers of the gateway's JSON
 * (user/fleet/etcd_json.c) and the handle's endpoints, shared by the unary
 * calls (user/fleet/etcd.c) and the watch (user/fleet/etcd_watch.c). */
#ifndef EXECGATE_FLEET_ETCD_IMPL_H
#define EXECGATE_FLEET_ETCD_IMPL_H

#include <jansson.h>
#include "fleet/etcd.h"

void eg_etcd_seterr(char *err, size_t err_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* An int64 the gateway sends as a JSON string of decimal digits
 * ("-" allowed). Absent: 0 (proto3 leaves zero values out). Anything else,
 * a number, an empty string, "12a", out of range: -EPROTO. */
int eg_etcd_json_i64(json_t *obj, const char *name, int64_t *out, char *err, size_t err_size);
/* A bool: absent is false, a non-boolean is -EPROTO. */
int eg_etcd_json_bool(json_t *obj, const char *name, bool *out, char *err, size_t err_size);
/* header.revision of an answer; rev may be NULL (just checked). */
int eg_etcd_header_revision(json_t *ans, int64_t *rev, char *err, size_t err_size);
/* A mvccpb.KeyValue: key (base64, non-empty, no NUL), value (base64,
 * absent = empty), the revisions. for_delete: a delete event's kv, which
 * has no value. On error kv is left empty. */
int eg_etcd_parse_kv(json_t *j, struct eg_etcd_kv *kv, bool for_delete, char *err, size_t err_size);
void eg_etcd_kv_free(struct eg_etcd_kv *kv);
/* len bytes as the JSON string of their base64 (the gateway's bytes
 * fields); NULL when out of memory. */
json_t *eg_etcd_b64(const void *p, size_t len);

size_t eg_etcd_n_endpoints(const struct eg_etcd *e);
const char *eg_etcd_endpoint_at(const struct eg_etcd *e, size_t i);
size_t eg_etcd_current(const struct eg_etcd *e);
void eg_etcd_set_current(struct eg_etcd *e, size_t i);
unsigned eg_etcd_timeout_ms(const struct eg_etcd *e);

#endif
