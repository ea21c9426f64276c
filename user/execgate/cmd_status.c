// SPDX-License-Identifier: Apache-2.0
/* execgate status: programs, tiers, guarantees, counters, map fill. The
 * same report closes `execgate load`. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "execgate/cli.h"
#include "execgate/commands.h"
#include "loader/kreason.h"
#include "loader/maps.h"
#include "loader/pins.h"
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
	struct eg_tier_status st[16];
	struct eg_guarantee g[EG_TIER_MAX_GUARANTEES];
	size_t ng;
	bool loaded;
	__u64 counters[EG_K_REASON_COUNT];
	bool have_counters;
	unsigned fill[EG_MAP__COUNT], cap[EG_MAP__COUNT];
};

static void prog_text(const struct eg_prog_status *p)
{
	printf("    %s: program %s id %u, link %u, attach type %u (%s)", p->hook, p->name,
	       p->prog_id, p->link_id, p->attach_type, attach_type_name(p->attach_type));
	if (p->target_id)
		printf(", cgroup %s (id %llu)", p->target, (unsigned long long)p->target_id);
	if (p->run_cnt)
		printf(", %llu runs, %.0f ns/run", (unsigned long long)p->run_cnt,
		       (double)p->run_time_ns / (double)p->run_cnt);
	printf("\n");
}

static void print_text(const struct eg_cli_dirs *dirs, const struct report *r, bool full)
{
	printf("pin dir %s: %s\n", dirs->pin_dir, r->loaded ? "loaded" : "not loaded");
	for (size_t i = 0; i < eg_tier_count; i++) {
		const struct eg_tier_status *st = &r->st[i];

		printf("tier %s: %s", eg_tiers[i]->name,
		       st->loaded    ? "loaded"
		       : st->offered ? "offered, not loaded"
				     : "not offered");
		if (!st->offered)
			printf(" (%s)", st->why_not);
		else if (!st->loaded && st->detail[0])
			printf(" (%s)", st->detail);
		printf("\n");
		for (size_t p = 0; p < st->nprogs; p++)
			prog_text(&st->progs[p]);
	}
	printf("guarantees:\n");
	for (size_t i = 0; i < r->ng; i++)
		printf("  %-8s %-30s %s\n           %s\n", r->g[i].held ? "held" : "NOT HELD",
		       r->g[i].name, r->g[i].summary, r->g[i].reason);
	if (!full)
		return;
	if (r->have_counters) {
		printf("counters:\n");
		for (__u32 k = 0; k < EG_K_REASON_COUNT; k++)
			printf("  %-20s %llu\n", eg_kreason_name(k),
			       (unsigned long long)r->counters[k]);
	}
	if (r->loaded) {
		printf("maps:\n");
		for (int m = 0; m < EG_MAP__COUNT; m++)
			if (r->cap[m])
				printf("  %-20s %u / %u\n", eg_map_names[m], r->fill[m], r->cap[m]);
	}
}

static void print_json(const struct eg_cli_dirs *dirs, const struct report *r, bool full)
{
	printf("{\"pin_dir\":");
	eg_json_str(stdout, dirs->pin_dir);
	printf(",\"loaded\":%s,\"tiers\":[", r->loaded ? "true" : "false");
	for (size_t i = 0; i < eg_tier_count; i++) {
		const struct eg_tier_status *st = &r->st[i];

		printf("%s{\"name\":", i ? "," : "");
		eg_json_str(stdout, eg_tiers[i]->name);
		printf(",\"offered\":%s,\"loaded\":%s,\"why_not\":", st->offered ? "true" : "false",
		       st->loaded ? "true" : "false");
		eg_json_str(stdout, st->offered ? st->detail : st->why_not);
		printf(",\"programs\":[");
		for (size_t p = 0; p < st->nprogs; p++) {
			const struct eg_prog_status *ps = &st->progs[p];

			printf("%s{\"hook\":", p ? "," : "");
			eg_json_str(stdout, ps->hook);
			printf(",\"name\":");
			eg_json_str(stdout, ps->name);
			printf(",\"prog_id\":%u,\"link_id\":%u,\"attach_type\":%u,"
			       "\"attach_type_name\":",
			       ps->prog_id, ps->link_id, ps->attach_type);
			eg_json_str(stdout, attach_type_name(ps->attach_type));
			printf(",\"cgroup\":");
			eg_json_str(stdout, ps->target);
			printf(",\"cgroup_id\":%llu,\"run_cnt\":%llu,\"run_time_ns\":%llu}",
			       (unsigned long long)ps->target_id, (unsigned long long)ps->run_cnt,
			       (unsigned long long)ps->run_time_ns);
		}
		printf("]}");
	}
	printf("],\"guarantees\":[");
	for (size_t i = 0; i < r->ng; i++) {
		printf("%s{\"name\":", i ? "," : "");
		eg_json_str(stdout, r->g[i].name);
		printf(",\"held\":%s,\"summary\":", r->g[i].held ? "true" : "false");
		eg_json_str(stdout, r->g[i].summary);
		printf(",\"reason\":");
		eg_json_str(stdout, r->g[i].reason);
		printf("}");
	}
	printf("]");
	if (full && r->have_counters) {
		printf(",\"counters\":{");
		for (__u32 k = 0; k < EG_K_REASON_COUNT; k++)
			printf("%s\"%s\":%llu", k ? "," : "", eg_kreason_name(k),
			       (unsigned long long)r->counters[k]);
		printf("}");
	}
	if (full && r->loaded) {
		printf(",\"maps\":{");
		for (int m = 0, first = 1; m < EG_MAP__COUNT; m++) {
			if (!r->cap[m])
				continue;
			printf("%s\"%s\":{\"entries\":%u,\"max_entries\":%u}", first ? "" : ",",
			       eg_map_names[m], r->fill[m], r->cap[m]);
			first = 0;
		}
		printf("}");
	}
	printf("}\n");
}

int eg_cli_report(const struct eg_cli_dirs *dirs, bool json, bool full)
{
	struct eg_tier_ctx ctx = {.pin_dir = dirs->pin_dir};
	static struct report r;
	struct eg_maps maps;
	char err[512];
	int rc;

	memset(&r, 0, sizeof(r));
	r.loaded = eg_pins_loaded(dirs->pin_dir);
	for (size_t i = 0; i < eg_tier_count; i++) {
		rc = eg_tiers[i]->status(&ctx, &r.st[i]);
		if (rc) {
			eg_cli_err("tier %s: status: %s", eg_tiers[i]->name, strerror(-rc));
			return rc;
		}
		eg_tiers[i]->guarantees(&r.st[i], r.g, &r.ng, EG_TIER_MAX_GUARANTEES);
	}
	if (full && r.loaded && !eg_maps_open(&maps, dirs->pin_dir, err, sizeof(err))) {
		r.have_counters = !eg_counters_read(&maps, r.counters);
		for (int m = 0; m < EG_MAP__COUNT; m++)
			if (m != EG_MAP_EVENTS && m != EG_MAP_SK_TAGS &&
			    m != EG_MAP_LISTENER_TAGS && m != EG_MAP_COUNTERS &&
			    m != EG_MAP_PATH_HINT)
				eg_map_fill(maps.fd[m], &r.fill[m], &r.cap[m]);
		eg_maps_close(&maps);
	}
	if (json)
		print_json(dirs, &r, full);
	else
		print_text(dirs, &r, full);
	return 0;
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
	    EG_CLI_DIRS_LONG_OPTS,
	    {"json", no_argument, NULL, 0},
	    {NULL, 0, NULL, 0},
	};
	struct eg_cli_dirs dirs;
	bool json = false;
	const char *name;
	int c;

	eg_cli_dirs_init(&dirs);
	optind = 1;
	while ((c = eg_cli_getopt(argc, argv, opts, &dirs, &name)) == 0)
		json = true;
	if (c != -1 || optind != argc) {
		eg_cli_err("status: usage: status [--pin-dir DIR] [--json]");
		return EG_EXIT_USAGE;
	}
	return eg_cli_report(&dirs, json, true) ? EG_EXIT_ERROR : EG_EXIT_OK;
}
