/* SPDX-License-Identifier: Apache-2.0 */
/* The execution identity (docs/design.md §3): one struct, embedded as
 * `id` in every internal struct that names an execution (core's
 * eg_record, eg_capability and eg_selection), so that one assignment
 * copies it and a seventh field is added here once.
 *
 * Three layouts outside userspace's control keep their own copies of the
 * fields and are converted here, each in one function, never by a cast:
 *  - the public eg_runtime_record and eg_install_spec (include/execgate/,
 *    frozen until the next soname: docs/api.md, "ABI stability");
 *  - the map's eg_exec_record (bpf/abi/abi.h), whose layout pinned maps
 *    of an older loader share.
 * The public record and the map hold substrate in 32 bits; a value that
 * does not fit the internal width is refused (-ERANGE), never truncated: a
 * truncated 0x101 would compare equal to a capability's 1. */
#ifndef EXECGATE_CORE_IDENTITY_H
#define EXECGATE_CORE_IDENTITY_H

#include <stddef.h>
#include <stdint.h>
#include "execgate/sizes.h"

struct eg_identity {
	uint8_t sandbox[EG_ID_BYTES];
	uint8_t worker[EG_ID_BYTES];
	uint8_t pod_uid[EG_ID_BYTES]; /* all-zero outside Kubernetes */
	/* enum eg_substrate (core/capability.h). 8 bits: every identity that
	 * reaches a comparison comes from the capability codec or the
	 * selection codec, and both carry substrate in one byte
	 * (docs/capability.md and docs/fleet.md, byte 1); the install spec
	 * takes a uint8_t too. Only the public record and the map are wider,
	 * and nothing the kernel runs reads the field (bpf/ never does). */
	uint8_t substrate;
	uint64_t generation;
	uint32_t activation;
};

struct eg_exec_record;
struct eg_runtime_record;
struct eg_install_spec;

/* From the map's record: -ERANGE (err says why) when its substrate does
 * not fit, and then *id is zeroed. */
int eg_identity_from_exec(struct eg_identity *id, const struct eg_exec_record *k, char *err,
			  size_t err_size);
void eg_identity_to_exec(struct eg_exec_record *k, const struct eg_identity *id);
/* From the public record: the same refusal. */
int eg_identity_from_runtime(struct eg_identity *id, const struct eg_runtime_record *r, char *err,
			     size_t err_size);
void eg_identity_to_runtime(struct eg_runtime_record *r, const struct eg_identity *id);
/* The install spec holds substrate in the internal width: nothing to refuse. */
void eg_identity_from_spec(struct eg_identity *id, const struct eg_install_spec *s);
void eg_identity_to_spec(struct eg_install_spec *s, const struct eg_identity *id);

/* A ServicePort profile: (port, proto) pairs, at most EG_RECORD_MAX_PORTS
 * of them; dst_n (an lvalue) gets how many were copied. */
#define EG_PORTS_COPY(dst_ports, dst_n, src_ports, src_n)                                          \
	do {                                                                                       \
		size_t eg_i_;                                                                      \
		for (eg_i_ = 0; eg_i_ < (size_t)(src_n) && eg_i_ < EG_RECORD_MAX_PORTS; eg_i_++) { \
			(dst_ports)[eg_i_].port = (src_ports)[eg_i_].port;                         \
			(dst_ports)[eg_i_].proto = (src_ports)[eg_i_].proto;                       \
		}                                                                                  \
		(dst_n) = eg_i_;                                                                   \
	} while (0)

#endif
