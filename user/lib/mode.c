// SPDX-License-Identifier: Apache-2.0
/* execgate/admin.h: the enforce/audit switch over loader/records/mode.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <execgate/admin.h>
#include "loader/maps/kreason.h"
#include "loader/records/mode.h"
#include "loader/records/runtime.h"

int eg_mode_set(const char *pin_dir, const char *state_dir, const unsigned char *sandbox,
		const char *mode, const char *who, char *before, char *err, size_t err_size)
{
	struct eg_runtime rt;
	__u32 m, was = 0;
	int rc;

	if (!mode || eg_mode_parse(mode, sandbox != NULL, &m)) {
		snprintf(err, err_size, "mode %s: not %s", mode ? mode : "(none)",
			 sandbox ? "enforce, audit or inherit" : "enforce or audit");
		return -EINVAL;
	}
	/* The state dir's writer lock only for a sandbox's mode, a record's
	 * read-modify-write that must not race an install. The global switch
	 * is one map write: taking the lock there made `execgate load` wait,
	 * without end, for any process holding it (the switch count of two
	 * racing switches may lose one; the mode is the last one written). */
	rc = eg_runtime_open(&rt, pin_dir, state_dir, sandbox != NULL, err, err_size);
	if (rc)
		return rc;
	if (sandbox)
		rc = eg_mode_switch_sandbox(&rt, sandbox, m, who, &was, err, err_size);
	else
		rc = eg_mode_switch_global(&rt, m, who, &was, err, err_size);
	eg_runtime_close(&rt);
	if (!rc && before)
		snprintf(before, 8, "%s", eg_mode_name(was));
	return rc;
}

int eg_mode_get(const char *pin_dir, char *mode, unsigned *switches, unsigned *sandboxes_enforce,
		unsigned *sandboxes_audit, char *err, size_t err_size)
{
	struct eg_mode_census c;
	struct eg_maps maps;
	int rc;

	rc = eg_maps_open(&maps, pin_dir, err, err_size);
	if (rc)
		return rc;
	rc = eg_mode_census_read(&maps, &c);
	eg_maps_close(&maps);
	if (rc) {
		snprintf(err, err_size, "maps eg_mode, eg_records: reading: %s", strerror(-rc));
		return rc;
	}
	snprintf(mode, 8, "%s", eg_mode_name(c.global));
	if (switches)
		*switches = c.switches;
	if (sandboxes_enforce)
		*sandboxes_enforce = c.enforce;
	if (sandboxes_audit)
		*sandboxes_audit = c.audit;
	return 0;
}

int eg_mode_would_deny(const char *pin_dir,
		       void (*fn)(const char *reason, const char *hook, unsigned long long n,
				  void *ctx),
		       void *ctx, char *err, size_t err_size)
{
	static __thread __u64 c[EG_HOOK_SLOTS][EG_COUNTER_SLOTS];
	struct eg_maps maps;
	int rc;

	rc = eg_maps_open(&maps, pin_dir, err, err_size);
	if (rc)
		return rc;
	rc = eg_would_deny_read(&maps, c);
	eg_maps_close(&maps);
	if (rc) {
		snprintf(err, err_size, "map eg_would_deny: reading: %s", strerror(-rc));
		return rc;
	}
	for (__u32 h = 0; h < EG_HOOK_SLOTS; h++)
		for (__u32 r = 0; r < EG_K_REASON_COUNT; r++)
			if (c[h][r])
				fn(eg_kreason_name(r), eg_hook_name(h), (unsigned long long)c[h][r],
				   ctx);
	return 0;
}
