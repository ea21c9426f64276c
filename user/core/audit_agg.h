/* SPDX-License-Identifier: Apache-2.0 */
/* The rollout report's aggregate (docs/operators.md, "Rolling enforcement
 * out"): audit-marked events folded into rows keyed by (reason, hook,
 * sandbox, comm, executable), each with a count and the wall-clock times
 * it was first and last seen. At most max_rows distinct rows: an event of
 * a key that finds the table full is folded into the one "other" row, so
 * memory stays bounded whatever the callers' comm and executables are.
 * Pure and single-threaded: the caller locks (user/lib/audit.c). */
#ifndef EXECGATE_CORE_AUDIT_AGG_H
#define EXECGATE_CORE_AUDIT_AGG_H

#include <stddef.h>
#include <stdint.h>
#include "execgate/sizes.h"

#define EG_AUDIT_ROWS_DEFAULT 4096
#define EG_AUDIT_ROWS_LIMIT   (1U << 20)
#define EG_AUDIT_NAME_MAX     32   /* a reason or hook name, with its NUL */
#define EG_AUDIT_COMM_LEN     16   /* the kernel's TASK_COMM_LEN */
#define EG_AUDIT_EXE_MAX      4096 /* PATH_MAX: longer is cut there */

struct eg_audit_key {
	char reason[EG_AUDIT_NAME_MAX];
	char hook[EG_AUDIT_NAME_MAX];
	uint8_t sandbox[EG_ID_BYTES]; /* all zero: no sandbox */
	char comm[EG_AUDIT_COMM_LEN]; /* raw bytes, NUL-padded */
	const char *exe;	      /* NULL: unknown (the process was gone) */
};

struct eg_audit_row {
	struct eg_audit_key key; /* key.exe is the row's own copy */
	uint64_t count;
	int64_t first_ns, last_ns; /* wall clock */
};

struct eg_audit_other {
	uint64_t count;
	int64_t first_ns, last_ns; /* 0 while count is 0 */
};

struct eg_audit_agg {
	struct eg_audit_row *rows;
	size_t nrows, max_rows;
	uint32_t *slots; /* open addressing: row index + 1, 0 empty */
	size_t nslots;	 /* a power of two, >= 2 * max_rows */
	struct eg_audit_other other;
	uint64_t events;	    /* every event added, folded or not */
	unsigned char hash_key[16]; /* crypto_shorthash_KEYBYTES, random */
};

/* max_rows 0: EG_AUDIT_ROWS_DEFAULT; more than EG_AUDIT_ROWS_LIMIT:
 * -EINVAL. 0, -ENOMEM, or -EIO when libsodium cannot start. */
int eg_audit_agg_init(struct eg_audit_agg *a, size_t max_rows);
void eg_audit_agg_free(struct eg_audit_agg *a);
/* Folds one event at wall_ns into its row (made when there is room), else
 * into the other row: never fails. */
void eg_audit_agg_add(struct eg_audit_agg *a, const struct eg_audit_key *k, int64_t wall_ns);

/* The text form of a row field that holds a caller's bytes (comm, the
 * executable), from its JSON form (where the report already wrote bytes
 * outside printable ASCII, and the backslash, as \xNN): one token on one
 * line. Every byte but printable ASCII other than the space becomes \xNN,
 * so whatever a report holds, a row stays one line of space-separated
 * tokens. Reads up to max bytes of s (to its NUL); out_size >= 4 * max + 1
 * never cuts. Returns out. */
char *eg_audit_escape(const char *s, size_t max, char *out, size_t out_size);

#endif
