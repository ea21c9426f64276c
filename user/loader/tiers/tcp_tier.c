// SPDX-License-Identifier: Apache-2.0
/* The TCP / ServicePort tier: bpf/cgroup_inet.bpf.c on connect4, connect6,
 * sendmsg4, sendmsg6, sockops and sock_release (which deletes eg_inet_tags
 * entries) of one cgroup (and its descendants), plus
 * the stream revokers, loaded here and pinned as programs so that a
 * revocation only creates an iterator (user/loader/revokers/revoke_tcp.c):
 * bpf/iter_tcp_revoke.bpf.c (<pin-dir>/links/tcp_iter_revoke) where
 * bpf_sock_destroy exists, and bpf/iter_tcp_find.bpf.c
 * (<pin-dir>/links/tcp_iter_find) where sock_diag SOCK_DESTROY works.
 * Links are pinned under
 * <pin-dir>/links/tcp_<hook>; a re-load swaps programs in place with
 * bpf_link_update, as the cgroup tier does. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cgroup_inet.skel.h"
#include "iter_tcp_find.skel.h"
#include "iter_tcp_revoke.skel.h"
#include "loader/tiers/cgroup.h"
#include "loader/log.h"
#include "loader/tiers/tcp_tier.h"
#include "loader/tiers/tier.h"
#include "loader/tiers/tier_link.h"

/* Attached in this order: the collector of eg_inet_tags first, so that no
 * tag is ever made without the program that deletes it in place. */
enum tcp_prog { P_RELEASE, P_CONNECT4, P_CONNECT6, P_SENDMSG4, P_SENDMSG6, P_SOCKOPS, P__COUNT };

static const struct {
	const char *pin;
	const char *hook;
	enum bpf_attach_type type;
} tcp_progs[P__COUNT] = {
    [P_RELEASE] = {"tcp_sock_release", "sock_release", BPF_CGROUP_INET_SOCK_RELEASE},
    [P_CONNECT4] = {"tcp_connect4", "connect4", BPF_CGROUP_INET4_CONNECT},
    [P_CONNECT6] = {"tcp_connect6", "connect6", BPF_CGROUP_INET6_CONNECT},
    [P_SENDMSG4] = {"tcp_sendmsg4", "sendmsg4", BPF_CGROUP_UDP4_SENDMSG},
    [P_SENDMSG6] = {"tcp_sendmsg6", "sendmsg6", BPF_CGROUP_UDP6_SENDMSG},
    [P_SOCKOPS] = {"tcp_sockops", "sockops", BPF_CGROUP_SOCK_OPS},
};

static struct bpf_program *skel_prog(struct cgroup_inet *s, enum tcp_prog i)
{
	switch (i) {
	case P_RELEASE:
		return s->progs.eg_inet_release;
	case P_CONNECT4:
		return s->progs.eg_connect4;
	case P_CONNECT6:
		return s->progs.eg_connect6;
	case P_SENDMSG4:
		return s->progs.eg_sendmsg4;
	case P_SENDMSG6:
		return s->progs.eg_sendmsg6;
	default:
		return s->progs.eg_sockops;
	}
}

static int probe_cached = 1; /* 1: not probed yet */
static char probe_why[256];
static int iter_cached = 1;

/* Probes load the objects with their maps unpinned: nothing in any pin
 * dir changes, and the scratch maps go with the objects. */
static void unpin_maps(struct bpf_object *obj)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, obj) bpf_map__set_pin_path(m, NULL);
}

