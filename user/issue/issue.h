/* SPDX-License-Identifier: Apache-2.0 */
/* execgate-issue: the control-plane side. The only program that ever holds
 * a signing seed. Exit codes: 0 done, 1 the operation failed (unreadable
 * key, I/O), 2 usage. */
#ifndef EXECGATE_ISSUE_H
#define EXECGATE_ISSUE_H

#include <stddef.h>
#include <stdint.h>
#include <sodium.h>
#include "frontend/opts.h"

enum {
	ISSUE_EXIT_OK = 0,
	ISSUE_EXIT_ERROR = 1,
	ISSUE_EXIT_USAGE = 2,
};

/* The parse of a subcommand: frontend/opts.h over its flags; help prints
 * "usage: execgate-issue CMD SYNOPSIS", about, then every flag. */
struct issue_cmd {
	const char *name, *synopsis, *about;
	const struct eg_opt *opts;
};
void issue_opts_init(struct eg_opts *p, const struct issue_cmd *cmd, int argc, char **argv);

int cmd_keygen(int argc, char **argv);
int cmd_cap(int argc, char **argv);
int cmd_pubkey(int argc, char **argv);
/* The fleet's signed documents (docs/fleet.md). */
int cmd_selection(int argc, char **argv);
int cmd_keyset(int argc, char **argv);
int cmd_inspect_selection(int argc, char **argv);
int cmd_inspect_keyset(int argc, char **argv);
/* Waits for the workers' acks in etcd (docs/fleet.md, "Fence"). */
int cmd_fence(int argc, char **argv);

/* Reads a seed file: "execgate-ed25519-secret-v1 <64 hex>" (core/key_file.h),
 * mode 0600 or stricter. 0, or -errno with err holding the reason (the
 * eg_key_err name and detail for a refused file). */
int seed_file_read(const char *path, uint8_t seed[crypto_sign_SEEDBYTES], char *err,
		   size_t err_size);
/* Creates dir/name holding content, mode 'mode', atomically and never over
 * an existing file: a temporary file (O_EXCL) linked into place. 0 or
 * -errno. */
int file_create_new(const char *dir, const char *name, const char *content, size_t len,
		    unsigned mode);

#endif
