// SPDX-License-Identifier: Apache-2.0
/* Scenario 3: the maps at capacity. eg_records is filled to
 * EG_MAX_SANDBOXES through the library (real installs), eg_grants to
 * EG_MAX_GRANTS with live grants (one real admit, the rest written as
 * abi.h defines them, for processes that cannot exist: tgids above any
 * pid_max). Then:
 *  - a new sandbox (`execgate install`) and a new grant (`execgate admit`)
 *    fail with exit 1 and one line naming the map and "full";
 *  - updates of existing entries still succeed (a new generation of an
 *    installed sandbox, a re-admit of the granted process);
 *  - every decision of the existing sandbox stays what the reference
 *    table says, before, during and after. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "soak.h"

/* A child in the cgroup that connects on command: writes 0 or 1 (path
 * index), reads back the connect's result. */
struct prober {
	pid_t pid;
	int to, from;
	struct eg_process id;
};

static void prober_start(struct prober *p, const char *paths[2])
{
	int a[2], b[2];
	char err[EG_ERR_MAX];
	struct eg_subject s = {.pidfd = -1};

	if (pipe(a) || pipe(b))
		soak_fail("pipe: %s", strerror(errno));
	p->pid = soak_fork();
	if (p->pid == 0) {
		char c;

		close(a[1]);
		close(b[0]);
		soak_enter(-1);
		while (read(a[0], &c, 1) == 1) {
			int rc = soak_connect(paths[c & 1]);

			if (write(b[1], &rc, sizeof(rc)) != sizeof(rc))
				break;
		}
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	p->to = a[1];
	p->from = b[0];
	s.pid = p->pid;
	if (eg_worker_identify(&s, &p->id, err, sizeof(err)))
		soak_fail("capacity: identify: %s", err);
}

static int prober_connect(struct prober *p, int path)
{
	char c = (char)path;
	int rc;

	if (write(p->to, &c, 1) != 1 || read(p->from, &rc, sizeof(rc)) != sizeof(rc))
		soak_fail("capacity: prober %d died", (int)p->pid);
	return rc;
}

enum { HOLDER, BRIDGE, NOBODY, NPROBERS };
static const char *const who_names[] = {"holder", "bridge", "nobody"};
/* The reference table: [prober][path 0 = bridge socket, 1 = VMM socket]. */
static const int expect[NPROBERS][2] = {
    [HOLDER] = {0, -EPERM},
    [BRIDGE] = {-EPERM, 0},
    [NOBODY] = {-EPERM, -EPERM},
};

static void check_all(struct soak_result *r, struct prober *p, unsigned rounds, const char *when)
{
	for (unsigned i = 0; i < rounds; i++)
		for (int k = 0; k < NPROBERS; k++)
			for (int path = 0; path < 2; path++) {
				int rc = prober_connect(&p[k], path);

				r->decisions++;
				if (rc == expect[k][path])
					continue;
				if (rc == 0)
					r->wrong_allow++;
				else if (rc == -EPERM)
					r->wrong_deny++;
				else
					r->other++;
				if (r->wrong_allow + r->wrong_deny + r->other == 1)
					fprintf(stderr,
						"soak: capacity (%s): %s to the %s socket: got %d, "
						"expected %d\n",
						when, who_names[k], path ? "VMM" : "bridge", rc,
						expect[k][path]);
			}
}

static unsigned fill_of(const char *name)
{
	struct eg_map_fill f[16];
	size_t n = eg_worker_map_fill(se.w, f, 16);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(f[i].name, name))
			return f[i].entries;
	soak_fail("capacity: map fill has no %s", name);
}

/* One line, "execgate: <cmd>: ...", naming the map and saying full. */
static bool clear_error(const char *out, const char *cmd, const char *map)
{
	char prefix[64];
	const char *nl = strchr(out, '\n');

	snprintf(prefix, sizeof(prefix), "execgate: %s: ", cmd);
	return !strncmp(out, prefix, strlen(prefix)) && nl && nl[1] == '\0' && strstr(out, map) &&
	       strstr(out, "full");
}

/* Admits the holder to sb from a fresh capability, left in token. A
 * capability lives at most 120 s (EG_CAP_MAX_TTL), and on a loaded host
 * filling eg_records alone took 265 s: the grant is renewed before each
 * check that relies on it. 0, or -1 with err set. */
