// SPDX-License-Identifier: Apache-2.0
/* The report of `execgate status` (and the tail of `load` and `probe`):
 * tiers, programs, guarantees, counters and map fill, as text or as JSON
 * (schema_version 1). It reads pins and maps only; what the kernel offers
 * comes from the probe record it is given. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "loader/attach_root.h"
#include "loader/kreason.h"
#include "loader/maps.h"
#include "loader/pins.h"
#include "loader/serving.h"
#include "loader/tier.h"

/* Debian's bpftool 7.1 and libbpf 1.1 predate BPF_CGROUP_UNIX_CONNECT and
 * print it as a bare number, so name it here. */
static const char *attach_type_name(__u32 t)
{
	const char *n;

	if (t == 49)
		return "cgroup_unix_connect";
	n = libbpf_bpf_attach_type_str((enum bpf_attach_type)t);
	return n ? n : "unknown";
}

struct report {
	struct eg_tier_status st[EG_TIER_MAX];
	struct eg_guarantee g[EG_TIER_MAX_GUARANTEES];
	size_t ng;
	bool loaded;
	__u64 counters[EG_K_REASON_COUNT];
	bool have_counters;
	unsigned fill[EG_MAP__COUNT], cap[EG_MAP__COUNT];
	struct eg_attach_check attach;
};

/* RFC 8259 string; bytes outside printable ASCII as \u00XX (paths are
 * bytes, not UTF-8). */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* The warning status gives about the attach point: its code (NULL when
 * there is none), and its message in buf. */
static const char *attach_warning(const struct eg_attach_check *a, char *buf, size_t size)
{
	if (a->point != EG_ATTACH_NOT_ROOT)
		return NULL;
	snprintf(buf, size,
		 "%s is attached at cgroup %s, not at the cgroup root %s: a socket "
		 "created outside that cgroup is not checked, even when a process in it "
		 "uses the socket (attach at the root in production: load --cgroup %s)",
		 a->hook, a->cgroup, a->root, a->root);
	return EG_WARN_CGROUP_NOT_ROOT;
}

static void prog_text(FILE *f, const struct eg_prog_status *p)
{
	fprintf(f, "    %s: program %s id %u, link %u, attach type %u (%s)", p->hook, p->name,
		p->prog_id, p->link_id, p->attach_type, attach_type_name(p->attach_type));
	if (p->target_id)
		fprintf(f, ", cgroup %s (id %llu)", p->target, (unsigned long long)p->target_id);
	if (p->run_cnt)
		fprintf(f, ", %llu runs, %.0f ns/run", (unsigned long long)p->run_cnt,
			(double)p->run_time_ns / (double)p->run_cnt);
	fprintf(f, "\n");
}

static void print_text(FILE *f, const char *pin_dir, const struct eg_probe_record *probed,
		       const struct report *r, bool full)
{
	char warn[4 * EG_PIN_PATH_MAX];
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
		fprintf(f, "\n");
		for (size_t p = 0; p < st->nprogs; p++)
			prog_text(f, &st->progs[p]);
	}
	code = attach_warning(&r->attach, warn, sizeof(warn));
	if (code)
		fprintf(f, "warning: %s: %s\n", code, warn);
	if (probed->present && probed->serving_probed)
		for (int i = 0; i < EG_STEP__COUNT; i++)
			if (!probed->step_ok[i])
				fprintf(f, "serving process (%s): %s refused: %s\n",
					probed->serving_by, eg_serving_step_names[i],
					probed->step_why[i]);
	fprintf(f, "guarantees:\n");
	for (size_t i = 0; i < r->ng; i++)
		fprintf(f, "  %-8s %-30s %s\n           %s\n", r->g[i].held ? "held" : "NOT HELD",
			r->g[i].name, r->g[i].summary, r->g[i].reason);
	if (!full)
		return;
	if (r->have_counters) {
		fprintf(f, "counters:\n");
		for (__u32 k = 0; k < EG_K_REASON_COUNT; k++)
			fprintf(f, "  %-20s %llu\n", eg_kreason_name(k),
				(unsigned long long)r->counters[k]);
	}
	if (r->loaded) {
		fprintf(f, "maps:\n");
		for (int m = 0; m < EG_MAP__COUNT; m++)
			if (r->cap[m])
				fprintf(f, "  %-20s %u / %u\n", eg_map_names[m], r->fill[m],
					r->cap[m]);
	}
}

