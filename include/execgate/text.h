/* SPDX-License-Identifier: Apache-2.0 */
/* The text forms of libexecgate's vocabulary, as the CLI, the daemon and an
 * integrator read and write them: scopes, substrates, ServicePorts,
 * protocols, guest addresses, denial reasons and hooks. One parser and one
 * formatter for each, so every front end spells them the same way. Plain C
 * types only: no kernel header. */
#ifndef EXECGATE_TEXT_H
#define EXECGATE_TEXT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A ServicePort's transport protocol (IP protocol numbers). */
enum eg_proto {
	EG_PROTO_NONE = 0,
	EG_PROTO_TCP = 6,
	EG_PROTO_UDP = 17,
};

/* "file.read,exec" <-> scope bits. parse: 0 or -EINVAL (an unknown name,
 * an empty item). format: a comma-separated list, snprintf-style (returns
 * the length it needed). */
int eg_scope_parse(const char *list, uint32_t *out);
int eg_scope_format(uint32_t scope, char *out, size_t size);
/* "firecracker-k8s" (1), "firecracker-host" (2); parse: 0 or -EINVAL.
 * name: "unknown" for another number. */
int eg_substrate_parse(const char *name, uint8_t *out);
const char *eg_substrate_name(uint8_t substrate);
/* "8080/tcp", "53/udp" (port 1-65535); 0 or -EINVAL. */
int eg_port_parse(const char *text, uint16_t *port, uint8_t *proto);
const char *eg_proto_name(uint8_t proto); /* "none", "tcp", "udp", "unknown" */
/* An unsigned decimal number up to max: 0, -ERANGE above max, -EINVAL
 * for anything else (a sign, a space, an empty string). */
int eg_parse_u64(const char *text, uint64_t max, uint64_t *out);

/* A guest's ServicePort address: family AF_INET or AF_INET6, addr in
 * network byte order (the first 4 bytes for IPv4, the rest zero). parse
 * takes one unicast address, 0 or -EINVAL. format writes the address, or
 * "family N" for another family, and returns buf. */
#define EG_INET_TEXT_MAX 56 /* INET6_ADDRSTRLEN and a family tag */
int eg_inet_parse(const char *text, uint32_t *family, uint8_t addr[16]);
const char *eg_inet_format(uint32_t family, const uint8_t addr[16], char buf[EG_INET_TEXT_MAX]);

/* VSOCK CIDs that never name a guest: any (0), the host (2), -1. */
int eg_vsock_cid_is_guest(uint32_t cid); /* 1 or 0 */

/* The kernel side's denial reasons and hooks, as events and counters
 * name them: "deny-no-grant", "connect_unix"; "unknown" otherwise. Kernel
 * reasons are numbered, append only (the events' "reason", the index of
 * eg_worker_counters); EG_KREASON_MAX is room for every number a kernel
 * side of this major version may report. */
#define EG_KREASON_MAX		 64
#define EG_KREASON_EVENT_DROPPED 13 /* not a verdict: an event the ring buffer lost */
const char *eg_kreason_name(uint32_t reason);
const char *eg_hook_name(uint32_t hook);

/* "pid 42 (start 123, exe 8:1/456)": a process as identified by
 * eg_worker_identify (execgate.h). Returns what snprintf returns. */
struct eg_process;
int eg_process_text(const struct eg_process *p, char *out, size_t size);

#ifdef __cplusplus
}
#endif

#endif
