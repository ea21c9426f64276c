// SPDX-License-Identifier: Apache-2.0
/* The cgroup tier: bpf/cgroup_connect_unix.bpf.c on BPF_CGROUP_UNIX_CONNECT
 * of one cgroup (and so its descendants). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cgroup_connect_unix.skel.h"
#include "cgroup_connect_unix_empty.skel.h"
#include "kcompat.h"
#include "loader/tiers/cgroup.h"
#include "loader/log.h"
#include "loader/tiers/tier.h"
#include "loader/process/task_start.h"
#include "loader/tiers/tier_link.h"

#define LINK_NAME "cgroup_connect_unix"

void eg_prog_type_unix_connect(struct bpf_program *prog)
{
	bpf_program__set_type(prog, BPF_PROG_TYPE_CGROUP_SOCK_ADDR);
	bpf_program__set_expected_attach_type(prog, EG_BPF_CGROUP_UNIX_CONNECT);
}

static int probe_cached = 1; /* 1: not probed yet */
static char probe_why[256];

static int probe_base(const struct eg_tier_ctx *ctx, char *out, size_t size)
{
	if (ctx->cgroup_path) {
		snprintf(out, size, "%s", ctx->cgroup_path);
		return 0;
	}
	return eg_cgroup2_root(out, size);
}

/* Load the empty program with the new attach type and attach it, for an
 * instant, to an empty child cgroup: loading alone proves little, and the
 * empty child guarantees the probe never affects a real process. */
static int cgroup_probe(const struct eg_tier_ctx *ctx, char *why, size_t why_size)
{
	struct cgroup_connect_unix_empty *skel = NULL;
	char base[EG_PIN_PATH_MAX], scratch[EG_PIN_PATH_MAX + 64], err[256];
	struct bpf_link *link = NULL;
	int cgfd = -1, rc;

	if (probe_cached != 1)
		goto done;
	rc = probe_base(ctx, base, sizeof(base));
	if (rc) {
		snprintf(probe_why, sizeof(probe_why), "no cgroup v2 mount found");
		probe_cached = -EOPNOTSUPP;
		goto done;
	}
	skel = cgroup_connect_unix_empty__open();
	if (!skel) {
		rc = -errno;
		snprintf(probe_why, sizeof(probe_why), "cannot open the probe program: %s",
			 strerror(-rc));
		goto out;
	}
	eg_prog_type_unix_connect(skel->progs.eg_connect_unix_empty);
	/* A refusal is the expected answer on 6.1, not worth libbpf's dump. */
	eg_log_libbpf_quiet(true);
	rc = cgroup_connect_unix_empty__load(skel);
	eg_log_libbpf_quiet(false);
	if (rc) {
		snprintf(probe_why, sizeof(probe_why),
			 rc == -EINVAL ? "kernel has no BPF_CGROUP_UNIX_CONNECT hook (needs 6.7+)"
				       : "loading a connect_unix program failed: %s",
			 strerror(-rc));
		goto out;
	}
	snprintf(scratch, sizeof(scratch), "%s/execgate-probe-%d", base, (int)getpid());
	if (mkdir(scratch, 0700) && errno != EEXIST) {
		rc = -errno;
		snprintf(probe_why, sizeof(probe_why), "cgroup %.160s: %s", scratch,
			 strerror(errno));
		goto out;
	}
	cgfd = eg_cgroup_open(scratch, err, sizeof(err));
	if (cgfd < 0) {
		rc = cgfd;
		snprintf(probe_why, sizeof(probe_why), "%.200s", err);
		goto out_rmdir;
	}
	link = bpf_program__attach_cgroup(skel->progs.eg_connect_unix_empty, cgfd);
	if (!link) {
		rc = -errno;
		snprintf(probe_why, sizeof(probe_why),
			 "attaching connect_unix to a cgroup failed: %s", strerror(-rc));
		goto out_rmdir;
	}
	bpf_link__destroy(link);
	rc = 0;
out_rmdir:
	if (cgfd >= 0)
		close(cgfd);
	rmdir(scratch);
out:
	cgroup_connect_unix_empty__destroy(skel);
	probe_cached = rc ? -EOPNOTSUPP : 0;
done:
	if (probe_cached)
		snprintf(why, why_size, "%s", probe_why);
	return probe_cached;
}

static int cgroup_load(const struct eg_tier_ctx *ctx, char *err, size_t err_size)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = ctx->pin_dir);
	struct cgroup_connect_unix *skel = NULL;
	char pin[EG_PIN_PATH_MAX], root[EG_PIN_PATH_MAX];
	const char *cgpath;
	struct bpf_link *link = NULL;
	uint64_t cgid;
	int cgfd = -1, rc;

	cgfd = eg_cgroup_open_target(ctx->cgroup_path, root, sizeof(root), &cgpath, &cgid, err,
				     err_size);
	if (cgfd < 0)
		return cgfd;
	skel = cgroup_connect_unix__open_opts(&opts);
	if (!skel) {
		rc = -errno;
		snprintf(err, err_size, "cgroup tier: opening the BPF object: %s", strerror(-rc));
		goto out;
	}
	eg_prog_type_unix_connect(skel->progs.eg_connect_unix);
	rc = eg_tier_prepare_pins(skel->obj, "cgroup", ctx, err, err_size);
	if (rc)
		goto out;
	rc = cgroup_connect_unix__load(skel);
	if (rc) {
		eg_tier_load_error(err, err_size, "cgroup", ctx->pin_dir, rc);
		goto out;
	}
	rc = eg_link_pin_path(pin, sizeof(pin), ctx->pin_dir, LINK_NAME);
	if (rc)
		goto out;
	if (access(pin, F_OK) == 0) {
		rc = eg_cgroup_link_adopt(pin, bpf_program__fd(skel->progs.eg_connect_unix),
					  EG_BPF_CGROUP_UNIX_CONNECT, "connect_unix", cgid, err,
					  err_size);
		if (rc < 0)
			goto out;
		if (rc == 1) {
			rc = 0;
			goto out;
		}
	}
	link = bpf_program__attach_cgroup(skel->progs.eg_connect_unix, cgfd);
	if (!link) {
		rc = -errno;
		snprintf(err, err_size, "cgroup %s: attaching connect_unix: %s", cgpath,
			 strerror(-rc));
		goto out;
	}
	rc = bpf_link__pin(link, pin);
	if (rc) {
		snprintf(err, err_size, "link %s: pinning: %s", pin, strerror(-rc));
		goto out;
	}