static int tcp_probe(const struct eg_tier_ctx *ctx, char *why, size_t why_size)
{
	struct cgroup_inet *skel;
	int rc;

	(void)ctx;
	if (probe_cached != 1)
		goto done;
	skel = cgroup_inet__open();
	if (!skel) {
		snprintf(probe_why, sizeof(probe_why), "cannot open the inet programs: %s",
			 strerror(errno));
		probe_cached = -EOPNOTSUPP;
		goto done;
	}
	unpin_maps(skel->obj);
	eg_log_libbpf_quiet(true); /* a refusal is a probe result */
	rc = cgroup_inet__load(skel);
	eg_log_libbpf_quiet(false);
	cgroup_inet__destroy(skel);
	if (rc)
		snprintf(probe_why, sizeof(probe_why),
			 "loading the connect4/6, sendmsg4/6, sockops and sock_release programs "
			 "failed: %s",
			 strerror(-rc));
	probe_cached = rc ? -EOPNOTSUPP : 0;
done:
	if (probe_cached)
		snprintf(why, why_size, "%s", probe_why);
	return probe_cached;
}

int eg_tcp_iter_probe(char *why, size_t why_size)
{
	static char iter_why[256];
	struct iter_tcp_revoke *skel;
	int rc;

	if (iter_cached != 1)
		goto done;
	skel = iter_tcp_revoke__open();
	if (!skel) {
		snprintf(iter_why, sizeof(iter_why), "cannot open the iter/tcp program: %s",
			 strerror(errno));
		iter_cached = -EOPNOTSUPP;
		goto done;
	}
	unpin_maps(skel->obj);
	eg_log_libbpf_quiet(true); /* a refusal is a probe result */
	rc = iter_tcp_revoke__load(skel);
	eg_log_libbpf_quiet(false);
	iter_tcp_revoke__destroy(skel);
	if (rc)
		snprintf(iter_why, sizeof(iter_why),
			 "iter/tcp with bpf_sock_destroy does not load (needs 6.5+): %s",
			 strerror(-rc));
	iter_cached = rc ? -EOPNOTSUPP : 0;
done:
	if (iter_cached)
		snprintf(why, why_size, "%s", iter_why);
	return iter_cached;
}

/* A revoker program, pinned at <pin-dir>/links/name (replaced by rename,
 * so a concurrent revocation always finds one). */
static int pin_prog(const struct eg_tier_ctx *ctx, struct bpf_program *prog, const char *name,
		    char *err, size_t err_size)
{
	char pin[EG_PIN_PATH_MAX], tmp[EG_PIN_PATH_MAX + 16];
	int rc;

	rc = eg_link_pin_path(pin, sizeof(pin), ctx->pin_dir, name);
	if (rc)
		return rc;
	snprintf(tmp, sizeof(tmp), "%s_replacing", pin);
	unlink(tmp);
	rc = bpf_program__pin(prog, tmp);
	if (rc) {
		snprintf(err, err_size, "program %s: pinning: %s", tmp, strerror(-rc));
		return rc;
	}
	if (rename(tmp, pin)) {
		rc = -errno;
		snprintf(err, err_size, "program %s: %s", pin, strerror(-rc));
		unlink(tmp);
	}
	return rc;
}

/* The bpf_sock_destroy revoker, where the kernel has the kfunc (6.5+). */
static int load_iter_kfunc(const struct eg_tier_ctx *ctx, char *err, size_t err_size)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = ctx->pin_dir);
	struct iter_tcp_revoke *skel;
	char why[256];
	int rc;

	if (eg_tcp_iter_probe(why, sizeof(why)))
		return 0;
	skel = iter_tcp_revoke__open_opts(&opts);
	if (!skel) {
		rc = -errno;
		snprintf(err, err_size, "tcp tier: opening the iter/tcp object: %s", strerror(-rc));
		return rc;
	}
	rc = eg_tier_prepare_pins(skel->obj, "tcp", ctx, err, err_size);
	if (rc)
		goto out;
	rc = iter_tcp_revoke__load(skel);
	if (rc)
		eg_tier_load_error(err, err_size, "tcp", ctx->pin_dir, rc);
	else
		rc = pin_prog(ctx, skel->progs.eg_iter_tcp_revoke, EG_TCP_ITER_PIN, err, err_size);
