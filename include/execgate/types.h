/* SPDX-License-Identifier: Apache-2.0 */
/* libexecgate's own value types: what the library's calls take and return.
 *
 * They are not the pinned maps' keys and values (bpf/abi/abi.h,
 * which is internal and not installed): the library fills these from the
 * maps and back, so the kernel side may change its layout (a map made an
 * array, a field moved, a lock added) without changing libexecgate's ABI.
 * Plain C99 types only; nothing here includes a kernel header. */
#ifndef EXECGATE_TYPES_H
#define EXECGATE_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <execgate/sizes.h>

#ifdef __cplusplus
extern "C" {
#endif

/* At most this many endpoints of each kind per sandbox in an install, and
 * this many ServicePorts. */
#define EG_WORKER_MAX_ENDPOINTS 16

/* A process: (tgid, start time, executable dev+inode), the identity the
 * kernel compares. tgid is in the initial PID namespace; start_boottime_ns
 * is the group leader's start in ns of CLOCK_BOOTTIME (/proc/PID/stat
 * field 22 carries it in 10 ms ticks); exe_dev is the kernel's s_dev
 * encoding (MAJOR << 20 | MINOR), not userspace st_dev. */
struct eg_process {
	uint32_t tgid;
	uint32_t exe_dev;
	uint64_t start_boottime_ns;
	uint64_t exe_ino;
};

/* A ServicePort of the record's profile. */
struct eg_service_port {
	uint16_t port;
	uint8_t proto; /* 6 tcp, 17 udp */
};

/* A sandbox's runtime record: the execution the worker enforces. */
struct eg_runtime_record {
	uint8_t sandbox[EG_ID_BYTES];
	uint8_t worker[EG_ID_BYTES];
	uint8_t pod_uid[EG_ID_BYTES];
	/* 1 firecracker-k8s, 2 firecracker-host. 32 bits, as the map holds
	 * it, though the library's identity and every codec hold 8: frozen
	 * until the next soname (docs/api.md, "ABI stability"). A record
	 * above 255 is shown as it is and never admitted against. */
	uint32_t substrate;
	uint64_t generation;
	uint32_t activation;
	uint64_t epoch; /* moves on every replacement; streams bind to it */
	bool retired;	/* the sandbox no longer runs here: its endpoints deny */
	/* Streams of an older epoch may still be open: a writer was killed
	 * before its stream cut (docs/operators.md, "Crash recovery"). */
	bool cut_pending;
	struct eg_process bridge; /* the only process a VMM socket admits */
	struct eg_process vmm;	  /* the expected listener of VMM sockets */
	size_t n_ports;
	struct eg_service_port ports[EG_RECORD_MAX_PORTS];
};

/* A grant written by an admit: process `proc` may connect to the bridge
 * sockets of `sandbox` while the record's epoch is `epoch` and the boot
 * clock (CLOCK_BOOTTIME) is below expiry_ns. */
struct eg_grant_info {
	struct eg_process proc;
	uint8_t sandbox[EG_ID_BYTES];
	uint32_t scope;
	uint64_t generation;
	uint64_t epoch;
	uint64_t expiry_ns;
};

/* An AF_VSOCK address (context id, port). */
struct eg_vsock_addr {
	uint32_t cid;
	uint32_t port;
};

/* A guest ServicePort address: family AF_INET (4 bytes of addr used, the
 * rest zero) or AF_INET6, addr in network byte order. */
struct eg_inet_addr {
	uint32_t family;
	uint8_t addr[16];
};

#ifdef __cplusplus
}
#endif

#endif
