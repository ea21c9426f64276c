// SPDX-License-Identifier: Apache-2.0
/* The install rule for every writer (core/fleet_gate.h): what the library's
 * install path reads before it writes anything, under the writer locks,
 * and the fleet marker execgated sets. The selections are the ones
 * execgated's fleet worker stores (user/fleetd/selections.c) and are verified
 * again against this handle's key set (core/fleet_gate.h,
 * eg_fleet_gate_check): a file under the state dir is never trusted
 * because of where it lies. */
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

/* The marker: 0 with *on, and its worker id in id (*has_id). */
static int fleet_marker(const struct eg_worker *w, bool *on, uint8_t id[EG_ID_BYTES], bool *has_id,
			char *err, size_t err_size)
{
	char path[4200], line[64];
	int rc;

	*on = *has_id = false;
	if (path_of(w, EG_FLEET_ON_FILE, NULL, path, sizeof(path)))
		return -ENAMETOOLONG;
	rc = eg_read_first_line(path, line, sizeof(line));
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

int eg_wk_install_gate(struct eg_worker *w, const struct eg_install_spec *spec, char *err,
		       size_t err_size)
{
	uint8_t marker_id[EG_ID_BYTES];
	const uint8_t *self = w->have_worker_id ? w->worker_id : NULL;
	bool on, has_id;
	int rc;

	rc = fleet_marker(w, &on, marker_id, &has_id, err, err_size);
	if (rc)
		return rc;
	/* The CLI knows its id from node.worker; the marker names the
	 * daemon's for a state dir that has none. */
	if (!self && on && has_id)
		self = marker_id;
	pthread_rwlock_rdlock(&w->keys_lock);
	rc = eg_fleet_gate_check(w->state_dir, self, on, w->keys, spec, err, err_size);
	pthread_rwlock_unlock(&w->keys_lock);
	return rc;
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
