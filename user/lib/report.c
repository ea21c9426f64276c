// SPDX-License-Identifier: Apache-2.0
/* The status report (`execgate status`, GET /v1/status, and the tail of
 * `load` and `probe`) as text or as JSON (lib/json.h;
 * docs/schema/status.schema.json), over what the loader collected
 * (eg_tier_report_collect, loader/tiers/tier_report.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/json.h"
#include "lib/report.h"
#include "lib/worker.h"
#include "loader/tiers/attach_root.h"
#include "loader/tiers/cgroup.h"
#include "loader/maps/kreason.h"
#include "loader/maps/maps.h"
#include "loader/records/mode.h"
#include "loader/maps/pins.h"
#include "loader/revokers/serving.h"
#include "loader/tiers/tier_report.h"

static void prog_text(FILE *f, const struct eg_prog_status *p)
{
	fprintf(f, "    %s: program %s id %u, link %u, attach type %u (%s)", p->hook, p->name,
		p->prog_id, p->link_id, p->attach_type, eg_attach_type_name(p->attach_type));
	if (p->target_id)
		fprintf(f, ", cgroup %s (id %llu)", p->target, (unsigned long long)p->target_id);
	if (p->run_cnt)
		fprintf(f, ", %llu runs, %.0f ns/run", (unsigned long long)p->run_cnt,
			(double)p->run_time_ns / (double)p->run_cnt);
	fprintf(f, "\n");
}

/* Which cgroup mounts the loader takes for the host's (loader/tiers/cgroup.h). */
static void roots_text(FILE *f, const struct eg_cgroup_roots *r)
{
	fprintf(f, "cgroup roots (%s): cgroup2 %s, memory %s", r->source,
		r->cgroup2_rc ? "none found" : r->cgroup2, r->memcg_rc ? "none found" : r->memcg);
	if (r->skipped[0])
		fprintf(f,
			"; passed over %s (not a hierarchy root: a cgroup namespace's or a "
			"bind mount's view)",
			r->skipped);
	fprintf(f, "\n");
}

#define STR(x) eg_json_bytes((x), (size_t)-1)

/* The warning for a part of the state the report could not read. */
static const char *unread_warning(const struct eg_report_unread *u, char *buf, size_t size)
{
	snprintf(buf, size, "%s: not read: %s; the report shows nothing for it", u->what,
		 strerror(-u->err));
	return EG_WARN_STATE_UNREAD;
}

static json_t *roots_json(const struct eg_cgroup_roots *r)
{
	return json_pack("{s:o,s:o,s:o,s:o}", "source", STR(r->source), "cgroup2",
			 r->cgroup2_rc ? json_null() : STR(r->cgroup2), "memory",
			 r->memcg_rc ? json_null() : STR(r->memcg), "skipped",
			 r->skipped[0] ? STR(r->skipped) : json_null());
}

/* What the serving process may do (loader/revokers/serving.h), or null before a
 * probe recorded it. */
static json_t *serving_json(const struct eg_probe_record *probed)
{
	json_t *steps;

	if (!probed->present || !probed->serving_probed)
		return json_null();
	steps = json_array();
	for (int i = 0; i < EG_STEP__COUNT; i++)
		json_array_append_new(
		    steps, json_pack("{s:s,s:b,s:o}", "name", eg_serving_step_names[i], "allowed",
				     probed->step_ok[i], "why_not",
				     STR(probed->step_ok[i] ? "" : probed->step_why[i])));
	return json_pack("{s:o,s:o}", "probed_in", STR(probed->serving_by), "steps", steps);
}

/* Where audit decides (globally or for some sandbox), no guarantee is
 * held: each reads "audit (not enforced)" (docs/design.md, "Modes"). */
static bool audited(const struct eg_tier_report *r)
{
	return r->have_modes && eg_mode_census_audits(&r->modes);
}

static const char *guarantee_state(const struct eg_tier_report *r, const struct eg_guarantee *g)
{
	if (!g->held)
		return "NOT HELD";
	return audited(r) ? "audit (not enforced)" : "held";
}

/* Under audit the reason says so first; buf holds it when it does. */
static const char *guarantee_reason(const struct eg_tier_report *r, const struct eg_guarantee *g,
				    char *buf, size_t size)
{
	if (!g->held || !audited(r))
		return g->reason;
	if (r->modes.global == EG_MODE_AUDIT)
		snprintf(buf, size, "audit (not enforced): the global mode is audit; %s",
			 g->reason);
	else
		snprintf(buf, size, "audit (not enforced) for %u sandbox%s; %s", r->modes.audit,
			 r->modes.audit == 1 ? "" : "es", g->reason);
	return buf;
}

