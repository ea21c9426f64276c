// SPDX-License-Identifier: Apache-2.0
/* The install rule for every writer (core/fleet_gate.h): what the library's
 * install path reads before it writes anything, under the writer locks,
 * and the fleet marker execgated sets. The selections are the ones
 * execgated's fleet worker stores (user/fleetd/selections.c) and are verified
 * again here against this handle's key set: a file under the state dir is
 * never trusted because of where it lies. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/fd_io.h"
#include "core/fleet_apply.h"
#include "core/fleet_gate.h"
#include "lib/worker.h"

static int path_of(const struct eg_worker *w, const char *rel, const char *leaf, char *out,
		   size_t size)
{
	int n =
	    snprintf(out, size, "%s/%s%s%s", w->state_dir, rel, leaf ? "/" : "", leaf ? leaf : "");

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* The first line of path into line; -ENOENT when there is no file. */
static int read_line(const char *path, char *line, size_t size)
{
	FILE *f = fopen(path, "re");
	int rc = 0;

	if (!f)
		return -errno;
	if (!fgets(line, (int)size, f))
		rc = ferror(f) ? -EIO : -EINVAL;
	fclose(f);
	return rc;
}

/* The marker: 0 with *on, and its worker id in id (*has_id). */
static int fleet_marker(const struct eg_worker *w, bool *on, uint8_t id[EG_ID_BYTES], bool *has_id,
			char *err, size_t err_size)
{
	char path[4200], line[64];
	int rc;

	*on = *has_id = false;
	if (path_of(w, EG_FLEET_ON_FILE, NULL, path, sizeof(path)))
		return -ENAMETOOLONG;
	rc = read_line(path, line, sizeof(line));
	if (rc == -ENOENT)
		return 0;
	if (rc && rc != -EINVAL) {
		snprintf(err, err_size, "fleet marker %s: %s", path, strerror(-rc));
		return rc;
	}
	*on = true; /* present: the fleet is on, whatever it holds */
	line[strcspn(line, "\n")] = '\0';
	*has_id = !rc && !eg_uuid_parse(line, id);
	return 0;
}

/* The selection in force for sandbox, verified against the handle's keys.
 * 0 with *has_sel (false: none stored, or its key is not in the set any
 * more, which docs/fleet.md, "Withdrawal", makes no selection), else
 * -ENOMSG with why (a stored file that is not a selection of it) or
 * another -errno with err. */
static int stored_selection(struct eg_worker *w, const uint8_t sandbox[EG_ID_BYTES], bool *has_sel,
			    struct eg_selection *sel, char *why, size_t why_size, char *err,
			    size_t err_size)
{
	char path[4200], line[400], u[EG_UUID_TEXT_LEN];
	uint8_t raw[EG_SEL_MAX_LEN];
	enum eg_sel_err e;
	size_t raw_len = 0;
	long long rev;
	int rc;

	*has_sel = false;
	eg_uuid_format(sandbox, u);
	if (path_of(w, EG_FLEET_SELECTIONS_DIR, u, path, sizeof(path)))
		return -ENAMETOOLONG;
	rc = read_line(path, line, sizeof(line));
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
	pthread_rwlock_rdlock(&w->keys_lock);
	e = eg_sel_verify_keyset(raw, raw_len, w->keys, sel);
	pthread_rwlock_unlock(&w->keys_lock);
	if (e == EG_SEL_UNKNOWN_KEY)
		return 0;
	if (e != EG_SEL_OK) {
		snprintf(why, why_size, "stored selection %s: %s", path, eg_sel_err_name(e));
		return -ENOMSG;
	}
	if (memcmp(sel->sandbox, sandbox, EG_ID_BYTES)) {
		snprintf(why, why_size, "stored selection %s: names another sandbox", path);
		return -ENOMSG;
	}
	*has_sel = true;
	return 0;
}

int eg_wk_install_gate(struct eg_worker *w, const struct eg_install_spec *spec, char *err,
		       size_t err_size)
{
	char u[EG_UUID_TEXT_LEN], wk[EG_UUID_TEXT_LEN], me[EG_UUID_TEXT_LEN], why[4400] = "";
	uint8_t marker_id[EG_ID_BYTES];
	const uint8_t *self = w->have_worker_id ? w->worker_id : NULL;
	struct eg_selection sel;
	bool on, has_id, has_sel = false;
	enum eg_fleet_gate g;
	const char *rule_why = NULL;
	int rc;

	rc = fleet_marker(w, &on, marker_id, &has_id, err, err_size);
	if (rc)
		return rc;
	/* The CLI knows its id from node.worker; the marker names the
	 * daemon's for a state dir that has none. */
	if (!self && on && has_id)
		self = marker_id;
	eg_uuid_format(spec->sandbox, u);
	if (on && self) {
		rc = stored_selection(w, spec->sandbox, &has_sel, &sel, why, sizeof(why), err,
				      err_size);
		if (rc == -ENOMSG)
			has_sel = false;
		else if (rc)
			return rc;
		if (has_sel && eg_fleet_audience(self, &sel) != EG_FLEET_ADDRESSED) {
			snprintf(why, sizeof(why), "the stored selection is not addressed to %s",
				 "this worker");
			has_sel = false;
			rc = -ENOMSG;
		}
	}
	g = eg_fleet_gate(self, on, has_sel, &sel, spec->worker, spec->generation, spec->activation,
			  spec->pod_uid, &rule_why);
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

int eg_worker_fleet_set(struct eg_worker *w, bool on, char *err, size_t err_size)
{
	char path[4200], dir[4200], line[EG_UUID_TEXT_LEN + 1];
	int rc;

	EG_WK_ERRBUF(err, err_size);
	if (on && !w->have_worker_id) {
		snprintf(err, err_size,
			 "state dir %s: fleet: this worker's id is not known (worker_id, "
			 "node.worker)",
			 w->state_dir);
		return -EINVAL;
	}
	if (path_of(w, EG_FLEET_ON_FILE, NULL, path, sizeof(path)) ||
	    path_of(w, "fleet", NULL, dir, sizeof(dir))) {
		snprintf(err, err_size, "state dir %s: path too long", w->state_dir);
		return -ENAMETOOLONG;
	}
	rc = eg_wk_write_begin(w, err, err_size);
	if (rc)
		return rc;
	if (on) {
		eg_uuid_format(w->worker_id, line);
		strcat(line, "\n");
		if (mkdir(dir, 0700) && errno != EEXIST)
			rc = -errno;
		if (!rc)
			rc = eg_write_file_atomic(path, line, strlen(line), 0644);
	} else if (unlink(path) && errno != ENOENT) {
		rc = -errno;
	}
	eg_wk_write_end(w);
	if (rc)
		snprintf(err, err_size, "fleet marker %s: %s", path, strerror(-rc));
	return rc;
}