static void print_json(FILE *f, const char *pin_dir, const struct eg_probe_record *probed,
		       const struct report *r, bool full)
{
	char warn[4 * EG_PIN_PATH_MAX];
	const char *code;

	fprintf(f, "{\"schema_version\":1,\"pin_dir\":");
	json_str(f, pin_dir);
	fprintf(f, ",\"loaded\":%s,\"probed\":%s,\"tiers\":[", r->loaded ? "true" : "false",
		probed->present ? "true" : "false");
	for (size_t i = 0; i < eg_tier_count; i++) {
		const struct eg_tier_status *st = &r->st[i];

		fprintf(f, "%s{\"name\":", i ? "," : "");
		json_str(f, eg_tiers[i]->name);
		fprintf(f, ",\"offered\":%s,\"loaded\":%s,\"why_not\":",
			st->offered ? "true" : "false", st->loaded ? "true" : "false");
		json_str(f, st->offered ? st->detail : st->why_not);
		fprintf(f, ",\"programs\":[");
		for (size_t p = 0; p < st->nprogs; p++) {
			const struct eg_prog_status *ps = &st->progs[p];

			fprintf(f, "%s{\"hook\":", p ? "," : "");
			json_str(f, ps->hook);
			fprintf(f, ",\"name\":");
			json_str(f, ps->name);
			fprintf(f,
				",\"prog_id\":%u,\"link_id\":%u,\"attach_type\":%u,"
				"\"attach_type_name\":",
				ps->prog_id, ps->link_id, ps->attach_type);
			json_str(f, attach_type_name(ps->attach_type));
			fprintf(f, ",\"cgroup\":");
			json_str(f, ps->target);
			fprintf(f, ",\"cgroup_id\":%llu,\"run_cnt\":%llu,\"run_time_ns\":%llu}",
				(unsigned long long)ps->target_id, (unsigned long long)ps->run_cnt,
				(unsigned long long)ps->run_time_ns);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "],\"attach_root\":%s,\"warnings\":[",
		r->attach.point == EG_ATTACH_ROOT	? "true"
		: r->attach.point == EG_ATTACH_NOT_ROOT ? "false"
							: "null");
	code = attach_warning(&r->attach, warn, sizeof(warn));
	if (code) {
		fprintf(f, "{\"code\":\"%s\",\"message\":", code);
		json_str(f, warn);
		fprintf(f, ",\"hook\":");
		json_str(f, r->attach.hook);
		fprintf(f, ",\"cgroup\":");
		json_str(f, r->attach.cgroup);
		fprintf(f, ",\"root\":");
		json_str(f, r->attach.root);
		fprintf(f, "}");
	}
	fprintf(f, "],\"serving\":");
	if (probed->present && probed->serving_probed) {
		fprintf(f, "{\"probed_in\":");
		json_str(f, probed->serving_by);
		fprintf(f, ",\"steps\":[");
		for (int i = 0; i < EG_STEP__COUNT; i++) {
			fprintf(f, "%s{\"name\":\"%s\",\"allowed\":%s,\"why_not\":", i ? "," : "",
				eg_serving_step_names[i], probed->step_ok[i] ? "true" : "false");
			json_str(f, probed->step_ok[i] ? "" : probed->step_why[i]);
			fprintf(f, "}");
		}
		fprintf(f, "]}");
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\"guarantees\":[");
	for (size_t i = 0; i < r->ng; i++) {
		fprintf(f, "%s{\"name\":", i ? "," : "");
		json_str(f, r->g[i].name);
		fprintf(f, ",\"held\":%s,\"summary\":", r->g[i].held ? "true" : "false");
		json_str(f, r->g[i].summary);
		fprintf(f, ",\"reason\":");
		json_str(f, r->g[i].reason);
		fprintf(f, "}");
	}
	fprintf(f, "]");
	if (full && r->have_counters) {
		fprintf(f, ",\"counters\":{");
		for (__u32 k = 0; k < EG_K_REASON_COUNT; k++)
			fprintf(f, "%s\"%s\":%llu", k ? "," : "", eg_kreason_name(k),
				(unsigned long long)r->counters[k]);
		fprintf(f, "}");
	}
	if (full && r->loaded) {
		fprintf(f, ",\"maps\":{");
		for (int m = 0, first = 1; m < EG_MAP__COUNT; m++) {
			if (!r->cap[m])
				continue;
			fprintf(f, "%s\"%s\":{\"entries\":%u,\"max_entries\":%u}", first ? "" : ",",
				eg_map_names[m], r->fill[m], r->cap[m]);
			first = 0;
		}
		fprintf(f, "}");
	}
	fprintf(f, "}\n");
}

int eg_tier_report(FILE *out, const char *pin_dir, const struct eg_probe_record *probed, bool json,
		   bool full)
{
	return eg_tier_report_attach(out, pin_dir, probed, json, full, NULL);
}

int eg_tier_report_attach(FILE *out, const char *pin_dir, const struct eg_probe_record *probed,
			  bool json, bool full, struct eg_attach_check *attach)
{
	struct eg_tier_ctx ctx = {.pin_dir = pin_dir, .probed = probed};
	struct eg_maps maps;
	struct report *rp;
	char err[512];
	int rc = 0;

	/* On the heap: ~40 KiB, and the daemon calls this from several
	 * threads. */
	rp = calloc(1, sizeof(*rp));
	if (!rp)
		return -ENOMEM;
	rp->loaded = eg_pins_loaded(pin_dir);
	for (size_t i = 0; i < eg_tier_count && i < EG_TIER_MAX; i++) {
		rc = eg_tiers[i]->status(&ctx, &rp->st[i]);
		if (rc)
			goto out;
		eg_tiers[i]->guarantees(&rp->st[i], rp->g, &rp->ng, EG_TIER_MAX_GUARANTEES);
	}
	/* What the kernel offers, narrowed to what the serving process may do. */
	eg_serving_apply(probed, rp->st, rp->g, rp->ng);
	eg_attach_point_check(rp->st, eg_tier_count, &rp->attach);
	if (attach)
		*attach = rp->attach;
	if (!out) {
		rc = rp->loaded ? 0 : -ENOENT;
		goto out;
	}
	if (full && rp->loaded && !eg_maps_open(&maps, pin_dir, err, sizeof(err))) {
		rp->have_counters = !eg_counters_read(&maps, rp->counters);
		for (int m = 0; m < EG_MAP__COUNT; m++)
			if (m != EG_MAP_EVENTS && m != EG_MAP_SK_TAGS &&
			    m != EG_MAP_LISTENER_TAGS && m != EG_MAP_COUNTERS &&
			    m != EG_MAP_PATH_HINT)
				eg_map_fill(maps.fd[m], &rp->fill[m], &rp->cap[m]);
		eg_maps_close(&maps);
	}
	if (json)
		print_json(out, pin_dir, probed, rp, full);
	else
		print_text(out, pin_dir, probed, rp, full);
	rc = fflush(out) ? -errno : rp->loaded ? 0 : -ENOENT;
out:
	free(rp);
	return rc;
}
