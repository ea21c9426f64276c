/* SPDX-License-Identifier: Apache-2.0 */
/* Enforcement tiers: program sets the loader probes, loads, attaches, pins,
 * detaches and reports, one entry each in eg_tiers[] (tier.c). Everything
 * that touches several tiers (`execgate load/unload/status`, --require, the
 * guarantee list) iterates that table and knows no tier by name.
 *
 * Adding a tier (user/loader/tiers/lsm_tier.c and tcp_tier.c are the examples):
 *   1. define `const struct eg_tier_ops eg_tier_<name>` in its own file;
 *      its BPF object includes bpf/execgate_maps.bpf.h and is opened with
 *      bpf_object_open_opts.pin_root_path = ctx->pin_dir, so it shares the
 *      maps the other tiers pinned;
 *   2. pin every link under eg_link_pin_path(ctx->pin_dir, <program>), and
 *      on load adopt an existing pin with bpf_link_update() so a re-load never
 *      leaves a hook unguarded;
 *   3. add its extern below and `&eg_tier_<name>` to eg_tiers[] in tier.c.
 * `--require <name>` then works, and `--require full` means every tier. */
#ifndef EXECGATE_LOADER_TIER_H
#define EXECGATE_LOADER_TIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "loader/maps/pins.h"

struct eg_probe_record;

struct eg_tier_ctx {
	const char *pin_dir;
	/* load: the cgroup to attach cgroup programs to. NULL elsewhere;
	 * probes then use the cgroup v2 root. */
	const char *cgroup_path;
	/* eg_tiers_load: where to keep what it probed (<state_dir>/probe), for
	 * status. NULL: not kept. */
	const char *state_dir;
	/* status: what load probed. With it, status() only reads pins; NULL
	 * (tests) makes status() probe, which loads programs and creates a
	 * scratch cgroup. */
	const struct eg_probe_record *probed;
	/* load: the capacity of eg_inet_tags (EG_INET_TAGS_MIN..MAX, sizes.h;
	 * eg_tiers_load checks it). 0: the pinned map's, else EG_MAX_INET_TAGS. */
	unsigned inet_tags;
};

#define EG_TIER_MAX_PROGS      8
#define EG_TIER_MAX_GUARANTEES 32

struct eg_prog_status {
	char name[64]; /* BPF program name */
	char hook[64]; /* "connect_unix", "lsm/socket_connect", ... */
	__u32 prog_id;
	__u32 link_id;
	__u32 attach_type;
	char target[EG_PIN_PATH_MAX]; /* cgroup path, or "" for global hooks */
	__u64 target_id;	      /* cgroup id, 0 for global hooks */
	__u64 run_cnt, run_time_ns;   /* bpf_stats (kernel.bpf_stats_enabled) */
};

struct eg_tier_status {
	bool offered;	   /* the running kernel can give this tier */
	char why_not[256]; /* when !offered */
	bool loaded;	   /* every program of the tier attached and pinned */
	char detail[256];  /* when offered && !loaded */
	size_t nprogs;
	struct eg_prog_status progs[EG_TIER_MAX_PROGS];
};

struct eg_guarantee {
	const char *name;    /* stable id, e.g. "unix-connect-bridge-grant" */
	const char *summary; /* one line, what holds when held */
	bool held;
	char reason[384]; /* what it rests on, or why it does not hold */
};

struct eg_tier_ops {
	const char *name; /* "cgroup", "lsm": the --require word */
	const char *summary;
	/* 0 when the kernel offers the tier, -EOPNOTSUPP with why otherwise. */
	int (*probe)(const struct eg_tier_ctx *ctx, char *why, size_t why_size);
	/* Idempotent: adopts existing pins. */
	int (*load)(const struct eg_tier_ctx *ctx, char *err, size_t err_size);
	/* Removes the tier's link pins (its programs detach). */
	int (*unload)(const struct eg_tier_ctx *ctx, char *err, size_t err_size);
	int (*status)(const struct eg_tier_ctx *ctx, struct eg_tier_status *st);
	/* Appends this tier's guarantees (held or not) to out[*n]. */
	void (*guarantees)(const struct eg_tier_status *st, struct eg_guarantee *out, size_t *n,
			   size_t max);
};

extern const struct eg_tier_ops eg_tier_cgroup;
extern const struct eg_tier_ops eg_tier_lsm; /* user/loader/tiers/lsm_tier.c */
extern const struct eg_tier_ops eg_tier_tcp; /* user/loader/tiers/tcp_tier.c */

extern const struct eg_tier_ops *const eg_tiers[];
extern const size_t eg_tier_count;

const struct eg_tier_ops *eg_tier_find(const char *name);
/* t's index in eg_tiers[]. */
size_t eg_tier_index(const struct eg_tier_ops *t);

