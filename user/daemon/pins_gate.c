// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include "daemon/log.h"
#include "daemon/pins_gate.h"

/* The last state logged: generation + 1, or 0 while unloaded. One daemon
 * per process, so one copy. */
static _Atomic uint64_t logged = 1;

static void note(struct egd *d, int rc, uint64_t gen, const char *err)
{
	uint64_t now = rc == -ENOLINK ? 0 : gen + 1, was = atomic_exchange(&logged, now);

	if (rc && rc != -ENOLINK)
		return; /* a transient failure, answered 503 with its reason */
	if (was == now)
		return;
	if (!now)
		egd_log(EGD_LOG_ERR, "%s: answering 503 until execgate load", err);
	else
		egd_log(EGD_LOG_NOTICE,
			"pin dir %s: the pins were replaced (execgate load after an unload): "
			"reopened, answering from the new maps",
			d->cfg.pin_dir);
}

bool egd_pins_gate(struct egd_call *c, bool needs_maps, enum MHD_Result *replied)
{
	char err[EG_ERR_MAX] = "";
	uint64_t gen = 0;
	int rc;

	if (!needs_maps)
		return true;
	rc = eg_worker_refresh(c->d->worker, &gen, err, sizeof(err));
	note(c->d, rc, gen, err);
	if (!rc)
		return true;
	*replied = egd_reply_error(c, MHD_HTTP_SERVICE_UNAVAILABLE,
				   rc == -ENOLINK ? "not loaded" : "pins changing", "%s",
				   err[0] ? err : strerror(-rc));
	return false;
}

uint64_t egd_pins_poll(struct egd *d, bool *gone)
{
	char err[EG_ERR_MAX] = "";
	uint64_t gen = 0;
	int rc;

	rc = eg_worker_refresh(d->worker, &gen, err, sizeof(err));
	note(d, rc, gen, err);
	*gone = rc == -ENOLINK;
	return gen;
}
