/* SPDX-License-Identifier: Apache-2.0 */
/* The execution identity (docs/design.md §3) travels in many structs: core's
 * eg_record, eg_capability and eg_selection, the public eg_runtime_record
 * and eg_install_spec (include/execgate/), the map's eg_exec_record
 * (bpf/abi/abi.h). Its six fields have the same names in every
 * one of them, so one copy serves them all, and a seventh field would be
 * added here once. Macros, not functions: the structs' types differ (and
 * so may the width of substrate); dst and src are pointers. */
#ifndef EXECGATE_CORE_IDENTITY_H
#define EXECGATE_CORE_IDENTITY_H

#include <string.h>
#include "execgate/sizes.h"

#define EG_IDENTITY_COPY(dst, src)                                                                 \
	do {                                                                                       \
		memcpy((dst)->sandbox, (src)->sandbox, EG_ID_BYTES);                               \
		memcpy((dst)->worker, (src)->worker, EG_ID_BYTES);                                 \
		memcpy((dst)->pod_uid, (src)->pod_uid, EG_ID_BYTES);                               \
		(dst)->substrate = (src)->substrate;                                               \
		(dst)->generation = (src)->generation;                                             \
		(dst)->activation = (src)->activation;                                             \
	} while (0)

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
