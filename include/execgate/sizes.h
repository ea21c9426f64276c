/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/* The sizes every layer shares, each defined once: the kernel map layout
 * (bpf/abi/abi.h, also compiled into bpf/), the public API (execgate.h) and the
 * core (user/core/). Macros only and no includes, so that BPF programs and
 * userspace read the same file. */
#ifndef EXECGATE_SIZES_H
#define EXECGATE_SIZES_H

/* A sandbox, worker, pod or token id: the 16 bytes of a UUID. */
#define EG_ID_BYTES 16
/* Its canonical text, 8-4-4-4-12 hex digits, and the NUL. */
#define EG_UUID_TEXT_LEN 37
/* The ServicePort profile of one runtime record: at most this many
 * (port, protocol) pairs. struct eg_exec_record (abi.h) stores them in
 * place, so the number is part of the map layout. */
#define EG_RECORD_MAX_PORTS 8
/* A Unix socket path as connect() takes it, sizeof(sockaddr_un.sun_path):
 * the maps' path keys and a denial's path hold this many bytes. */
#define EG_UNIX_PATH_MAX 108
/* A task's comm, TASK_COMM_LEN: a denial's caller. */
#define EG_COMM_LEN 16
/* A key id's text form: 16 hex digits (8 bytes) and the NUL. */
#define EG_KID_TEXT_LEN 17
/* A worker-signed verdict's text form (base64url, unpadded) and the NUL. */
#define EG_SIGNED_VERDICT_TEXT_MAX 256
/* The capacity of the tcp tier's socket tag map, eg_inet_tags: admitted
 * inet sockets open at once. The default is abi.h's; load --inet-tags and
 * execgated's inet_tags take MIN..MAX (docs/operators.md). Plain numbers:
 * the front ends print them in their help. */
#define EG_INET_TAGS_DEFAULT 65536
#define EG_INET_TAGS_MIN     1024
#define EG_INET_TAGS_MAX     1048576

/* One of the sizes above as a string literal, for help text built at
 * compile time: EG_SIZE_TEXT(EG_INET_TAGS_MAX) is "1048576". */
#define EG_SIZE_TEXT(x)	 EG_SIZE_TEXT_(x)
#define EG_SIZE_TEXT_(x) #x

#endif
