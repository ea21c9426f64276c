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
/* The parse of a command that signs for an execution identity (cap,
 * selection): eg_opts_next, with --key taken into *key_path and the
 * identity flags (frontend/identity_opts.h) into id. 1: another option
 * (*o, *value); 0: done, --key and every required identity flag given;
 * -1: the command exits with p->exit (help, or a usage error printed). */
struct eg_identity_opts;
int issue_next_signer(struct eg_opts *p, struct eg_identity_opts *id, const char **key_path,
		      const struct eg_opt **o, const char **value);

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
/* The signing key of a subcommand: reads the seed at path (seed_file_read)
 * and derives the key pair from it, then wipes the seed. Only the seed is
 * ever read; the public half (and so the key id) is derived, never taken
 * from a file next to it. 0, or ISSUE_EXIT_ERROR after one line
 * "execgate-issue: CMD: WHAT PATH: REASON" on stderr. */
int issue_signing_key(const char *cmd, const char *what, const char *path,
		      uint8_t pk[crypto_sign_PUBLICKEYBYTES],
		      uint8_t sk[crypto_sign_SECRETKEYBYTES]);
/* Prints a signed document's text form, one line, on stdout. ISSUE_EXIT_OK,
 * or ISSUE_EXIT_ERROR after "execgate-issue: CMD: stdout: REASON". */
int issue_print_text(const char *cmd, const char *text);
/* Creates dir/name holding content, mode 'mode', atomically and never over
 * an existing file: a temporary file (O_EXCL) linked into place. 0 or
 * -errno. */
int file_create_new(const char *dir, const char *name, const char *content, size_t len,
		    unsigned mode);

#endif
