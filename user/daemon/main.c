// SPDX-License-Identifier: Apache-2.0
/* execgated: the worker service. Top to bottom: options, config, load (or
 * adopt) the BPF programs as `execgate load` does, open the worker handle,
 * bind the API socket, serve (MHD pool + events consumer), and wait for
 * signals and key-directory changes on this thread.
 *
 * Crash safety lives in the pins, not here: programs and maps are pinned,
 * so a kill -9 leaves enforcement as it was and the next start adopts it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>
#include <execgate/admin.h>
#include "frontend/opts.h"
#include "daemon/daemon.h"
#include "daemon/events.h"
#include "daemon/http.h"
#include "daemon/keys_follow.h"
#include "daemon/log.h"
#include "fleet/etcd.h"
#include "fleetd/worker.h"

/* Exit codes, as the execgate CLI's. A configuration error is 2, which
 * the unit's RestartPreventExitStatus= keeps systemd from retrying: no
 * restart fixes it. */
#define EXIT_ERROR	 1
#define EXIT_USAGE	 2
#define EXIT_UNSUPPORTED 5

static const struct eg_opt opts[] = {
    EG_OPT_SHORT('c', "config", "FILE",
		 "key=value configuration (default: $EXECGATE_CONFIG, else " EGD_DEFAULT_CONFIG
		 ")"),
    EG_OPT("check-config", NULL,
	   "parse the config, print the settings it resolves to and exit (nothing is loaded)"),
    EG_OPT("help-config", NULL, "print every configuration key, its values and default, and exit"),
    EG_OPT_END,
};

/* -v/--verbose: the library's debug messages, libbpf's included. */
static void verbose(void)
{
	eg_log_set_level(EG_LOG_DEBUG);
}

static void library_log(enum eg_log_level level, const char *msg, void *ctx)
{
	egd_log_library((int)level, msg, ctx);
}

static void usage(const struct eg_opts *p, FILE *f)
{
	(void)p;
	fprintf(f, "usage: execgated [--config FILE] [--check-config] [--verbose]\n"
		   "\n"
		   "The execgate worker service: loads (or adopts) the enforcement programs, then\n"
		   "serves the HTTP/JSON API (docs/api.md) on a Unix socket.\n"
		   "\n");
	eg_opts_help_rows(f, opts);
	eg_opts_help_std(f);
	fprintf(f, "\n"
		   "Signals: SIGHUP reloads the key set and probes again what this process may\n"
		   "do (setns, sock_diag, pidfd_getfd: GET /v1/status); SIGTERM/SIGINT stop the\n"
		   "service (the programs stay attached).\n"
		   "\n"
		   "exit codes: 0 stopped cleanly, 1 start-up failed, 2 usage or configuration\n"
		   "(worker_id not the one the state dir's node key belongs to too), 5 the\n"
		   "required tier is not offered\n");
}

static void mkdirs(const char *path, mode_t mode)
{
	char buf[EGD_PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(buf, mode);
			*p = '/';
		}
	mkdir(buf, mode);
}

/* A stale socket file from a crashed run is replaced; a live one (another
 * execgated answers on it) is not. */
static int bind_socket(const char *path, char *err, size_t err_size)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	char dir[EGD_SOCKET_MAX];
	char *slash;
	int fd, rc;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		mkdirs(dir, 0755);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
		close(fd);
		snprintf(err, err_size, "socket %s: another execgated answers on it", path);
		return -EADDRINUSE;
	}
	close(fd);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) || listen(fd, 1024)) {
		rc = -errno;
		close(fd);
		snprintf(err, err_size, "socket %s: %s", path, strerror(-rc));
		return rc;
	}
	/* Anyone may connect; authorization is by SO_PEERCRED per request,
	 * so a caller without a role gets a 403 that says so. */
	chmod(path, 0666);
	return fd;
}

