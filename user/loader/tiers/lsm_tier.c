// SPDX-License-Identifier: Apache-2.0
/* The LSM tier: bpf/lsm.bpf.c on five BPF LSM hooks, machine-wide. Offered
 * where BPF LSM really works (loader/tiers/lsm_probe.h). Links are pinned under
 * <pin-dir>/links/lsm_<hook>.
 *
 * Re-loading: LSM (tracing) links cannot swap their program in place
 * (bpf_link_update is cgroup/xdp/... only). A pinned link whose program has
 * the same tag as the freshly loaded one is adopted untouched; otherwise the
 * new link is attached first, pinned beside the old one and renamed over it,
 * so the hook is never without a program (for an instant it has both, which
 * enforce the same maps). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lsm.skel.h"
#include "loader/tiers/lsm_probe.h"
#include "loader/tiers/lsm_tier.h"
#include "loader/process/task_start.h"
#include "loader/tiers/tier.h"
#include "loader/tiers/tier_link.h"

#define CONNECT_HOOK_UNIX  "lsm/socket_connect (vsock+unix)"
#define CONNECT_HOOK_VSOCK "lsm/socket_connect (vsock)"

/* Indexed by enum eg_lsm_prog. */
static const struct {
	const char *pin; /* link pin name under <pin-dir>/links */
	const char *hook;
} lsm_progs[EG_LSM_PROG__COUNT] = {
    [EG_LSM_PROG_LISTEN] = {"lsm_socket_listen", "lsm/socket_listen"},
    [EG_LSM_PROG_CONNECT] = {"lsm_socket_connect", "lsm/socket_connect"},
    [EG_LSM_PROG_UNIX_STREAM] = {"lsm_unix_stream_connect", "lsm/unix_stream_connect"},
    [EG_LSM_PROG_SENDMSG] = {"lsm_socket_sendmsg", "lsm/socket_sendmsg"},
    [EG_LSM_PROG_RECVMSG] = {"lsm_socket_recvmsg", "lsm/socket_recvmsg"},
    [EG_LSM_PROG_SOCK_GRAFT] = {"lsm_sock_graft", "lsm/sock_graft"},
};

static struct bpf_program *skel_prog(struct lsm *skel, enum eg_lsm_prog i)
{
	switch (i) {
	case EG_LSM_PROG_LISTEN:
		return skel->progs.eg_lsm_socket_listen;
	case EG_LSM_PROG_CONNECT:
		return skel->progs.eg_lsm_socket_connect;
	case EG_LSM_PROG_UNIX_STREAM:
		return skel->progs.eg_lsm_unix_stream_connect;
	case EG_LSM_PROG_SENDMSG:
		return skel->progs.eg_lsm_socket_sendmsg;
	case EG_LSM_PROG_RECVMSG:
		return skel->progs.eg_lsm_socket_recvmsg;
	case EG_LSM_PROG_SOCK_GRAFT:
		return skel->progs.eg_lsm_sock_graft;
	default:
		return NULL;
	}
}

const char *eg_lsm_link_pin_name(enum eg_lsm_prog i)
{
	return i < EG_LSM_PROG__COUNT ? lsm_progs[i].pin : NULL;
}

static int lsm_probe_tier(const struct eg_tier_ctx *ctx, char *why, size_t why_size)
{
	struct eg_lsm_probe p;

	(void)ctx;
	if (!eg_lsm_probe(&p))
		return 0;
	snprintf(why, why_size, "%.200s", p.reason);
	return -EOPNOTSUPP;
}

/* Kernels without connect_unix (6.1) get the Unix path check from
 * lsm/socket_connect; elsewhere the cgroup tier does it. */
bool eg_lsm_unix_connect_needed(const struct eg_tier_ctx *ctx)
{
	char why[256];

	/* status never probes: without a record of this boot it cannot
	 * tell, and names the hook by its VSOCK role. */
	if (ctx->probed)
		return ctx->probed->present &&
		       !ctx->probed->offered[eg_tier_index(&eg_tier_cgroup)];
	return eg_tier_cgroup.probe(ctx, why, sizeof(why)) != 0;
}

/* 1: the pinned link runs a program identical to prog_fd's (keep it);
 * 0: no usable pin (attach and pin afresh); <0: error. */