out:
	iter_tcp_revoke__destroy(skel);
	return rc;
}

/* The finder for sock_diag SOCK_DESTROY, where that works: the revoker of
 * kernels before 6.5, and the one tests force elsewhere. */
static int load_iter_find(const struct eg_tier_ctx *ctx, char *err, size_t err_size)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = ctx->pin_dir);
	struct iter_tcp_find *skel;
	char why[256];
	int rc;

	if (eg_tcp_diag_probe(why, sizeof(why)))
		return 0;
	skel = iter_tcp_find__open_opts(&opts);
	if (!skel) {
		rc = -errno;
		snprintf(err, err_size, "tcp tier: opening the iter/tcp finder: %s", strerror(-rc));
		return rc;
	}
	rc = eg_tier_prepare_pins(skel->obj, "tcp", ctx, err, err_size);
	if (rc) {
		iter_tcp_find__destroy(skel);
		return rc;
	}
	/* A kernel that refuses iterators offers no fallback: the tier loads
	 * without it, and status says the guarantee is not held. */
	rc = iter_tcp_find__load(skel);
	if (!rc)
		rc = pin_prog(ctx, skel->progs.eg_iter_tcp_find, EG_TCP_ITER_FIND_PIN, err,
			      err_size);
	else
		rc = 0;
	iter_tcp_find__destroy(skel);
	return rc;
}

/* Every revoker the kernel supports. Neither: the tier still loads, and
 * tcp-stream-revocation is not held (status says why). */
static int load_iter(const struct eg_tier_ctx *ctx, char *err, size_t err_size)
{
	int rc = load_iter_kfunc(ctx, err, err_size);

	return rc ? rc : load_iter_find(ctx, err, err_size);
}

static int tcp_load(const struct eg_tier_ctx *ctx, char *err, size_t err_size)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = ctx->pin_dir);
	char pin[EG_PIN_PATH_MAX], root[EG_PIN_PATH_MAX];
	const char *cgpath;
	struct cgroup_inet *skel = NULL;
	uint64_t cgid;
	int cgfd, rc;

	cgfd = eg_cgroup_open_target(ctx->cgroup_path, root, sizeof(root), &cgpath, &cgid, err,
				     err_size);
	if (cgfd < 0)
		return cgfd;
	skel = cgroup_inet__open_opts(&opts);
	if (!skel) {
		rc = -errno;
		snprintf(err, err_size, "tcp tier: opening the BPF object: %s", strerror(-rc));
		goto out;
	}
	rc = eg_tier_prepare_pins(skel->obj, "tcp", ctx, err, err_size);
	if (rc)
		goto out;
	rc = cgroup_inet__load(skel);
	if (rc) {
		eg_tier_load_error(err, err_size, "tcp", ctx->pin_dir, rc);
		goto out;
	}
	/* The revoker before the hooks: an admitted stream is never without
	 * a way to be cut. */
	rc = load_iter(ctx, err, err_size);
	if (rc)
		goto out;
	for (int i = 0; i < P__COUNT; i++) {
		struct bpf_program *prog = skel_prog(skel, i);
		struct bpf_link *link;

		rc = eg_link_pin_path(pin, sizeof(pin), ctx->pin_dir, tcp_progs[i].pin);
		if (rc)
			goto out;
		rc = eg_cgroup_link_adopt(pin, bpf_program__fd(prog), tcp_progs[i].type,
					  libbpf_bpf_attach_type_str(tcp_progs[i].type), cgid, err,
					  err_size);
		if (rc < 0)
			goto out;
		if (rc == 1)
			continue;
		link = bpf_program__attach_cgroup(prog, cgfd);
		if (!link) {
			rc = -errno;
			snprintf(err, err_size, "cgroup %s: attaching %s: %s", cgpath,
				 tcp_progs[i].hook, strerror(-rc));
			goto out;
		}
		rc = bpf_link__pin(link, pin);
		bpf_link__destroy(link); /* the pin holds it from here on */
		if (rc) {
			snprintf(err, err_size, "link %s: pinning: %s", pin, strerror(-rc));
			goto out;
		}
	}
	rc = 0;
