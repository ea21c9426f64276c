/* SPDX-License-Identifier: Apache-2.0 */
/* The install rule (docs/fleet.md, "The install rule"), one rule for every
 * writer: an install names this worker, and with the fleet on it is the
 * execution the signed selection in force names. Pure: the library's
 * install path (user/lib/fleet_gate.c) reads the state it needs, so that
 * `execgate install`, PUT /v1/sandboxes/{uuid} and any other caller of
 * eg_worker_install obey the same rule; tests/unit/test_fleet_gate.c
 * checks every case. */
#ifndef EXECGATE_CORE_FLEET_GATE_H
#define EXECGATE_CORE_FLEET_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <execgate/execgate.h>
#include "core/keyset.h"
#include "core/selection.h"

/* Under <state_dir>: the marker execgated writes when it takes part in the
 * fleet (one line, its worker id) and removes at a start without it, and
 * the selections in force that user/fleetd/selections.c stores, one file per
 * sandbox, "<mod_revision> <selection text>\n". */
#define EG_FLEET_ON_FILE	"fleet/on"
#define EG_FLEET_SELECTIONS_DIR "fleet/selections"

/* One stored selection's line: 0 with raw (EG_SEL_MAX_LEN bytes) and its
 * length, -EINVAL when the line is not "<revision> <text>" with a revision
 * above 0 and a text that decodes to a selection's length. */
int eg_fleet_stored_parse(const char *line, uint8_t *raw, size_t *raw_len, long long *rev);

enum eg_fleet_gate {
	EG_GATE_OK = 0,
	EG_GATE_WRONG_WORKER, /* the install names another worker than this one */
	EG_GATE_NOT_SELECTED, /* fleet on: the selection in force does not name it */
};

/* The one rule. self: this worker's id (NULL: not known, and the worker
 * check is not made); fleet_on: the marker exists; has_sel/sel: the
 * selection in force for the sandbox, verified. *why: the one-line
 * reason, for anything but EG_GATE_OK. */
enum eg_fleet_gate eg_fleet_gate(const uint8_t *self, bool fleet_on, bool has_sel,
				 const struct eg_selection *sel, const uint8_t worker[EG_ID_BYTES],
				 uint64_t generation, uint32_t activation,
				 const uint8_t pod_uid[EG_ID_BYTES], const char **why);

/* The rule with its input read (core/fleet_gate_check.c): with the fleet
 * on and self known, the selection stored under
 * <state_dir>/EG_FLEET_SELECTIONS_DIR for spec's sandbox, verified
 * against keys and addressed to self, then eg_fleet_gate. 0 when the
 * install may go on; -EXDEV (wrong worker) or -ENOMSG (not selected) with
 * the one-line reason in err; another -errno when the stored file cannot
 * be read. The caller holds keys still for the call. */
int eg_fleet_gate_check(const char *state_dir, const uint8_t *self, bool fleet_on,
			const struct eg_keyset *keys, const struct eg_install_spec *spec, char *err,
			size_t err_size);

#endif