static int pinned_link_matches(const char *pin, int prog_fd, char *err, size_t err_size)
{
	struct bpf_prog_info want, have;
	struct bpf_link_info info;
	int fd, rc;

	fd = bpf_obj_get(pin);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	rc = eg_link_info(fd, &info);
	close(fd);
	if (rc) {
		snprintf(err, err_size, "link %s: %s", pin, strerror(-rc));
		return rc;
	}
	if (info.type != BPF_LINK_TYPE_TRACING) {
		snprintf(err, err_size, "link %s: not an LSM link (type %u)", pin, info.type);
		return -EINVAL;
	}
	if (eg_prog_info_by_id(info.prog_id, &have))
		return 0;
	rc = eg_prog_info(prog_fd, &want);
	if (rc)
		return rc;
	return memcmp(want.tag, have.tag, BPF_TAG_SIZE) == 0;
}

static int attach_one(struct lsm *skel, enum eg_lsm_prog i, const char *pin_dir, char *err,
		      size_t err_size)
{
	struct bpf_program *prog = skel_prog(skel, i);
	char pin[EG_PIN_PATH_MAX], tmp[EG_PIN_PATH_MAX + 16];
	struct bpf_link *link;
	int rc;

	rc = eg_link_pin_path(pin, sizeof(pin), pin_dir, lsm_progs[i].pin);
	if (rc)
		return rc;
	/* bpffs refuses names with a dot. A leftover from a loader killed
	 * between pin and rename would run the hook twice: drop it. */
	snprintf(tmp, sizeof(tmp), "%s_replacing", pin);
	unlink(tmp);
	rc = pinned_link_matches(pin, bpf_program__fd(prog), err, err_size);
	if (rc < 0)
		return rc;
	if (rc == 1)
		return 0; /* adopted: the same program already enforces */

	link = bpf_program__attach_lsm(prog);
	if (!link) {
		rc = -errno;
		snprintf(err, err_size, "%s: attaching: %s", lsm_progs[i].hook, strerror(-rc));
		return rc;
	}
	rc = bpf_link__pin(link, tmp);
	if (rc) {
		snprintf(err, err_size, "link %s: pinning: %s", tmp, strerror(-rc));
		goto out;
	}
	/* Replaces an older link atomically: its pin goes, it detaches. */
	if (rename(tmp, pin)) {
		rc = -errno;
		snprintf(err, err_size, "link %s: %s", pin, strerror(-rc));
		unlink(tmp);
	}
out:
	bpf_link__destroy(link); /* the pin holds it now */
	return rc;
}

static int lsm_load(const struct eg_tier_ctx *ctx, char *err, size_t err_size)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = ctx->pin_dir);
	struct lsm *skel;
	int rc;

	skel = lsm__open_opts(&opts);
	if (!skel) {
		rc = -errno;
		snprintf(err, err_size, "lsm tier: opening the BPF object: %s", strerror(-rc));
		return rc;
	}
	skel->rodata->eg_lsm_unix_connect = eg_lsm_unix_connect_needed(ctx);
	rc = eg_tier_prepare_pins(skel->obj, "lsm", ctx, err, err_size);
	if (rc)
		goto out;
	rc = lsm__load(skel);
	if (rc) {
		eg_tier_load_error(err, err_size, "lsm", ctx->pin_dir, rc);
		goto out;
	}
	/* listen first: a listener tagged before the connect hooks check it. */
	for (int i = 0; i < EG_LSM_PROG__COUNT; i++) {
		rc = attach_one(skel, i, ctx->pin_dir, err, err_size);
		if (rc)
			goto out;
	}
out:
	lsm__destroy(skel);
	return rc;
}

static int lsm_unload(const struct eg_tier_ctx *ctx, char *err, size_t err_size)
{
	char pin[EG_PIN_PATH_MAX];
	int rc, first = 0;

	for (int i = 0; i < EG_LSM_PROG__COUNT; i++) {
		rc = eg_link_pin_path(pin, sizeof(pin), ctx->pin_dir, lsm_progs[i].pin);
		if (rc)
			return rc;
		if (unlink(pin) && errno != ENOENT && !first) {
			first = -errno;
			snprintf(err, err_size, "link %s: %s", pin, strerror(errno));
		}
		if (strlen(pin) + sizeof("_replacing") <= sizeof(pin)) {
			strcat(pin, "_replacing");
			unlink(pin);
		}
	}
	return first;
}