out:
	cgroup_inet__destroy(skel);
	close(cgfd);
	return rc;
}

static int tcp_unload(const struct eg_tier_ctx *ctx, char *err, size_t err_size)
{
	static const char *const revokers[] = {EG_TCP_ITER_PIN, EG_TCP_ITER_FIND_PIN};
	char pin[EG_PIN_PATH_MAX], tmp[EG_PIN_PATH_MAX + 16];
	int rc, first = 0;

	for (int i = 0; i < P__COUNT + 2; i++) {
		rc = eg_link_pin_path(pin, sizeof(pin), ctx->pin_dir,
				      i < P__COUNT ? tcp_progs[i].pin : revokers[i - P__COUNT]);
		if (rc)
			return rc;
		if (unlink(pin) && errno != ENOENT && !first) {
			first = -errno;
			snprintf(err, err_size, "link %s: %s", pin, strerror(errno));
		}
		if (i >= P__COUNT) {
			snprintf(tmp, sizeof(tmp), "%s_replacing", pin);
			unlink(tmp);
		}
	}
	return first;
}

#define HOOK_KFUNC "iter/tcp (revocation)"
#define HOOK_DIAG  "iter/tcp (sock_diag finder)"

static int revoker_status(const struct eg_tier_ctx *ctx, const char *name, const char *hook,
			  struct eg_tier_status *st)
{
	struct eg_prog_status *p = &st->progs[st->nprogs];
	char pin[EG_PIN_PATH_MAX];
	struct bpf_prog_info info;
	int pfd, rc;

	rc = eg_link_pin_path(pin, sizeof(pin), ctx->pin_dir, name);
	if (rc)
		return rc;
	pfd = bpf_obj_get(pin);
	if (pfd < 0)
		return 0;
	if (!eg_prog_info(pfd, &info)) {
		snprintf(p->hook, sizeof(p->hook), "%s", hook);
		snprintf(p->name, sizeof(p->name), "%s", info.name);
		p->prog_id = info.id;
		p->attach_type = BPF_TRACE_ITER;
		p->run_cnt = info.run_cnt;
		p->run_time_ns = info.run_time_ns;
		st->nprogs++;
	}
	close(pfd);
	return 0;
}

static int tcp_status(const struct eg_tier_ctx *ctx, struct eg_tier_status *st)
{
	char pin[EG_PIN_PATH_MAX];
	size_t missing = 0;
	int rc;

	memset(st, 0, sizeof(*st));
	if (ctx->probed)
		eg_tier_status_offered(ctx->probed, eg_tier_index(&eg_tier_tcp), st);
	else
		st->offered = tcp_probe(ctx, st->why_not, sizeof(st->why_not)) == 0;
	for (int i = 0; i < P__COUNT; i++) {
		struct eg_prog_status *p = &st->progs[st->nprogs];
		struct bpf_link_info info;

		rc = eg_link_pin_info(ctx->pin_dir, tcp_progs[i].pin, pin, &info);
		if (rc < 0)
			return rc;
		if (!rc) {
			if (!missing++)
				snprintf(st->detail, sizeof(st->detail),
					 "%s not attached (no %.200s)", tcp_progs[i].hook, pin);
			continue;
		}
		st->nprogs++;
		snprintf(p->hook, sizeof(p->hook), "%s", tcp_progs[i].hook);
		eg_prog_status_from_link(p, &info);
		eg_prog_status_cgroup(p, &info);
		if (!p->target_id && !missing++)
			snprintf(st->detail, sizeof(st->detail), "link %u: its cgroup was removed",
				 info.id);
	}
	/* The revokers: pinned programs, reported as hooks without a link. */
	rc = revoker_status(ctx, EG_TCP_ITER_PIN, HOOK_KFUNC, st);
	if (!rc)
		rc = revoker_status(ctx, EG_TCP_ITER_FIND_PIN, HOOK_DIAG, st);
	if (rc)
		return rc;
	st->loaded = missing == 0;
	return 0;
}