static void raise_nofile(void)
{
	struct rlimit rl;

	/* 1000 concurrent clients need more than the usual soft 1024. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* status's cgroup-not-root warning, once in the log at start-up: a
 * scratch cgroup in production leaves sockets made outside it unchecked
 * (docs/operators.md §8). The report itself goes nowhere. */
static void warn_attach_point(const struct egd_config *c)
{
	struct eg_attach_info a;

	eg_attach_read(c->pin_dir, c->state_dir, &a);
	if (a.where == EG_ATTACHED_BELOW_ROOT)
		egd_log(EGD_LOG_WARNING,
			"%s: %s is attached at cgroup %s, not the cgroup root %s: sockets created "
			"outside it are not checked (set cgroup = %s in production)",
			EG_WARN_CGROUP_NOT_ROOT, a.hook, a.cgroup, a.root, a.root);
}

/* The config's mode wins at every start (docs/operators.md §12): a mode
 * switched at run time over the API or with `execgate mode` is runtime
 * state, and a restart never leaves a node in audit because someone once
 * switched it; the reset is logged loudly. Set only when it differs, so
 * that a start does not count as a switch. A sandbox's own mode is part of
 * its record, which a restart keeps: those still in audit are named in a
 * warning too. */
static int apply_mode(const struct egd_config *c, char *err, size_t err_size)
{
	char now[8] = "", who[64];
	unsigned audit = 0;
	int rc;

	rc = eg_mode_get(c->pin_dir, now, NULL, NULL, NULL, err, err_size);
	if (rc)
		return rc;
	if (strcmp(now, c->mode)) {
		snprintf(who, sizeof(who), "execgated pid %d (config mode)", (int)getpid());
		rc = eg_mode_set(c->pin_dir, c->state_dir, NULL, c->mode, who, NULL, err, err_size);
		if (rc)
			return rc;
		egd_log(EGD_LOG_WARNING,
			"mode: global %s -> %s at start: the config's mode = %s wins; a mode "
			"switched at run time (PUT /v1/mode, execgate mode) lasts until the next "
			"start",
			now, c->mode, c->mode);
	} else {
		egd_log(EGD_LOG_INFO, "mode: global %s (config)", c->mode);
	}
	if (!strcmp(c->mode, "enforce") &&
	    !eg_mode_get(c->pin_dir, now, NULL, NULL, &audit, err, err_size) && audit)
		egd_log(EGD_LOG_WARNING,
			"mode: %u sandbox(es) keep their own audit mode (their records'): execgate "
			"mode enforce --sandbox UUID, or inherit, enforces them",
			audit);
	return 0;
}

static void log_refusal(const char *step, const char *why, void *ctx)
{
	(void)ctx;
	egd_log(EGD_LOG_WARNING, "serving process: %s refused: %s", step, why);
}

/* What this process may do itself (execgate/admin.h, eg_serving_reprobe),
 * probed again: a reload after the unit's restrictions changed shows in
 * status without a restart. Every refused step goes in the log once. */
static void log_serving(const struct egd_config *c)
{
	eg_serving_refusals(c->state_dir, log_refusal, NULL);
}

static void reprobe_serving(struct egd *d)
{
	char err[EG_ERR_MAX], who[64];
	int rc;

	snprintf(who, sizeof(who), "execgated pid %d", (int)getpid());
	rc = eg_serving_reprobe(d->cfg.state_dir, who, err, sizeof(err));
	if (rc) {
		egd_log(EGD_LOG_ERR, "serving process: re-probe failed: %s", err);
		return;
	}
	log_serving(&d->cfg);
}

/* The fleet's lines, in the daemon's log (escaped whole by egd_log). */
static void fleet_log(int prio, const char *line, void *ctx)
{
	(void)ctx;
	egd_log(prio, "%s", line);
}

static void fleet_streams(const struct eg_stream_cuts *s, void *ctx)
{
	struct egd *d = ctx;

	egd_metrics_streams(&d->metrics, s);
}

static void cut_finished(const struct eg_cut_finished *c, void *ctx)
{
	struct egd *d = ctx;
	char u[EG_UUID_TEXT_LEN];

	eg_uuid_to_text(c->sandbox, u);
	egd_metrics_streams(&d->metrics, &c->streams);
	if (c->streams.error)
		egd_log(
		    EGD_LOG_ERR,
		    "sandbox %s: stream revocation: the cut of epoch %llu an interrupted writer "
		    "left failed again: %s (still pending)",
		    u, (unsigned long long)c->epoch, c->streams.error_text);
	else
		egd_log(EGD_LOG_NOTICE,
			"sandbox %s: finished the stream cut of epoch %llu%s an interrupted writer "
			"left: streams_cut=%u streams_unreachable=%u streams_would_cut=%u",
			u, (unsigned long long)c->epoch, c->retired ? " (retired)" : "",
			c->streams.unix_cut + c->streams.tcp_cut,
			c->streams.unix_unreachable + c->streams.tcp_unreachable,
			c->streams.would_cut);
}

/* A writer killed between an epoch move and its cut (this daemon before a
 * restart, or an `execgate install/retire` process) leaves the intent in
 * the record (user/loader/revokers/cut_intent.h): finish those cuts. */
static void finish_cuts(struct egd *d)
{
	char err[EG_ERR_MAX] = "";

	if (eg_worker_finish_cuts(d->worker, NULL, cut_finished, d, err, sizeof(err)) < 0)
		egd_log(EGD_LOG_ERR, "%s", err);
}

/* How often serve() looks for a cut a killed CLI writer left while the
 * daemon runs; a retried install/retire/forget of that sandbox, or any CLI
 * call, finishes it sooner. */
#define FINISH_CUTS_EVERY_MS 5000

/* How often the key directory's set is compared with memory's: the
 * backstop for a change no watch reported (keys_follow.c). */
#define KEY_CHECK_MS 2000

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Signals and key-directory changes, until SIGTERM/SIGINT; the cuts a
 * killed writer left and the key check on their own clocks. */
static void serve(struct egd *d, int sfd, struct egd_key_watch *kw)
{
	struct pollfd pfd[2] = {{.fd = sfd, .events = POLLIN}, {.fd = kw->fd, .events = POLLIN}};
	long long next_cuts = mono_ms() + FINISH_CUTS_EVERY_MS,
		  next_keys = mono_ms() + KEY_CHECK_MS;

	for (;;) {
		struct signalfd_siginfo si;
		long long now = mono_ms(), due = next_cuts < next_keys ? next_cuts : next_keys;
		int n = poll(pfd, kw->fd >= 0 ? 2 : 1, due > now ? (int)(due - now) : 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			egd_log(EGD_LOG_ERR, "poll: %s", strerror(errno));
			return;
		}
		if (n == 0) {
			/* nothing pending: a difference the check finds now is
			 * one no event is on its way for */
			now = mono_ms();
			if (now >= next_cuts) {
				finish_cuts(d);
				next_cuts = now + FINISH_CUTS_EVERY_MS;
			}
			if (now >= next_keys) {
				egd_keys_check(d, kw);
				next_keys = mono_ms() + KEY_CHECK_MS;
			}
			continue;
		}
		if (pfd[0].revents & POLLIN) {
			if (read(sfd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo == SIGHUP) {
				egd_keys_reload(d, "SIGHUP", true);
				reprobe_serving(d);
				continue;
			}
			egd_log(EGD_LOG_INFO, "stopping on signal %u", si.ssi_signo);
			return;
		}
		if (kw->fd >= 0 && (pfd[1].revents & POLLIN)) {
			int what;

			/* A key tool writes several files in a row: settle
			 * first, then reload once. */
			usleep(50000);
			what = egd_key_watch_read(kw);
			if (what & EGD_KW_REARM)
				egd_key_watch_arm(kw);
			if (what & EGD_KW_RELOAD)
				egd_keys_reload(d,
						what & EGD_KW_REARM ? "key directory replaced"
								    : "key directory changed",
						false);
			next_keys = mono_ms() + KEY_CHECK_MS;
		}
	}
}

int main(int argc, char **argv)
{
	struct eg_worker_config wcfg = {0};
	const char *config = getenv("EXECGATE_CONFIG");
	char err[EG_ERR_MAX], keys_dir[EGD_PATH_MAX + 8];
	static struct egd d = {.listen_fd = -1};
	struct egd_key_watch kw = {.fd = -1, .dir_wd = -1};
	int rc, sfd = -1, exit_code = EXIT_ERROR;
	bool check_only = false;
	const struct eg_opt *o;
	struct eg_opts p;
	const char *val;
	sigset_t mask;

	/* The library's messages (libbpf's too) become journal lines of ours. */
	eg_log_set_sink(library_log, NULL);
	eg_opts_verbose(verbose);
	eg_opts_init(&p, "execgated", NULL, argc, argv);
	p.tables[0] = opts;
	p.help = usage;
	while ((rc = eg_opts_next(&p, &o, &val)) == 1) {
		if (!strcmp(o->name, "config"))
			config = val;
		else if (!strcmp(o->name, "check-config"))
			check_only = true;
		else if (!strcmp(o->name, "help-config")) {
			egd_config_help(stdout);
			return 0;
		}
	}
	if (rc < 0)
		return p.exit;
	if (!config || !*config)
		config = EGD_DEFAULT_CONFIG;
	if (egd_config_load(config, &d.cfg, err, sizeof(err))) {
		fprintf(stderr, "execgated: %s\n", err);
		return EXIT_USAGE;
	}
	if (check_only) {
		egd_config_print(&d.cfg, stdout);
		return 0;
	}
	raise_nofile();
	/* The unit's UMask=: a hand-run daemon makes the state dir and its
	 * files with the modes systemd's start gives them (0755 directories,
	 * user/loader/records/state_dir.h). */
	umask(0022);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	/* Blocked before any thread starts, so every thread inherits it and
	 * only the signalfd sees these. */
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) {
		egd_log(EGD_LOG_ERR, "signalfd: %s", strerror(errno));
		goto out;
	}

	/* Load, or adopt what is pinned: exactly `execgate load`. */
	rc = eg_namespaces_check(err, sizeof(err));
	if (rc) {
		egd_log(EGD_LOG_ERR, "%s", err);
		goto out;
	}
	/* the state dir: where status finds what this load probed; without
	 * it, GET /v1/status would say "not probed" */
	rc = eg_load_sized(d.cfg.pin_dir, d.cfg.state_dir, d.cfg.cgroup[0] ? d.cfg.cgroup : NULL,
			   d.cfg.require[0] ? d.cfg.require : NULL, d.cfg.inet_tags, err,
			   sizeof(err));
	if (rc) {
		egd_log(EGD_LOG_ERR, "load: %s", err);
		/* -EINVAL: the config's mistake (a pin_dir off bpffs), which
		 * a restart would only repeat. */
		exit_code = rc == -EOPNOTSUPP ? EXIT_UNSUPPORTED
			    : rc == -EINVAL   ? EXIT_USAGE
					      : EXIT_ERROR;
		goto out;
	}
	rc = apply_mode(&d.cfg, err, sizeof(err));
	if (rc) {
		egd_log(EGD_LOG_ERR, "mode: cannot set the config's mode %s: %s", d.cfg.mode, err);
		goto out;
	}
	warn_attach_point(&d.cfg);
	log_serving(&d.cfg);
	snprintf(keys_dir, sizeof(keys_dir), "%s/keys", d.cfg.state_dir);
	mkdirs(keys_dir, 0755);
	/* The node key signs refresh-route and deny verdicts, so that only an
	 * authenticated refresh signal moves a caller's route (docs/design.md §5). */
	{
		char pub[EGD_PATH_MAX + 16];
		bool created = false;

		rc = eg_node_key_init(d.cfg.state_dir, d.cfg.worker_id_text, pub, sizeof(pub),
				      &created, err, sizeof(err));
		if (rc) {
			egd_log(EGD_LOG_ERR, "node key: %s", err);
			/* worker_id is not the node key's: the config (or the
			 * state dir) must change, a retry never helps */
			if (rc == -EEXIST)
				exit_code = EXIT_USAGE;
			goto out;
		}
		if (created)
			egd_log(EGD_LOG_NOTICE, "node key: created, public key in %s", pub);
	}
	wcfg.pin_dir = d.cfg.pin_dir;
	wcfg.state_dir = d.cfg.state_dir;
	wcfg.worker_id = d.cfg.worker_id_text;
	rc = eg_worker_open(&wcfg, &d.worker, err, sizeof(err));
	if (rc) {
		egd_log(EGD_LOG_ERR, "%s", err);
		goto out;
	}
	finish_cuts(&d); /* before the socket: the first answers see them done */
	/* The marker tells every writer of this state dir, `execgate install`
	 * too, whether the install rule needs a selection (docs/fleet.md,
	 * "The install rule"); a start without the fleet removes it. */
	rc = eg_worker_fleet_set(d.worker, d.cfg.etcd_endpoints[0] != '\0', err, sizeof(err));
	if (rc) {
		egd_log(EGD_LOG_ERR, "fleet: %s", err);
		goto out;
	}
	/* The fleet's state before the socket: the first PUT is checked
	 * against the selections stored before a restart. */
	if (d.cfg.etcd_endpoints[0]) {
		/* the fleet's threads keep a pointer to it */
		static struct eg_etcd_auth auth;
		struct eg_fleet_worker_config fc = {
		    .worker = d.worker,
		    .state_dir = d.cfg.state_dir,
		    .worker_id = d.cfg.worker_id,
		    .endpoints = d.cfg.etcd_endpoints,
		    .etcd_auth = &auth,
		    .prefix = d.cfg.etcd_prefix,
		    .root_keys = d.cfg.root_keys,
		    .reconcile_interval = d.cfg.etcd_reconcile_interval,
		    .keyset_min_version = d.cfg.keyset_min_version,
		    .log = fleet_log,
		    .streams = fleet_streams,
		    .ctx = &d,
		};

		auth.cacert = d.cfg.etcd_cacert[0] ? d.cfg.etcd_cacert : NULL;
		auth.cert = d.cfg.etcd_cert[0] ? d.cfg.etcd_cert : NULL;
		auth.key = d.cfg.etcd_key[0] ? d.cfg.etcd_key : NULL;
		auth.user = d.cfg.etcd_user[0] ? d.cfg.etcd_user : NULL;
		auth.password_file = d.cfg.etcd_password_file[0] ? d.cfg.etcd_password_file : NULL;
		/* an unreadable certificate or password file stops the start,
		 * not just the fleet's threads later */
		rc = eg_etcd_auth_check(&auth, err, sizeof(err));
		if (!rc)
			rc = eg_fleet_worker_open(&fc, &d.fleet, err, sizeof(err));
		if (rc) {
			egd_log(EGD_LOG_ERR, "fleet: %s", err);
			goto out;
		}
	}
	if (egd_key_watch_open(&kw, d.cfg.state_dir, keys_dir) < 0)
		egd_log(EGD_LOG_WARNING,
			"keys: cannot watch %s (%s): following it by the periodic check only",
			d.cfg.state_dir, strerror(errno));

	err[0] = '\0';
	d.listen_fd = bind_socket(d.cfg.socket, err, sizeof(err));
	if (d.listen_fd < 0) {
		if (!err[0])
			snprintf(err, sizeof(err), "socket %s: %s", d.cfg.socket,
				 strerror(-d.listen_fd));
		egd_log(EGD_LOG_ERR, "%s", err);
		d.listen_fd = -1;
		goto out;
	}
	d.audit = eg_audit_new(0);
	if (!d.audit) {
		egd_log(EGD_LOG_ERR, "audit report: out of memory");
		goto stop;
	}
	if (egd_events_start(&d, err, sizeof(err)) || egd_http_start(&d, err, sizeof(err)) ||
	    (d.fleet && eg_fleet_worker_start(d.fleet, err, sizeof(err)))) {
		egd_log(EGD_LOG_ERR, "%s", err);
		goto stop;
	}
	egd_log(EGD_LOG_INFO, "ready: worker %s, pins %s, socket %s, %u threads%s%s",
		d.cfg.worker_id_text, d.cfg.pin_dir, d.cfg.socket, d.cfg.threads,
		d.fleet ? ", fleet via etcd " : "", d.fleet ? d.cfg.etcd_endpoints : "");
	sd_notify(0, "READY=1");
	serve(&d, sfd, &kw);
	exit_code = 0;
	sd_notify(0, "STOPPING=1");
stop:
	if (d.fleet)
		eg_fleet_worker_stop(d.fleet);
	egd_events_stop(&d);
	egd_http_stop(&d);
	egd_events_free(&d);
	eg_audit_free(d.audit);
	unlink(d.cfg.socket);
out:
	if (d.listen_fd >= 0)
		close(d.listen_fd);
	if (kw.fd >= 0)
		close(kw.fd);
	if (sfd >= 0)
		close(sfd);
	eg_fleet_worker_close(d.fleet);
	if (d.worker)
		eg_worker_close(d.worker);
	return exit_code;
}
