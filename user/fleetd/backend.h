/* SPDX-License-Identifier: Apache-2.0 */
/* Where the fleet's worker side (user/fleetd/) meets enforcement: every
 * call fleetd makes into the worker's records, keys and modes goes through
 * one of these, and nothing else of fleetd touches them. execgated runs
 * the real one (backend_worker.c: libexecgate's eg_worker_* calls, the
 * BPF maps under them, exactly what fleetd called before this seam
 * existed); the scale soak's hollow workers run the recording one
 * (hollow.c: records, keys and modes in memory, so that one process hosts
 * hundreds of workers). The watch, the verification, the rules of
 * core/fleet_apply.c, the stored selections and the signed acks are the
 * same code for both. tests/daemon/test_fleet_hollow.c checks that a
 * hollow and a real worker decide alike on one stream of documents. */
#ifndef EXECGATE_FLEETD_BACKEND_H
#define EXECGATE_FLEETD_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <execgate/execgate.h>

/* Each call has the contract of the eg_worker_* call of the same name
 * (include/execgate/execgate.h): the same return codes, the same err. */
struct eg_fleet_backend {
	const char *name; /* "bpf" or "hollow", for status */
	int (*keys_version)(void *be, uint64_t *version, char *err, size_t err_size);
	int (*keys_list)(void *be, int (*fn)(const char *kid, const uint8_t pk[32], void *ctx),
			 void *ctx);
	int (*keys_replace)(void *be, const uint8_t (*pks)[32], size_t n, uint64_t version,
			    char *err, size_t err_size);
	int (*install_mode)(void *be, const struct eg_install_spec *spec, const char *mode,
			    struct eg_install_report *rep, char *err, size_t err_size);
	int (*record)(void *be, const uint8_t sandbox[EG_ID_BYTES], struct eg_runtime_record *out,
		      char *err, size_t err_size);
	int (*retire_report)(void *be, const uint8_t sandbox[EG_ID_BYTES],
			     struct eg_runtime_record *after, struct eg_stream_cuts *streams,
			     char *err, size_t err_size);
	int (*mode)(void *be, const uint8_t sandbox[EG_ID_BYTES], char *mode, size_t mode_size,
		    char *err, size_t err_size);
};

/* The real one: be is the struct eg_worker *. */
extern const struct eg_fleet_backend eg_fleet_backend_worker;

#endif