/* The status entry of the revoker whose hook is hook, or NULL. */
static const struct eg_prog_status *revoker(const struct eg_tier_status *st, const char *hook)
{
	for (size_t i = 0; i < st->nprogs; i++)
		if (st->progs[i].attach_type == BPF_TRACE_ITER && !strcmp(st->progs[i].hook, hook))
			return &st->progs[i];
	return NULL;
}

bool eg_tcp_revoker_pinned(const struct eg_tier_status *st)
{
	return revoker(st, HOOK_KFUNC) || revoker(st, HOOK_DIAG);
}

bool eg_tcp_revoker_kfunc_pinned(const struct eg_tier_status *st)
{
	return revoker(st, HOOK_KFUNC) != NULL;
}

static void tcp_guarantees(const struct eg_tier_status *st, struct eg_guarantee *out, size_t *n,
			   size_t max)
{
	const struct eg_prog_status *kfunc = revoker(st, HOOK_KFUNC),
				    *diag = revoker(st, HOOK_DIAG);
	char on[384], rev[384];
	bool held = st->loaded;

	if (held)
		snprintf(
		    on, sizeof(on),
		    "sock_release, connect4/6, sendmsg4/6, sockops links %u..%u on cgroup %.260s",
		    st->progs[0].link_id, st->progs[P__COUNT - 1].link_id, st->progs[0].target);
	else
		eg_tier_not_held_reason(st, on, sizeof(on));
	if (held && kfunc)
		snprintf(rev, sizeof(rev),
			 "sockops link %u tags streams; iter/tcp program %u + bpf_sock_destroy "
			 "cuts them in every admitted network namespace",
			 st->progs[P_SOCKOPS].link_id, kfunc->prog_id);
	else if (held && diag)
		snprintf(rev, sizeof(rev),
			 "sockops link %u tags streams; iter/tcp program %u finds them and "
			 "sock_diag SOCK_DESTROY cuts them in every admitted network namespace "
			 "(no bpf_sock_destroy: kernel before 6.5)",
			 st->progs[P_SOCKOPS].link_id, diag->prog_id);
	else if (held)
		snprintf(rev, sizeof(rev),
			 "no TCP revoker pinned: bpf_sock_destroy needs kernel 6.5+, and at load "
			 "sock_diag SOCK_DESTROY failed its probe (CONFIG_INET_DIAG_DESTROY, "
			 "tcp_diag) or the iter/tcp finder did not load");
	else
		snprintf(rev, sizeof(rev), "%s", on);

	eg_guarantee_add(out, n, max, "tcp-serviceport-profile",
			 "a TCP connect or UDP send to a registered guest address needs a live "
			 "ServicePort grant for its sandbox, port and protocol at the current "
			 "epoch (else EPERM); other addresses pass after one lookup",
			 held, on);
	eg_guarantee_add(out, n, max, "tcp-stream-revocation",
			 "when install moves the epoch or retire runs, every TCP stream admitted "
			 "at an older epoch is destroyed: the peer gets a reset, the local end "
			 "ECONNABORTED",
			 held && (kfunc || diag), rev);
}

const struct eg_tier_ops eg_tier_tcp = {
    .name = "tcp",
    .summary =
	"cgroup connect4/6, sendmsg4/6, sockops, sock_release + iter/tcp (bpf_sock_destroy or "
	"sock_diag): ServicePort TCP/UDP from one cgroup, stream revocation",
    .probe = tcp_probe,
    .load = tcp_load,
    .unload = tcp_unload,
    .status = tcp_status,
    .guarantees = tcp_guarantees,
};
