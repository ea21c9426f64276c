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
#include "abi/abi.h"
#include "execgate/execgate.h"
#include "loader/maps/maps.h"
#include "loader/revokers/revoke.h"

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
 * own generation too. -ERANGE (err says why) when the map's substrate does
 * not fit the internal identity (core/identity.h). */
int eg_record_from_kernel(const struct eg_exec_record *k, struct eg_record *out, char *err,
			  size_t err_size);

/* CLOCK_BOOTTIME now, in the bpf_ktime_get_boot_ns() domain. */
uint64_t eg_boottime_ns(void);

/* --- install / retire ----------------------------------------------------- */

/* An install takes the library's own struct eg_install_spec (execgate.h)
 * and answers in the maps' terms: the records as written, and each
 * revoker's counts and timings. lib/records.c gives the caller the public
 * view of it (struct eg_install_report). */
struct eg_install_result {
	enum eg_install_outcome outcome;
	bool had_before;
	struct eg_exec_record before, after;
	unsigned endpoints_added;   /* paths and vsock addresses newly registered */
	unsigned endpoints_claimed; /* taken over from a retired sandbox or re-roled */
	unsigned inodes;	    /* bound socket inodes registered (LSM tier keys) */
	unsigned grants_dropped;    /* dead grants of the replaced epoch removed */
	/* streams of the replaced epoch cut (when the epoch moved, or a writer
	 * killed before its cut left one pending: loader/revokers/cut_intent.h) */
	struct eg_revoke_report streams;
};

/* "new", "replaced", "reactivated", "activation", "unchanged". */
const char *eg_install_outcome_name(enum eg_install_outcome o);

/* 0, or: -ESTALE older than what is installed (or the same generation and
 * attempt with other processes); -EEXIST an endpoint belongs to another
 * active sandbox; -ESRCH / -EINVAL a process could not be identified;
 * -EINVAL a bad endpoint path. Nothing is written unless every check passed,
 * and the record is published before the endpoints that point at it. */
int eg_install(struct eg_runtime *rt, const struct eg_install_spec *spec,
	       struct eg_install_result *res, char *err, size_t err_size);
/* eg_install that also sets the record's mode (enum eg_mode) in the same
 * record write; mode < 0 keeps the record's mode (EG_MODE_INHERIT for a
 * new record), as eg_install does. An install whose record is unchanged
 * writes nothing, its mode included: switch that with `execgate mode`. */
int eg_install_mode(struct eg_runtime *rt, const struct eg_install_spec *spec, int mode,
		    struct eg_install_result *res, char *err, size_t err_size);

/* Marks the record RETIRED and moves its epoch: every endpoint of the
 * sandbox then denies, every grant of it is dead, and its streams are cut
 * before returning (streams, may be NULL: what was cut; zero when it was
 * already retired, unless a retire killed before its cut left that cut
 * pending: then this one finishes it and counts it). 0 (also when already
 * retired), -ENOENT without a record. */
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
/* eg_forget, which first finishes a stream cut a killed retire left
 * (loader/revokers/cut_intent.h): streams (may be NULL) is what it cut, zero when
 * none was pending. When that cut fails, nothing is deleted (the error). */
int eg_forget_report(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES], unsigned *endpoints,
		     struct eg_revoke_report *streams, char *err, size_t err_size);
/* Endpoints (paths, vsock addresses, inodes) and grants naming sandbox. */
int eg_endpoints_count(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES], unsigned *count);
int eg_grants_count(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES], unsigned *n);
/* The ServicePort addresses (eg_inet_endpoints, role EG_ROLE_SERVICE) of
 * sandbox; -E2BIG when more than max. */
int eg_service_addrs_of(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES],
			struct eg_inet_key *out, size_t max, size_t *n);

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
int eg_keystore_add(const char *state_dir, const char *file, char kid_out[EG_KID_TEXT_LEN],
		    char *err, size_t err_size);
/* Like eg_keystore_add, from the contents of a public key file (typed form);
 * -EEXIST when present (kid_out still set). The caller wipes text. */
int eg_keystore_add_text(const char *state_dir, const char *text, size_t len,
			 char kid_out[EG_KID_TEXT_LEN], char *err, size_t err_size);
int eg_keystore_remove(const char *state_dir, const char *kid_text, char *err, size_t err_size);
/* Makes <state-dir>/keys hold exactly the n keys of pks: first every file
 * that is not one of them goes (a crash half-way leaves fewer keys, never
 * a withdrawn one), then each missing key is written as eg_keystore_add
 * would. 0 or -errno with err naming the file. */
int eg_keystore_replace(const char *state_dir, const uint8_t (*pks)[crypto_sign_PUBLICKEYBYTES],
			size_t n, char *err, size_t err_size);
/* <state-dir>/keyset.version: the version of the last key set applied
 * (docs/fleet.md), 0 when none. Written crash-safe. */
int eg_keystore_version_read(const char *state_dir, uint64_t *version, char *err, size_t err_size);
int eg_keystore_version_write(const char *state_dir, uint64_t version, char *err, size_t err_size);
/* Replaces ks with the keys of <state-dir>/keys (its generation moves on);
 * a missing directory is an empty set. A file that does not load (not a
 * public key file, a duplicate, beyond EG_KEYSET_MAX) is skipped and named
 * in warn, one line each ("key file PATH: NAME: DETAIL"); warn may be
 * NULL. -errno with err set only when the directory cannot be read, and ks
 * is then untouched. */
int eg_keystore_load(const char *state_dir, struct eg_keyset *ks, char *warn, size_t warn_size,
		     char *err, size_t err_size);

#endif