static const char *tier_mode(const struct eg_tier_report *r)
{
	if (!r->have_modes)
		return "unknown";
	if (r->modes.global == EG_MODE_AUDIT)
		return "audit";
	return r->modes.audit ? "enforce, some sandboxes audit" : "enforce";
}

/* Which clock decides grant expiry in the hooks (loader/tiers/clock.h). */
static const char *clock_source(const struct eg_clock_state *c)
{
	return c->kept ? "coarse monotonic + boot offset" : "boot";
}

/* The cgroup and tcp tiers' hooks; the LSM programs always read
 * CLOCK_BOOTTIME (bpf/lsm.bpf.c says why). */
static void clock_text(FILE *f, const struct eg_clock_state *c)
{
	if (!c->kept)
		fprintf(f, "grant clock (cgroup, tcp): CLOCK_BOOTTIME read in each hook (%s)\n",
			c->why);
	else if (c->attached)
		fprintf(f,
			"grant clock (cgroup, tcp): coarse CLOCK_MONOTONIC + boot offset %llu ns, "
			"kept across suspend by links/" EG_PIN_CLOCK_RESUME "\n",
			(unsigned long long)c->offset_ns);
	else
		fprintf(
		    f,
		    "warning: grant-clock-unkept: the cgroup and tcp hooks add boot offset %llu "
		    "ns, which nothing keeps (%s): after a suspend, their grants outlive their "
		    "expiry by the time asleep; run execgate load\n",
		    (unsigned long long)c->offset_ns, c->why);
}

static json_t *clock_json(const struct eg_clock_state *c)
{
	return json_pack("{s:s,s:b,s:b,s:o,s:o}", "source", clock_source(c), "kept", c->kept,
			 "kept_by_link", c->attached, "boot_offset_ns",
			 c->kept ? json_integer((json_int_t)c->offset_ns) : json_null(), "why",
			 c->kept && c->attached ? json_null() : STR(c->why));
}

/* The key set of the state dir, for status (eg_report_write_keys). */
struct key_set_view {
	bool have; /* asked for */
	int rc;	   /* 0, or why the directory could not be read (err) */
	size_t n;
	char digest[EG_KEYS_DIGEST_TEXT_LEN];
	char err[EG_ERR_MAX];
};

static void key_set_text(FILE *f, const struct key_set_view *k)
{
	if (!k->have)
		return;
	if (k->rc)
		fprintf(f, "key set: unreadable: %s\n", k->err);
	else
		fprintf(f, "key set: %zu key%s, digest %s\n", k->n, k->n == 1 ? "" : "s",
			k->digest);
}

static json_t *key_set_json(const struct key_set_view *k)
{
	return json_pack("{s:o,s:o,s:s,s:o}", "keys",
			 k->rc ? json_null() : json_integer((json_int_t)k->n), "digest",
			 k->rc ? json_null() : json_string(k->digest), "source", "directory",
			 "error", k->rc ? json_string(k->err) : json_null());
}

