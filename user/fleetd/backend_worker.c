// SPDX-License-Identifier: Apache-2.0
/* The real backend of the fleet's worker side (fleetd/backend.h): each
 * call is libexecgate's, on the worker's BPF maps and state dir, as
 * execgated runs it. */
#include "fleetd/backend.h"

static int bw_keys_version(void *be, uint64_t *version, char *err, size_t err_size)
{
	return eg_worker_keys_version(be, version, err, err_size);
}

static int bw_keys_list(void *be, int (*fn)(const char *kid, const uint8_t pk[32], void *ctx),
			void *ctx)
{
	return eg_worker_keys_list(be, fn, ctx);
}

static int bw_keys_replace(void *be, const uint8_t (*pks)[32], size_t n, uint64_t version,
			   char *err, size_t err_size)
{
	return eg_worker_keys_replace(be, pks, n, version, err, err_size);
}

static int bw_install_mode(void *be, const struct eg_install_spec *spec, const char *mode,
			   struct eg_install_report *rep, char *err, size_t err_size)
{
	return eg_worker_install_mode(be, spec, mode, rep, err, err_size);
}

static int bw_record(void *be, const uint8_t sandbox[EG_ID_BYTES], struct eg_runtime_record *out,
		     char *err, size_t err_size)
{
	return eg_worker_record(be, sandbox, out, err, err_size);
}

static int bw_retire_report(void *be, const uint8_t sandbox[EG_ID_BYTES],
			    struct eg_runtime_record *after, struct eg_stream_cuts *streams,
			    char *err, size_t err_size)
{
	return eg_worker_retire_report(be, sandbox, after, streams, err, err_size);
}

static int bw_mode(void *be, const uint8_t sandbox[EG_ID_BYTES], char *mode, size_t mode_size,
		   char *err, size_t err_size)
{
	return eg_worker_mode(be, sandbox, mode, mode_size, err, err_size);
}

const struct eg_fleet_backend eg_fleet_backend_worker = {
    .name = "bpf",
    .keys_version = bw_keys_version,
    .keys_list = bw_keys_list,
    .keys_replace = bw_keys_replace,
    .install_mode = bw_install_mode,
    .record = bw_record,
    .retire_report = bw_retire_report,
    .mode = bw_mode,
};