static int lsm_status(const struct eg_tier_ctx *ctx, struct eg_tier_status *st)
{
	char pin[EG_PIN_PATH_MAX];
	size_t missing = 0;
	int rc;

	memset(st, 0, sizeof(*st));
	if (ctx->probed)
		eg_tier_status_offered(ctx->probed, eg_tier_index(&eg_tier_lsm), st);
	else
		st->offered = lsm_probe_tier(ctx, st->why_not, sizeof(st->why_not)) == 0;
	for (int i = 0; i < EG_LSM_PROG__COUNT; i++) {
		struct eg_prog_status *p = &st->progs[st->nprogs];
		struct bpf_link_info info;

		rc = eg_link_pin_info(ctx->pin_dir, lsm_progs[i].pin, pin, &info);
		if (rc < 0)
			return rc;
		if (!rc) {
			if (!missing++)
				snprintf(st->detail, sizeof(st->detail),
					 "%s not attached (no links/%s)", lsm_progs[i].hook,
					 lsm_progs[i].pin);
			continue;
		}
		st->nprogs++;
		snprintf(p->hook, sizeof(p->hook), "%s", lsm_progs[i].hook);
		if (i == EG_LSM_PROG_CONNECT)
			snprintf(p->hook, sizeof(p->hook), "%s",
				 eg_lsm_unix_connect_needed(ctx) ? CONNECT_HOOK_UNIX
								 : CONNECT_HOOK_VSOCK);
		eg_prog_status_from_link(p, &info);
		p->attach_type = info.tracing.attach_type;
	}
	st->loaded = missing == 0;
	return 0;
}

static const struct eg_guarantee_row lsm_rows[] = {
    {"unix-inode-endpoints", "a registered socket is checked by its bound inode, whatever path "
			     "(symlink, relative, bind mount) names it"},
    {"unix-listener-identity",
     "the listener behind a registered endpoint must be the current "
     "execution's VMM (VMM sockets; needs install --vmm-pid) or bridge "
     "(bridge sockets): a replacement listener on the same path is denied"},
    {"stream-lease", "send and receive on a stream admitted at a replaced epoch fail with "
		     "EPIPE, both directions, as soon as the replacement is installed; an "
		     "activation-attempt change keeps established streams"},
    {"lsm-survives-loader-exit",
     "the LSM links are pinned: enforcement continues when the loader exits "
     "or is killed, and a re-load never leaves a hook without a program"},
};

static void lsm_guarantees(const struct eg_tier_status *st, struct eg_guarantee *out, size_t *n,
			   size_t max)
{
	char on[300], unix_on[300];
	bool held = st->loaded;
	bool via_lsm = false;

	if (held)
		snprintf(on, sizeof(on), "BPF LSM links %u..%u (%zu hooks), machine-wide",
			 st->progs[0].link_id, st->progs[st->nprogs - 1].link_id, st->nprogs);
	else
		eg_tier_not_held_reason(st, on, sizeof(on));

	/* Whether socket_connect also carries the Unix path check was decided
	 * at load from the connect_unix probe; status names it in the hook. */
	for (size_t i = 0; i < st->nprogs; i++)
		if (!strcmp(st->progs[i].hook, CONNECT_HOOK_UNIX))
			via_lsm = true;
	if (held) {
		snprintf(unix_on, sizeof(unix_on), "%s",
			 via_lsm ? on
				 : "the kernel has connect_unix: path endpoints are checked by the "
				   "cgroup tier, for its cgroup only (inode endpoints are "
				   "machine-wide)");
	} else {
		snprintf(unix_on, sizeof(unix_on), "%s", on);
	}

	eg_guarantee_add(out, n, max, "vsock-vmm-bridge-only",
			 "a registered AF_VSOCK (CID, port) admits only the current execution's "
			 "bridge (tgid, start time, executable); connect() fails with EPERM",
			 held, on);
	eg_task_start_guarantee_add(
	    out, n, max, "lsm-pid-reuse-ns-identity",
	    "a process that gets a dead bridge's pid back is refused by the "
	    "LSM hooks, even within the same 10 ms tick: start times compare "
	    "in ns",
	    held, on);
	eg_guarantee_add(out, n, max, "unix-path-machine-wide",
			 "registered Unix socket paths are checked for every process on the host, "
			 "by lsm/socket_connect (kernels without connect_unix)",
			 held && via_lsm, unix_on);
	eg_guarantee_add_rows(out, n, max, lsm_rows, sizeof(lsm_rows) / sizeof(lsm_rows[0]), held,
			      on);
}

const struct eg_tier_ops eg_tier_lsm = {
    .name = "lsm",
    .summary = "BPF LSM: AF_VSOCK endpoints, inode endpoints, listener identity, stream "
	       "leases (lsm=...,bpf)",
    .probe = lsm_probe_tier,
    .load = lsm_load,
    .unload = lsm_unload,
    .status = lsm_status,
    .guarantees = lsm_guarantees,
};
