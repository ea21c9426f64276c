/* SPDX-License-Identifier: Apache-2.0 */
/* The TCP / ServicePort tier's map I/O: guest addresses (eg_inet_endpoints
 * keys) and ServicePort grants (eg_service_grants), abi.h TCP section. */
#ifndef EXECGATE_LOADER_INET_H
#define EXECGATE_LOADER_INET_H

#include <stddef.h>
#include <stdint.h>
#include "abi/abi.h"
#include "execgate/text.h" /* EG_INET_TEXT_MAX */
#include "execgate/types.h"
#include "loader/maps/maps.h"

/* "10.0.0.2" or "fd00::2" -> key. A v4-mapped v6 address becomes AF_INET,
 * as the BPF side looks it up. -EINVAL for anything else. */
int eg_inet_key_parse(const char *text, struct eg_inet_key *out);
/* Canonical copy of k into out (pad zeroed, v4-mapped folded); -EINVAL for
 * an unknown family or the unspecified, multicast or broadcast address. */
int eg_inet_key_check(const struct eg_inet_key *k, struct eg_inet_key *out);
/* Text form into buf (EG_INET_TEXT_MAX), returns buf. */
const char *eg_inet_key_format(const struct eg_inet_key *k, char *buf);
/* The same for the library's own address type (execgate/types.h). */
int eg_inet_addr_parse(const char *text, struct eg_inet_addr *out);
const char *eg_inet_addr_format(const struct eg_inet_addr *a, char *buf);

/* Sets k's bit in eg_inet_hint (only after its endpoint exists). */
int eg_inet_hint_set(int hint_fd, const struct eg_inet_key *k);

int eg_service_grant_read(const struct eg_maps *m, const struct eg_service_grant_key *key,
			  struct eg_service_grant *out);
int eg_service_grant_write(const struct eg_maps *m, const struct eg_service_grant *g);
/* Deletes dead ServicePort grants (stale epoch, expired, record gone or
 * retired); with sandbox non-NULL only that sandbox's. Adds the number
 * deleted to *removed. */
int eg_service_grants_gc(const struct eg_maps *m, const __u8 *sandbox, uint64_t boot_ns,
			 unsigned *removed);
/* Deletes every ServicePort grant of process tgid for sandbox (`revoke`),
 * adding the number deleted to *removed. */
#define EG_INET_REVOKE_MAX 4096
int eg_service_grants_revoke(const struct eg_maps *m, __u32 tgid, const __u8 *sandbox,
			     unsigned *removed);

#endif
