/* SPDX-License-Identifier: Apache-2.0 */
/* The epoch rule: whether an install keeps the installed record's epoch,
 * moves it (the streams bound to the old one are cut), or is refused.
 * Pure: loader/records/install.c reads the installed record, asks here, and writes
 * what this says; tests/unit/test_epoch_rule.c checks every row.
 *
 * | row | installed record            | install asks                      | outcome           |
 * epoch   | | --- | --------------------------- | --------------------------------- |
 * ----------------- | ------- | | 1   | none                        | anything | new | 1       | |
 * 2   | generation G                | generation below G                | refused: stale    | - |
 * | 3   | generation G                | generation above G                | replaced          | old
 * + 1 | | 4   | G, activation A             | G, activation below A             | refused: stale |
 * -       | | 5   | G, A, retired               | G, A                              | refused:
 * retired  | -       | | 6   | G, A, retired               | G, activation above A             |
 * reactivated       | old + 1 | | 7   | G, A, active                | G, activation above A |
 * activation        | old     | | 8   | G, A, active                | G, A, the same execution |
 * unchanged         | old     | | 9   | G, A, active                | G, A, another route or
 * processes | refused: changed  | -       |
 *
 * "The same execution" (row 8 and 9) is the same worker, pod, substrate,
 * bridge and VMM processes and ports: loader/records/install.c compares the two
 * records and says so in same_execution. */
#ifndef EXECGATE_CORE_EPOCH_RULE_H
#define EXECGATE_CORE_EPOCH_RULE_H

#include <stdbool.h>
#include <stdint.h>

/* What the rule reads of the installed record. */
struct eg_epoch_installed {
	uint64_t generation;
	uint32_t activation;
	bool retired;
	uint64_t epoch;
};

/* What the rule reads of the install asked. */
struct eg_epoch_asked {
	uint64_t generation;
	uint32_t activation;
	bool same_execution; /* as the installed record: rows 8 and 9 */
};

enum eg_epoch_outcome {
	EG_EPOCH_NEW,		    /* row 1 */
	EG_EPOCH_STALE_GENERATION,  /* row 2 */
	EG_EPOCH_REPLACED,	    /* row 3 */
	EG_EPOCH_STALE_ACTIVATION,  /* row 4 */
	EG_EPOCH_STALE_RETIRED,	    /* row 5 */
	EG_EPOCH_REACTIVATED,	    /* row 6 */
	EG_EPOCH_ACTIVATION,	    /* row 7 */
	EG_EPOCH_UNCHANGED,	    /* row 8 */
	EG_EPOCH_CHANGED_EXECUTION, /* row 9 */
};

/* The row that applies to asked against installed (NULL: no record), and
 * in *epoch the epoch the new record carries (unset for a refusal). */
enum eg_epoch_outcome eg_epoch_rule(const struct eg_epoch_installed *installed,
				    const struct eg_epoch_asked *asked, uint64_t *epoch);

/* A refusal (rows 2, 4, 5 and 9): the install is not written. */
bool eg_epoch_refused(enum eg_epoch_outcome o);
/* The epoch moves (rows 3 and 6): the old epoch's streams are cut. */
bool eg_epoch_moves(enum eg_epoch_outcome o);

#endif