out:
	/* The pin holds the link (and the link the program) from here on. */
	bpf_link__destroy(link);
	cgroup_connect_unix__destroy(skel);
	close(cgfd);
	return rc;
}

static int cgroup_unload(const struct eg_tier_ctx *ctx, char *err, size_t err_size)
{
	char pin[EG_PIN_PATH_MAX];
	int rc;

	rc = eg_link_pin_path(pin, sizeof(pin), ctx->pin_dir, LINK_NAME);
	if (rc)
		return rc;
	if (unlink(pin) && errno != ENOENT) {
		rc = -errno;
		snprintf(err, err_size, "link %s: %s", pin, strerror(errno));
		return rc;
	}
	return 0;
}

static int cgroup_status(const struct eg_tier_ctx *ctx, struct eg_tier_status *st)
{
	struct eg_prog_status *p = &st->progs[0];
	struct bpf_link_info info;
	char pin[EG_PIN_PATH_MAX];
	int rc;

	memset(st, 0, sizeof(*st));
	if (ctx->probed)
		eg_tier_status_offered(ctx->probed, eg_tier_index(&eg_tier_cgroup), st);
	else
		st->offered = cgroup_probe(ctx, st->why_not, sizeof(st->why_not)) == 0;
	rc = eg_link_pin_info(ctx->pin_dir, LINK_NAME, pin, &info);
	if (rc < 0)
		return rc;
	if (!rc) {
		snprintf(st->detail, sizeof(st->detail), "connect_unix not attached (no %.200s)",
			 pin);
		return 0;
	}
	st->nprogs = 1;
	snprintf(p->hook, sizeof(p->hook), "connect_unix");
	eg_prog_status_from_link(p, &info);
	eg_prog_status_cgroup(p, &info);
	st->loaded = p->target_id != 0;
	if (!st->loaded)
		snprintf(st->detail, sizeof(st->detail), "link %u: its cgroup was removed",
			 info.id);
	return 0;
}

static const struct eg_guarantee_row cgroup_rows[] = {
    {"unix-bridge-socket-grant",
     "a registered bridge socket admits only processes holding an unexpired "
     "grant at the current epoch"},
    {"epoch-revokes-grants",
     "installing a replacement execution kills every grant of the older one "
     "at once, before expiry"},
    {"unix-fail-closed", "an endpoint whose record is retired, missing or inconsistent denies "
			 "every connect"},
    {"unix-unregistered-untouched",
     "connects to unregistered paths pass, after one bitmap test (eg_path_hint)"},
    {"unix-socket-epoch-tag", "every admitted Unix socket carries (sandbox, epoch, generation) in "
			      "eg_sk_tags"},
    {"unix-stream-revocation",
     "install of a new generation, and retire, shut down every Unix stream "
     "admitted at an older epoch (both ends), before returning; a writer killed "
     "before its cut leaves the intent in the record, and the next writer, "
     "CLI call or daemon start cuts first; an activation change keeps them"},
    {"unix-survives-loader-exit",
     "maps and the connect_unix link are pinned: enforcement continues when "
     "the loader exits or is killed, and a re-load swaps programs in place"},
};

static void cgroup_guarantees(const struct eg_tier_status *st, struct eg_guarantee *out, size_t *n,
			      size_t max)
{
	char on[384];
	bool held = st->loaded;

	if (held)
		snprintf(on, sizeof(on), "connect_unix link %u, program %u, on cgroup %.300s",
			 st->progs[0].link_id, st->progs[0].prog_id, st->progs[0].target);
	else
		eg_tier_not_held_reason(st, on, sizeof(on));

	eg_guarantee_add(out, n, max, "unix-vmm-socket-bridge-only",
			 "a registered VMM socket admits only the current execution's bridge "
			 "(tgid, start time, executable)",
			 held, on);
	eg_task_start_guarantee_add(
	    out, n, max, "pid-reuse-ns-identity",
	    "a process that gets a dead bridge's or grantee's pid back is "
	    "denied, even within the same 10 ms tick: start times compare in ns",
	    held, on);
	eg_guarantee_add_rows(out, n, max, cgroup_rows,
			      sizeof(cgroup_rows) / sizeof(cgroup_rows[0]), held, on);
}

const struct eg_tier_ops eg_tier_cgroup = {
    .name = "cgroup",
    .summary = "cgroup connect_unix: Unix connects from one cgroup (kernel 6.7+)",
    .probe = cgroup_probe,
    .load = cgroup_load,
    .unload = cgroup_unload,
    .status = cgroup_status,
    .guarantees = cgroup_guarantees,
};
