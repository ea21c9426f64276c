/* SPDX-License-Identifier: Apache-2.0 */
/* The status report, written by the library over what the loader collects
 * (loader/tiers/tier_report.h, eg_tier_report_collect). */
#ifndef EXECGATE_LIB_REPORT_H
#define EXECGATE_LIB_REPORT_H

#include <stdbool.h>
#include <stdio.h>

struct eg_probe_record;
struct eg_attach_check;

/* Tiers, programs, guarantees (and, with full, counters and map fill) for
 * pin_dir, as text or JSON (docs/schema/status.schema.json), offered tiers
 * from probed. Reads pins and maps only. 0 when loaded, -ENOENT when
 * nothing is loaded (the report is written either way), other negative
 * errnos on failure. attach (may be NULL) gets where the cgroup programs
 * are attached (`status --require-root-attach`); out NULL: only *attach is
 * filled, nothing is printed (execgated's start-up warning). */
int eg_report_write(FILE *out, const char *pin_dir, const struct eg_probe_record *probed, bool json,
		    bool full, struct eg_attach_check *attach);
/* eg_report_write with, when state_dir is not NULL, the key set that loads
 * from <state_dir>/keys (its size and digest: key_set, "key set:"). */
int eg_report_write_keys(FILE *out, const char *pin_dir, const char *state_dir,
			 const struct eg_probe_record *probed, bool json, bool full,
			 struct eg_attach_check *attach);

#endif