static void print_text(FILE *f, const char *pin_dir, const struct eg_probe_record *probed,
		       const struct eg_tier_report *r, bool full, const struct key_set_view *k)
{
	char warn[4 * EG_PIN_PATH_MAX], why[512];
	const char *code;

	fprintf(f, "pin dir %s: %s\n", pin_dir, r->loaded ? "loaded" : "not loaded");
	for (size_t i = 0; i < eg_tier_count; i++) {
		const struct eg_tier_status *st = &r->st[i];

		fprintf(f, "tier %s: %s", eg_tiers[i]->name,
			st->loaded    ? "loaded"
			: st->offered ? "offered, not loaded"
				      : "not offered");
		if (!st->offered)
			fprintf(f, " (%s)", st->why_not);
		else if (!st->loaded && st->detail[0])
			fprintf(f, " (%s)", st->detail);
		if (st->loaded)
			fprintf(f, ", mode %s", tier_mode(r));
		fprintf(f, "\n");
		for (size_t p = 0; p < st->nprogs; p++)
			prog_text(f, &st->progs[p]);
	}
	code = eg_attach_warning(&r->attach, warn, sizeof(warn));
	if (code)
		fprintf(f, "warning: %s: %s\n", code, warn);
	for (size_t i = 0; i < r->n_unread; i++) {
		code = unread_warning(&r->unread[i], warn, sizeof(warn));
		fprintf(f, "warning: %s: %s\n", code, warn);
	}
	roots_text(f, &r->roots);
	if (probed->present && probed->serving_probed)
		for (int i = 0; i < EG_STEP__COUNT; i++)
			if (!probed->step_ok[i])
				fprintf(f, "serving process (%s): %s refused: %s\n",
					probed->serving_by, eg_serving_step_names[i],
					probed->step_why[i]);
	if (r->have_modes)
		fprintf(f, "mode: %s (switched %u times); sandboxes: %u enforce, %u audit\n",
			eg_mode_name(r->modes.global), r->modes.switches, r->modes.enforce,
			r->modes.audit);
	if (r->have_clock)
		clock_text(f, &r->clock);
	key_set_text(f, k);
	fprintf(f, "guarantees:\n");
	for (size_t i = 0; i < r->ng; i++)
		fprintf(f, "  %-8s %-30s %s\n           %s\n", guarantee_state(r, &r->g[i]),
			r->g[i].name, r->g[i].summary,
			guarantee_reason(r, &r->g[i], why, sizeof(why)));
	if (!full)
		return;
	if (r->have_counters) {
		fprintf(f, "counters:\n");
		for (__u32 k = 0; k < EG_K_REASON_COUNT; k++)
			fprintf(f, "  %-20s %llu\n", eg_kreason_name(k),
				(unsigned long long)r->counters[k]);
	}
	if (r->have_would_deny) {
		fprintf(f, "would-deny (audit let through):\n");
		for (__u32 h = 0; h < EG_HOOK_SLOTS; h++)
			for (__u32 k = 0; k < EG_K_REASON_COUNT; k++)
				if (r->would_deny[h][k])
					fprintf(f, "  %-20s %-24s %llu\n", eg_kreason_name(k),
						eg_hook_name(h),
						(unsigned long long)r->would_deny[h][k]);
	}
	if (r->have_fill) {
		fprintf(f, "maps:\n");
		for (int m = 0; m < EG_MAP__COUNT; m++)
			if (r->cap[m])
				fprintf(f, "  %-20s %u / %u\n", eg_map_names[m], r->fill[m],
					r->cap[m]);
	}
}

static json_t *tier_json(const struct eg_tier_status *st, const char *name, const char *mode)
{
	json_t *progs = json_array();

	for (size_t p = 0; p < st->nprogs; p++) {
		const struct eg_prog_status *ps = &st->progs[p];

		json_array_append_new(
		    progs,
		    json_pack("{s:o,s:o,s:I,s:I,s:I,s:s,s:o,s:I,s:I,s:I}", "hook", STR(ps->hook),
			      "name", STR(ps->name), "prog_id", (json_int_t)ps->prog_id, "link_id",
			      (json_int_t)ps->link_id, "attach_type", (json_int_t)ps->attach_type,
			      "attach_type_name", eg_attach_type_name(ps->attach_type), "cgroup",
			      STR(ps->target), "cgroup_id", (json_int_t)ps->target_id, "run_cnt",
			      (json_int_t)ps->run_cnt, "run_time_ns", (json_int_t)ps->run_time_ns));
	}
	return json_pack("{s:o,s:b,s:b,s:o,s:o,s:o}", "name", STR(name), "offered", st->offered,
			 "loaded", st->loaded, "why_not",
			 STR(st->offered ? st->detail : st->why_not), "programs", progs, "mode",
			 st->loaded && mode ? STR(mode) : json_null());
}

