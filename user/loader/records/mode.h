/* SPDX-License-Identifier: Apache-2.0 */
/* Enforce and audit (docs/design.md, "Modes: enforce and audit"): the
 * global mode word in eg_mode and each record's own mode. */
#ifndef EXECGATE_LOADER_MODE_H
#define EXECGATE_LOADER_MODE_H

#include <stddef.h>
#include "loader/records/runtime.h"

/* "enforce" / "audit" (and "inherit" for a record); NULL for others. */
const char *eg_mode_name(__u32 mode);
/* 0 and *mode, or -EINVAL for another word. inherit only if allowed. */
int eg_mode_parse(const char *text, bool inherit, __u32 *mode);
/* The mode a decision without its own record takes: only EG_MODE_AUDIT
 * audits (a word never written enforces). */
__u32 eg_mode_effective(__u32 global_word_mode);
/* The mode sandbox's decisions take, by the hooks' rule
 * (bpf/execgate_common.bpf.h, eg_decide_audit): its record's own mode,
 * else the global word (also when it has no record). 0 and *audit, or the
 * negative errno of a map read that failed (callers then enforce). */
int eg_mode_of_sandbox(const struct eg_maps *m, const __u8 sandbox[EG_ID_BYTES], bool *audit);

/* Sets the global mode (one 8-byte write that also counts the switch) and
 * logs it with who. *before: the mode it replaced. */
int eg_mode_switch_global(struct eg_runtime *rt, __u32 mode, const char *who, __u32 *before,
			  char *err, size_t err_size);
/* Sets a record's own mode under the writer lock rt holds (read, then one
 * locked write of the whole record), logged with who. -ENOENT without a
 * record. */
int eg_mode_switch_sandbox(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES], __u32 mode,
			   const char *who, __u32 *before, char *err, size_t err_size);

/* The modes in effect: the global one, its switch count, and how many
 * records decide in each mode (a record's own mode, else the global). */
struct eg_mode_census {
	__u32 global; /* EG_MODE_ENFORCE or EG_MODE_AUDIT */
	__u32 switches;
	unsigned enforce, audit;
};
int eg_mode_census_read(const struct eg_maps *m, struct eg_mode_census *out);
/* Audit decides somewhere: globally, or for at least one record. */
bool eg_mode_census_audits(const struct eg_mode_census *c);

#endif