static int holder_admit(struct eg_subject *who, struct eg_admit_args *aa, const __u8 *sb,
			char token[EG_CAP_TEXT_MAX], char *err, size_t err_size)
{
	struct eg_verdict_result res;

	soak_token(token, sb, 1, 1, 120);
	aa->token_text = token;
	memset(&res, 0, sizeof(res));
	if (eg_worker_admit(se.w, who, aa, &res, err, err_size))
		return -1;
	if (!res.granted)
		snprintf(err, err_size, "not granted");
	return res.granted ? 0 : -1;
}

int soak_capacity(struct soak_result *r)
{
	struct prober p[NPROBERS];
	struct eg_install_spec spec = {0};
	struct eg_install_report rep;
	struct eg_grant g;
	struct eg_admit_args aa = {.req = {.scope = EG_SCOPE_FILE_READ}};
	struct eg_subject who = {.pidfd = -1};
	char err[EG_ERR_MAX], out[4096], token[EG_CAP_TEXT_MAX], sbt[EG_UUID_TEXT_LEN];
	char bsock[200], vsock[200], pid_text[16], msg_install[512] = "", msg_admit[512] = "";
	const char *paths[2];
	uint64_t t0 = soak_now_ns(), fill_ns, now_boot;
	unsigned records, filler = 0, grants, written = 0;
	__u8 sb[EG_ID_BYTES], first[EG_ID_BYTES];
	pid_t dummy;
	int gfd, rc;

	r->name = "capacity";
	snprintf(bsock, sizeof(bsock), "%s/c-bridge.sock", se.dir);
	snprintf(vsock, sizeof(vsock), "%s/c-vmm.sock", se.dir);
	paths[0] = bsock;
	paths[1] = vsock;
	soak_listener(bsock, vsock);
	dummy = soak_dummy();
	for (int k = 0; k < NPROBERS; k++)
		prober_start(&p[k], paths);

	/* The existing sandbox whose decisions must not change. */
	soak_sandbox(sb, 3, 0);
	memcpy(spec.sandbox, sb, EG_ID_BYTES);
	memcpy(spec.worker, se.worker, EG_ID_BYTES);
	spec.substrate = 2;
	spec.generation = 1;
	spec.activation = 1;
	spec.bridge_pid = p[BRIDGE].pid;
	spec.vmm_pid = dummy;
	spec.bridge_sockets[0] = bsock;
	spec.n_bridge_sockets = 1;
	spec.vmm_sockets[0] = vsock;
	spec.n_vmm_sockets = 1;
	if (eg_worker_install(se.w, &spec, &rep, err, sizeof(err)))
		soak_fail("capacity: install: %s", err);
	who.pid = p[HOLDER].pid;
	if (holder_admit(&who, &aa, sb, token, err, sizeof(err)))
		soak_fail("capacity: admit holder: %s", err);
	check_all(r, p, 20, "before");

	/* Fill eg_records with real installs (no endpoints of their own). */
	spec.bridge_pid = dummy;
	spec.n_bridge_sockets = spec.n_vmm_sockets = 0;
	soak_sandbox(first, 3, 1);
	records = fill_of("eg_records");
	for (unsigned i = 1; records < EG_MAX_SANDBOXES; i++, records++) {
		soak_sandbox(spec.sandbox, 3, i);
		rc = eg_worker_install(se.w, &spec, &rep, err, sizeof(err));
		if (rc)
			soak_fail("capacity: install %u of %u (%u records): %s", i,
				  EG_MAX_SANDBOXES, records, err);
		filler++;
		r->runs++;
		if (i % 4096 == 0) {
			if (holder_admit(&who, &aa, sb, token, err, sizeof(err)))
				soak_fail("capacity: renewing the holder's grant: %s", err);
			check_all(r, p, 1, "filling eg_records");
		}
	}
	if (holder_admit(&who, &aa, sb, token, err, sizeof(err)))
		soak_fail("capacity: renewing the holder's grant: %s", err);
	if (fill_of("eg_records") != EG_MAX_SANDBOXES)
		soak_fail("capacity: eg_records holds %u, not %u", fill_of("eg_records"),
			  EG_MAX_SANDBOXES);
	check_all(r, p, 20, "eg_records full");

	/* A new sandbox: refused, one clear line, exit 1. */
	{
		char gen[] = "1", bpid[16];
		const char *args[] = {"install",   "--sandbox",	   sbt,	 "--worker",
				      SOAK_WORKER, "--generation", gen,	 "--activation",
				      "1",	   "--bridge-pid", bpid, NULL};

		soak_sandbox(spec.sandbox, 3, 0x7fffffff);
		eg_uuid_to_text(spec.sandbox, sbt);
		snprintf(bpid, sizeof(bpid), "%d", (int)dummy);
		rc = soak_cli(out, sizeof(out), args);
		snprintf(msg_install, sizeof(msg_install), "%.500s", out);
		msg_install[strcspn(msg_install, "\n")] = '\0';
		if (rc != 1 || !clear_error(out, "install", "eg_records")) {
			r->failed = true;
			fprintf(stderr,
				"soak: capacity: install into a full eg_records: exit %d: %s", rc,
				out);
		}
	}
	/* An existing sandbox still moves on (its element is updated in place). */
	memcpy(spec.sandbox, first, EG_ID_BYTES);
	spec.generation = 2;
	if (eg_worker_install(se.w, &spec, &rep, err, sizeof(err)) ||
	    rep.outcome != EG_INSTALLED_REPLACED) {
		r->failed = true;
		fprintf(stderr,
			"soak: capacity: new generation of an installed sandbox at "
			"capacity: %s\n",
			err);
	}
	check_all(r, p, 20, "after the refused install");

	/* Fill eg_grants with live grants of sandbox sb (epoch and generation
	 * of its record, an hour to live) for tgids no process can have. */
	gfd = soak_map("eg_grants");
	now_boot = 0;
	{
		struct eg_sandbox_info info;
		struct timespec ts;

		if (eg_worker_show(se.w, sb, &info, err, sizeof(err)))
			soak_fail("capacity: show: %s", err);
		clock_gettime(CLOCK_BOOTTIME, &ts);
		now_boot = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
		memset(&g, 0, sizeof(g));
		g.scope = EG_SCOPE_FILE_READ;
		eg_proc_id_of(&p[HOLDER].id, &g.key.proc);
		memcpy(g.key.sandbox, sb, EG_ID_BYTES);
		g.generation = info.record.generation;
		g.epoch = info.record.epoch;
		g.expiry_ns = now_boot + 3600ULL * 1000000000ULL;
	}
	fill_ns = soak_now_ns();
	grants = fill_of("eg_grants");
	for (__u32 tgid = 0x40000000u; grants < EG_MAX_GRANTS; tgid++) {
		g.key.proc.tgid = tgid;
		if (bpf_map_update_elem(gfd, &g.key, &g, BPF_NOEXIST | BPF_F_LOCK)) {
			if (errno == E2BIG)
				break;
			soak_fail("capacity: writing eg_grants: %s", strerror(errno));
		}
		grants++;
		written++;
	}
	fill_ns = soak_now_ns() - fill_ns;
	r->runs += written;
	if (fill_of("eg_grants") != EG_MAX_GRANTS)
		soak_fail("capacity: eg_grants holds %u, not %u", fill_of("eg_grants"),
			  EG_MAX_GRANTS);
	check_all(r, p, 20, "eg_grants full");

	/* A new grant: refused, one clear line, exit 1; nobody stays denied. */
	if (holder_admit(&who, &aa, sb, token, err, sizeof(err)))
		soak_fail("capacity: renewing the holder's grant: %s", err);
	{
		const char *args[] = {"admit", "--pid", pid_text, token, NULL};

		snprintf(pid_text, sizeof(pid_text), "%d", (int)p[NOBODY].pid);
		rc = soak_cli(out, sizeof(out), args);
		snprintf(msg_admit, sizeof(msg_admit), "%.500s", out);
		msg_admit[strcspn(msg_admit, "\n")] = '\0';
		if (rc != 1 || !clear_error(out, "admit", "eg_grants")) {
			r->failed = true;
			fprintf(stderr, "soak: capacity: admit into a full eg_grants: exit %d: %s",
				rc, out);
		}
	}
	/* The holder's grant is renewed in place even now. */
	if (holder_admit(&who, &aa, sb, token, err, sizeof(err))) {
		r->failed = true;
		fprintf(stderr, "soak: capacity: re-admit of a granted process at capacity: %s\n",
			err);
	}
	check_all(r, p, 20, "after the refused admit");

	close(gfd);
	for (int k = 0; k < NPROBERS; k++) {
		close(p[k].to);
		close(p[k].from);
		soak_reap(p[k].pid);
	}
	r->seconds = (double)(soak_now_ns() - t0) / 1e9;
	snprintf(r->note, sizeof(r->note),
		 "eg_records %u/%u (%u installed here), eg_grants %u/%u (%u written in %.2f s); "
		 "new sandbox: \"%s\"; new grant: \"%s\"",
		 fill_of("eg_records"), EG_MAX_SANDBOXES, filler + 1, fill_of("eg_grants"),
		 EG_MAX_GRANTS, written, (double)fill_ns / 1e9, msg_install, msg_admit);
	return 0;
}