/* The status document (docs/schema/status.schema.json). */
static json_t *report_json(const char *pin_dir, const struct eg_probe_record *probed,
			   const struct eg_tier_report *r, bool full, const struct key_set_view *k)
{
	char warn[4 * EG_PIN_PATH_MAX], why[512];
	json_t *o, *tiers = json_array(), *warnings = json_array(), *g = json_array();
	const char *code;

	for (size_t i = 0; i < eg_tier_count; i++)
		json_array_append_new(tiers, tier_json(&r->st[i], eg_tiers[i]->name,
						       r->have_modes ? tier_mode(r) : NULL));
	code = eg_attach_warning(&r->attach, warn, sizeof(warn));
	if (code)
		json_array_append_new(
		    warnings, json_pack("{s:s,s:o,s:o,s:o,s:o}", "code", code, "message", STR(warn),
					"hook", STR(r->attach.hook), "cgroup",
					STR(r->attach.cgroup), "root", STR(r->attach.root)));
	for (size_t i = 0; i < r->n_unread; i++) {
		code = unread_warning(&r->unread[i], warn, sizeof(warn));
		json_array_append_new(warnings, json_pack("{s:s,s:o,s:s}", "code", code, "message",
							  STR(warn), "part", r->unread[i].what));
	}
	for (size_t i = 0; i < r->ng; i++)
		json_array_append_new(
		    g, json_pack("{s:o,s:b,s:b,s:o,s:o}", "name", STR(r->g[i].name), "held",
				 r->g[i].held && !audited(r), "audit", r->g[i].held && audited(r),
				 "summary", STR(r->g[i].summary), "reason",
				 STR(guarantee_reason(r, &r->g[i], why, sizeof(why)))));
	o = json_pack("{s:i,s:o,s:b,s:b,s:o,s:o,s:o,s:o}", "schema_version", EG_JSON_SCHEMA_VERSION,
		      "pin_dir", STR(pin_dir), "loaded", r->loaded, "probed", probed->present,
		      "tiers", tiers, "attach_root",
		      r->attach.point == EG_ATTACH_ROOT	      ? json_true()
		      : r->attach.point == EG_ATTACH_NOT_ROOT ? json_false()
							      : json_null(),
		      "warnings", warnings, "guarantees", g);
	if (o && r->have_modes)
		json_object_set_new(
		    o, "mode",
		    json_pack("{s:s,s:I,s:{s:I,s:I}}", "global", eg_mode_name(r->modes.global),
			      "switches", (json_int_t)r->modes.switches, "sandboxes", "enforce",
			      (json_int_t)r->modes.enforce, "audit", (json_int_t)r->modes.audit));
	if (o && full && r->have_would_deny) {
		json_t *w = json_array();

		for (__u32 h = 0; h < EG_HOOK_SLOTS; h++)
			for (__u32 k = 0; k < EG_K_REASON_COUNT; k++)
				if (r->would_deny[h][k])
					json_array_append_new(
					    w,
					    json_pack("{s:s,s:s,s:I}", "reason", eg_kreason_name(k),
						      "hook", eg_hook_name(h), "count",
						      (json_int_t)r->would_deny[h][k]));
		json_object_set_new(o, "would_deny", w);
	}
	if (o && r->have_clock)
		json_object_set_new(o, "grant_clock", clock_json(&r->clock));
	if (o && k->have)
		json_object_set_new(o, "key_set", key_set_json(k));
	if (o) {
		json_object_set_new(o, "cgroup_roots", roots_json(&r->roots));
		json_object_set_new(o, "serving", serving_json(probed));
	}
	if (o && full && r->have_counters) {
		json_t *c = json_object();

		for (__u32 k = 0; k < EG_K_REASON_COUNT; k++)
			json_object_set_new(c, eg_kreason_name(k),
					    json_integer((json_int_t)r->counters[k]));
		json_object_set_new(o, "counters", c);
	}
	if (o && full && r->have_fill) {
		json_t *m = json_object();

		for (int i = 0; i < EG_MAP__COUNT; i++)
			if (r->cap[i])
				json_object_set_new(m, eg_map_names[i],
						    json_pack("{s:I,s:I}", "entries",
							      (json_int_t)r->fill[i], "max_entries",
							      (json_int_t)r->cap[i]));
		json_object_set_new(o, "maps", m);
	}
	return o;
}

int eg_report_write(FILE *out, const char *pin_dir, const struct eg_probe_record *probed, bool json,
		    bool full, struct eg_attach_check *attach)
{
	return eg_report_write_keys(out, pin_dir, NULL, probed, json, full, attach);
}

int eg_report_write_keys(FILE *out, const char *pin_dir, const char *state_dir,
			 const struct eg_probe_record *probed, bool json, bool full,
			 struct eg_attach_check *attach)
{
	struct key_set_view keys = {.have = state_dir && out};
	struct eg_tier_report *rp;
	int rc;

	/* On the heap: ~40 KiB, and the daemon calls this from several
	 * threads. */
	rp = calloc(1, sizeof(*rp));
	if (!rp)
		return -ENOMEM;
	rc = eg_tier_report_collect(pin_dir, probed, full && out, rp);
	if (rc)
		goto out;
	if (attach)
		*attach = rp->attach;
	if (!out) {
		rc = rp->loaded ? 0 : -ENOENT;
		goto out;
	}
	if (keys.have)
		keys.rc = eg_wk_keys_dir_digest(state_dir, &keys.n, keys.digest, keys.err,
						sizeof(keys.err));
	if (json) {
		rc = eg_json_print(out, report_json(pin_dir, probed, rp, full, &keys));
		if (rc)
			goto out;
	} else {
		print_text(out, pin_dir, probed, rp, full, &keys);
	}
	rc = fflush(out) ? -errno : rp->loaded ? 0 : -ENOENT;
out:
	free(rp);
	return rc;
}