/* What the kernel offers, as probed by the last `load` (or execgated's
 * start-up) in this boot: <state_dir>/probe, written temp + rename. status
 * reads it and so never loads a probe program or creates a cgroup. */
#define EG_TIER_MAX 8
struct eg_probe_record {
	bool present;	   /* a record of this boot was read */
	char missing[160]; /* when !present: why (no file, another boot) */
	bool offered[EG_TIER_MAX];
	char why_not[EG_TIER_MAX][256];
	/* What the process that probed may do itself (loader/revokers/serving.h):
	 * each revocation step, allowed or refused and why. */
	bool serving_probed;
	char serving_by[64];
#define EG_SERVING_MAX_STEPS 4
	bool step_ok[EG_SERVING_MAX_STEPS];
	char step_why[EG_SERVING_MAX_STEPS][200];
};
/* Probes every tier (side effects: probe programs, a scratch cgroup), and
 * what the calling process may do itself (loader/revokers/serving.h). */
void eg_tiers_probe(const struct eg_tier_ctx *ctx, struct eg_probe_record *out);
int eg_probe_record_write(const char *state_dir, const struct eg_probe_record *r, char *err,
			  size_t err_size);
/* Always fills *out; present false (missing says why) when there is no
 * record of this boot. */
void eg_probe_record_read(const char *state_dir, struct eg_probe_record *out);
/* st->offered / why_not from the record (why_not says "not probed" when
 * there is none). */
void eg_tier_status_offered(const struct eg_probe_record *r, size_t tier,
			    struct eg_tier_status *st);

/* `execgate load`: probes every tier, then loads (adopting existing pins)
 * each one the kernel offers. require is NULL, a tier name or "full".
 * -EINVAL for an unknown require word, -EOPNOTSUPP when a required tier (or
 * every tier) is not offered; nothing is touched before the probes pass.
 * -ENOENT/-ENOTDIR when ctx->cgroup_path is not a cgroup v2 directory. With
 * ctx->state_dir, keeps what it probed there (eg_probe_record_write). */
int eg_tiers_load(const struct eg_tier_ctx *ctx, const char *require, char *err, size_t err_size);
/* `execgate unload`: every tier's links, then the map pins and pin_dir
 * itself. -ENOTEMPTY when foreign pins are left. */
int eg_tiers_unload(const struct eg_tier_ctx *ctx, char *err, size_t err_size);

/* Appends one guarantee; used by the tiers' guarantees(). */
void eg_guarantee_add(struct eg_guarantee *out, size_t *n, size_t max, const char *name,
		      const char *summary, bool held, const char *reason);
/* A tier's guarantees that hold or not together: a table of these, added
 * in order with one held and reason. */
struct eg_guarantee_row {
	const char *name, *summary;
};
void eg_guarantee_add_rows(struct eg_guarantee *out, size_t *n, size_t max,
			   const struct eg_guarantee_row *rows, size_t count, bool held,
			   const char *reason);
/* Why a tier that is not loaded does not hold: the probe's reason when the
 * kernel does not offer it, else what status found missing. */
void eg_tier_not_held_reason(const struct eg_tier_status *st, char *out, size_t size);
/* err for a failed skeleton load of the tier's BPF object; -EINVAL mostly
 * means pinned maps another build created. */
void eg_tier_load_error(char *err, size_t err_size, const char *tier, const char *pin_dir, int rc);
/* Before a load, three steps, for every object opened with pin_root_path
 * ctx->pin_dir. eg_inet_tags gets the capacity ctx asks for, or the pinned
 * map's when ctx asks for none; asked for one other than the pinned map's:
 * -EEXIST with err (a capacity changes only with an unload). Every map of
 * obj already pinned must have the layout obj declares (what libbpf checks when it reuses a pin,
 * but it says so only in its debug output, after it may have created and pinned the object's other
 * maps): -EEXIST with err naming the first map that differs, and nothing created. Then the socket
 * tag maps not pinned yet are created outside the loader's memory cgroup (tag_maps.h); where that
 * is not possible the load creates them as before, so it never fails the load. */
struct bpf_object;
int eg_tier_prepare_pins(struct bpf_object *obj, const char *tier, const struct eg_tier_ctx *ctx,
			 char *err, size_t err_size);

/* Types prog, a program of an object from bpf/ whose section is
 * "cgroup/connect_unix", as a sock_addr program on BPF_CGROUP_UNIX_CONNECT
 * (user/kcompat.h): the libbpf this builds against may not know that
 * section (bpf/cgroup_connect_unix.bpf.c). Before load. */
struct bpf_program;
void eg_prog_type_unix_connect(struct bpf_program *prog);

#endif
