/* SPDX-License-Identifier: Apache-2.0 */
/* The loader library: runtime records, endpoints and grants in the pinned
 * maps, and the verification key set in the state dir. The `execgate` CLI is
 * a thin layer over this.
 *
 * Source of truth: the pinned maps ARE the runtime records. They live exactly
 * as long as kernel enforcement does (until `execgate unload` or a reboot,
 * which no Firecracker VM survives either), so a loader that exits, crashes
 * or restarts loses nothing: the next command reads what the kernel enforces.
 * The key set lives in <state-dir>/keys/<kid>.pub (temp file + rename).
 * Writers serialise on flock(<state-dir>/lock). */
#ifndef EXECGATE_LOADER_RUNTIME_H
#define EXECGATE_LOADER_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/admission.h"
#include "core/ids.h"
#include "core/record.h"
#include "execgate/abi.h"
#include "loader/maps.h"
#include "loader/revoke.h"

struct eg_runtime {
	const char *pin_dir;
	const char *state_dir;
	struct eg_maps maps;
	int lock_fd;
};

/* Opens the pinned maps; with lock, also creates the state dir and takes
 * its writer lock. -ENOENT (err: not loaded) when the pin dir has no maps. */
int eg_runtime_open(struct eg_runtime *rt, const char *pin_dir, const char *state_dir, bool lock,
		    char *err, size_t err_size);
void eg_runtime_close(struct eg_runtime *rt);

/* The comparator's view of a kernel record: a RETIRED record has retired its
 * own generation too. */
void eg_record_from_kernel(const struct eg_exec_record *k, struct eg_record *out);

/* CLOCK_BOOTTIME now, in the bpf_ktime_get_boot_ns() domain. */
uint64_t eg_boottime_ns(void);

/* --- install / retire ----------------------------------------------------- */

#define EG_INSTALL_MAX_ENDPOINTS 16

struct eg_install_req {
	struct eg_record
	    id; /* sandbox, worker, pod_uid, substrate, generation, activation, ports */
	pid_t bridge_pid;
	pid_t vmm_pid; /* 0: no VMM process registered */
	const char *bridge_sockets[EG_INSTALL_MAX_ENDPOINTS];
	size_t n_bridge_sockets;
	const char *vmm_sockets[EG_INSTALL_MAX_ENDPOINTS];
	size_t n_vmm_sockets;
	struct eg_vsock_key vsock[EG_INSTALL_MAX_ENDPOINTS]; /* VMM role (LSM tier) */
	size_t n_vsock;
	struct eg_inet_key service_addrs[EG_INSTALL_MAX_ENDPOINTS]; /* TCP tier */
	size_t n_service_addrs;
};

enum eg_install_kind {
	EG_INSTALL_NEW,		/* no record before: epoch 1 */
	EG_INSTALL_REPLACED,	/* newer generation: epoch moved */
	EG_INSTALL_REACTIVATED, /* record was retired: epoch moved */
	EG_INSTALL_ACTIVATION,	/* same generation, newer attempt: epoch kept */
	EG_INSTALL_UNCHANGED,	/* identical: record untouched, endpoints ensured */
};

struct eg_install_result {
	enum eg_install_kind kind;
	bool had_before;
	struct eg_exec_record before, after;
	unsigned endpoints_added;   /* paths and vsock addresses newly registered */
	unsigned endpoints_claimed; /* taken over from a retired sandbox or re-roled */
	unsigned inodes;	    /* bound socket inodes registered (LSM tier keys) */
	unsigned grants_dropped;    /* dead grants of the replaced epoch removed */
	/* streams of the replaced epoch cut (only when the epoch moved) */
	struct eg_revoke_report streams;
};

const char *eg_install_kind_name(enum eg_install_kind k);

/* 0, or: -ESTALE older than what is installed (or the same generation and
 * attempt with other processes); -EEXIST an endpoint belongs to another
 * active sandbox; -ESRCH / -EINVAL a process could not be identified;
 * -EINVAL a bad endpoint path. Nothing is written unless every check passed,
 * and the record is published before the endpoints that point at it. */
int eg_install(struct eg_runtime *rt, const struct eg_install_req *req,
	       struct eg_install_result *res, char *err, size_t err_size);

/* Marks the record RETIRED and moves its epoch: every endpoint of the
 * sandbox then denies, every grant of it is dead, and its streams are cut
 * before returning (streams, may be NULL: what was cut; zero when it was
 * already retired). 0 (also when already retired), -ENOENT without a
 * record. */
int eg_retire_report(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES],
		     struct eg_exec_record *after, struct eg_revoke_report *streams, char *err,
		     size_t err_size);
/* eg_retire_report without the report. */
int eg_retire(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES], struct eg_exec_record *after,
	      char *err, size_t err_size);

/* Deletes a RETIRED record, its endpoints and leftover grants, endpoints
 * first. -ENOENT without a record, -EBUSY for an active one. */
int eg_forget(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES], unsigned *endpoints,
	      char *err, size_t err_size);
/* Endpoints (paths, vsock addresses, inodes) and grants naming sandbox. */
int eg_endpoints_count(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES], unsigned *count);
/* The guest addresses (eg_inet_endpoints keys) registered for sandbox, up
 * to max of them. */
int eg_service_addrs_of(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES],
			struct eg_inet_key *out, size_t max, size_t *n);
int eg_grants_count(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES], unsigned *n);

/* --- grants --------------------------------------------------------------- */

/* Deletes every grant of tgid pid for sandbox. -ENOENT when there was none. */
int eg_revoke(struct eg_runtime *rt, pid_t pid, const __u8 sandbox[EG_ID_BYTES], unsigned *removed,
	      char *err, size_t err_size);

/* Deletes dead grants (stale epoch, expired, record gone or retired). With
 * sandbox non-NULL only that sandbox's. */
int eg_grants_gc(struct eg_runtime *rt, const __u8 *sandbox, unsigned *removed);

/* --- keys ----------------------------------------------------------------- */

/* Validates a public key file (typed form, core rules; a secret is refused)
 * and stores it as <state-dir>/keys/<kid>.pub, 0644, by temporary file and
 * rename. -EEXIST when that key id is present (kid_out still set); -EINVAL
 * with err naming the reason for a refused file. */
int eg_keystore_add(const char *state_dir, const char *file, char kid_out[EG_KEY_ID_TEXT_LEN],
		    char *err, size_t err_size);
/* Like eg_keystore_add, from the contents of a public key file (typed form);
 * -EEXIST when present (kid_out still set). The caller wipes text. */
int eg_keystore_add_text(const char *state_dir, const char *text, size_t len,
			 char kid_out[EG_KEY_ID_TEXT_LEN], char *err, size_t err_size);
int eg_keystore_remove(const char *state_dir, const char *kid_text, char *err, size_t err_size);
/* Loads <state-dir>/keys; a missing directory is an empty set. */
int eg_keystore_load(const char *state_dir, struct eg_keyset *ks, char *err, size_t err_size);

#endif
