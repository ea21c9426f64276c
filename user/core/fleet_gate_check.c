// SPDX-License-Identifier: Apache-2.0
/* The install rule with its input read (core/fleet_gate.h,
 * eg_fleet_gate_check): the selection in force as fleetd stored it under
 * the state dir, verified again against the caller's key set, then the
 * pure rule. The library's install path (user/lib/fleet_gate.c) and the
 * hollow workers (user/fleetd/hollow.c) both call this, so that a hollow
 * worker refuses exactly what a real one does. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "core/fd_io.h"
#include "core/fleet_apply.h"
#include "core/fleet_gate.h"
#include "core/ids.h"

/* The selection in force for sandbox, verified against keys and addressed
 * to self. 0 with *has_sel (false: none stored, or its key is not in the
 * set any more, which docs/fleet.md, "Withdrawal", makes no selection),
 * else -ENOMSG with why (a stored file that is not a selection of it, or
 * one addressed elsewhere) or another -errno with err. */
static int stored_selection(const char *state_dir, const uint8_t self[EG_ID_BYTES],
			    const struct eg_keyset *keys, const uint8_t sandbox[EG_ID_BYTES],
			    bool *has_sel, struct eg_selection *sel, char *why, size_t why_size,
			    char *err, size_t err_size)
{
	char path[4200], line[400], u[EG_UUID_TEXT_LEN];
	uint8_t raw[EG_SEL_MAX_LEN];
	enum eg_sel_err e;
	size_t raw_len = 0;
	long long rev;
	int rc, n;

	*has_sel = false;
	eg_uuid_format(sandbox, u);
	n = snprintf(path, sizeof(path), "%s/%s/%s", state_dir, EG_FLEET_SELECTIONS_DIR, u);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	rc = eg_read_first_line(path, line, sizeof(line));
	if (rc == -ENOENT)
		return 0;
	if (rc && rc != -EINVAL) {
		snprintf(err, err_size, "stored selection %s: %s", path, strerror(-rc));
		return rc;
	}
	if (rc || eg_fleet_stored_parse(line, raw, &raw_len, &rev)) {
		snprintf(why, why_size, "stored selection %s: not \"<revision> <selection>\"",
			 path);
		return -ENOMSG;
	}
	e = eg_sel_verify_keyset(raw, raw_len, keys, sel);
	if (e == EG_SEL_UNKNOWN_KEY)
		return 0;
	if (e != EG_SEL_OK) {
		snprintf(why, why_size, "stored selection %s: %s", path, eg_sel_err_name(e));
		return -ENOMSG;
	}
	if (memcmp(sel->id.sandbox, sandbox, EG_ID_BYTES)) {
		snprintf(why, why_size, "stored selection %s: names another sandbox", path);
		return -ENOMSG;
	}
	if (eg_fleet_audience(self, sel) != EG_FLEET_ADDRESSED) {
		snprintf(why, why_size, "the stored selection is not addressed to %s",
			 "this worker");
		return -ENOMSG;
	}
	*has_sel = true;
	return 0;
}

int eg_fleet_gate_check(const char *state_dir, const uint8_t *self, bool fleet_on,
			const struct eg_keyset *keys, const struct eg_install_spec *spec, char *err,
			size_t err_size)
{
	char u[EG_UUID_TEXT_LEN], wk[EG_UUID_TEXT_LEN], me[EG_UUID_TEXT_LEN], why[4400] = "";
	struct eg_selection sel;
	bool has_sel = false;
	enum eg_fleet_gate g;
	const char *rule_why = NULL;
	int rc = 0;

	eg_uuid_format(spec->sandbox, u);
	if (fleet_on && self) {
		rc = stored_selection(state_dir, self, keys, spec->sandbox, &has_sel, &sel, why,
				      sizeof(why), err, err_size);
		if (rc && rc != -ENOMSG)
			return rc;
	}
	g = eg_fleet_gate(self, fleet_on, has_sel, &sel, spec->worker, spec->generation,
			  spec->activation, spec->pod_uid, &rule_why);
	if (g == EG_GATE_WRONG_WORKER) {
		eg_uuid_format(spec->worker, wk);
		eg_uuid_format(self, me);
		snprintf(err, err_size,
			 "sandbox %s: worker %s: not this worker, which is %s (wrong-worker)", u,
			 wk, me);
		return -EXDEV;
	}
	if (g == EG_GATE_NOT_SELECTED) {
		/* a stored file that does not verify is named, not the rule's
		 * "no selection" it then amounts to */
		snprintf(err, err_size, "sandbox %s: not selected: %s", u,
			 rc == -ENOMSG ? why : rule_why);
		return -ENOMSG;
	}
	return 0;
}
