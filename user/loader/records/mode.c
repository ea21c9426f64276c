// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include "core/ids.h"
#include "loader/log.h"
#include "loader/records/mode.h"

const char *eg_mode_name(__u32 mode)
{
	switch (mode) {
	case EG_MODE_INHERIT:
		return "inherit";
	case EG_MODE_ENFORCE:
		return "enforce";
	case EG_MODE_AUDIT:
		return "audit";
	}
	return NULL;
}

int eg_mode_parse(const char *text, bool inherit, __u32 *mode)
{
	if (!strcmp(text, "enforce"))
		*mode = EG_MODE_ENFORCE;
	else if (!strcmp(text, "audit"))
		*mode = EG_MODE_AUDIT;
	else if (inherit && !strcmp(text, "inherit"))
		*mode = EG_MODE_INHERIT;
	else
		return -EINVAL;
	return 0;
}

__u32 eg_mode_effective(__u32 global_word_mode)
{
	return global_word_mode == EG_MODE_AUDIT ? EG_MODE_AUDIT : EG_MODE_ENFORCE;
}

int eg_mode_of_sandbox(const struct eg_maps *m, const __u8 sandbox[EG_ID_BYTES], bool *audit)
{
	struct eg_mode_word w = {0};
	struct eg_exec_record rec;
	int rc = eg_record_read(m, sandbox, &rec);

	if (!rc && rec.mode != EG_MODE_INHERIT) {
		*audit = rec.mode == EG_MODE_AUDIT;
		return 0;
	}
	if (rc && rc != -ENOENT)
		return rc;
	if (m->fd[EG_MAP_MODE] < 0)
		return -EBADF;
	rc = eg_mode_read(m, &w);
	if (!rc)
		*audit = eg_mode_effective(w.mode) == EG_MODE_AUDIT;
	return rc;
}

int eg_mode_switch_global(struct eg_runtime *rt, __u32 mode, const char *who, __u32 *before,
			  char *err, size_t err_size)
{
	struct eg_mode_word w = {0};
	int rc;

	if (mode != EG_MODE_ENFORCE && mode != EG_MODE_AUDIT) {
		snprintf(err, err_size, "mode %u: the global mode is enforce or audit", mode);
		return -EINVAL;
	}
	rc = eg_mode_read(&rt->maps, &w);
	if (rc) {
		snprintf(err, err_size, "map eg_mode: reading: %s", strerror(-rc));
		return rc;
	}
	*before = eg_mode_effective(w.mode);
	w.mode = mode;
	w.switches++;
	rc = eg_mode_write(&rt->maps, &w);
	if (rc) {
		snprintf(err, err_size, "map eg_mode: writing: %s", strerror(-rc));
		return rc;
	}
	eg_log(EG_LOG_INFO, "mode: global %s -> %s (switch %u), by %s\n", eg_mode_name(*before),
	       eg_mode_name(mode), w.switches, who ? who : "unknown");
	return 0;
}

int eg_mode_switch_sandbox(struct eg_runtime *rt, const __u8 sandbox[EG_ID_BYTES], __u32 mode,
			   const char *who, __u32 *before, char *err, size_t err_size)
{
	struct eg_exec_record rec;
	char s[EG_UUID_TEXT_LEN];
	int rc;

	eg_uuid_format(sandbox, s);
	if (!eg_mode_name(mode)) {
		snprintf(err, err_size, "sandbox %s: mode %u: not enforce, audit or inherit", s,
			 mode);
		return -EINVAL;
	}
	rc = eg_record_read(&rt->maps, sandbox, &rec);
	if (rc) {
		snprintf(err, err_size, "sandbox %s: %s", s,
			 rc == -ENOENT ? "no runtime record" : strerror(-rc));
		return rc;
	}
	*before = rec.mode;
	rec.mode = mode;
	rc = eg_record_write(&rt->maps, &rec);
	if (rc) {
		snprintf(err, err_size, "sandbox %s: map eg_records: writing: %s", s,
			 strerror(-rc));
		return rc;
	}
	eg_log(EG_LOG_INFO, "mode: sandbox %s %s -> %s, by %s\n", s, eg_mode_name(*before),
	       eg_mode_name(mode), who ? who : "unknown");
	return 0;
}

static int census_one(const void *key, const void *value, void *arg)
{
	const struct eg_exec_record *rec = value;
	struct eg_mode_census *out = arg;

	(void)key;
	if ((rec->mode == EG_MODE_INHERIT ? out->global : rec->mode) == EG_MODE_AUDIT)
		out->audit++;
	else
		out->enforce++;
	return 0;
}

int eg_mode_census_read(const struct eg_maps *m, struct eg_mode_census *out)
{
	struct eg_mode_word w;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = eg_mode_read(m, &w);
	if (rc)
		return rc;
	out->global = eg_mode_effective(w.mode);
	out->switches = w.switches;
	/* each record once (a get_next_key walk met some twice when one was
	 * forgotten meanwhile) */
	return eg_map_walk(m->fd[EG_MAP_RECORDS], BPF_F_LOCK, census_one, out);
}

bool eg_mode_census_audits(const struct eg_mode_census *c)
{
	return c->global == EG_MODE_AUDIT || c->audit > 0;
}
