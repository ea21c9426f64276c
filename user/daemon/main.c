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
#include <getopt.h>
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
#include <unistd.h>
#include <systemd/sd-daemon.h>
#include "daemon/daemon.h"
#include "daemon/events.h"
#include "daemon/http.h"
#include "daemon/log.h"
#include "loader/attach_root.h"
#include "loader/proc_id.h"
#include "loader/serving.h"
#include "loader/tier.h"

/* Exit codes, as the execgate CLI's. */
#define EXIT_ERROR	 1
#define EXIT_USAGE	 2
#define EXIT_UNSUPPORTED 5

static void usage(FILE *f)
{
	fprintf(f, "usage: execgated [--config FILE] [--check-config]\n"
		   "\n"
		   "The execgate worker service: loads (or adopts) the enforcement programs, then\n"
		   "serves the HTTP/JSON API (docs/api.md) on a Unix socket.\n"
		   "\n"
		   "  -c, --config FILE  key=value configuration (default: $EXECGATE_CONFIG, else\n"
		   "                     " EGD_DEFAULT_CONFIG ")\n"
		   "      --check-config parse the config, print the settings it resolves to and\n"
		   "                     exit (nothing is loaded)\n"
		   "  -h, --help         this text\n"
		   "  -V, --version      print the version\n"
		   "\n"
		   "Signals: SIGHUP reloads the key set and probes again what this process may\n"
		   "do (setns, sock_diag, pidfd_getfd: GET /v1/status); SIGTERM/SIGINT stop the\n"
		   "service (the programs stay attached).\n");
}

static void print_config(const struct egd_config *c)
{
	printf("config = %s\nworker_id = %s\npin_dir = %s\nstate_dir = %s\ncgroup = %s\n"
	       "require = %s\nsocket = %s\n",
	       c->file, c->worker_id_text, c->pin_dir, c->state_dir,
	       c->cgroup[0] ? c->cgroup : "(cgroup v2 root)", c->require[0] ? c->require : "(none)",
	       c->socket);
	if (c->has_admin_gid)
		printf("admin_group = %u\n", (unsigned)c->admin_gid);
	else
		printf("admin_group = (none: root only)\n");
	if (c->has_admit_gid)
		printf("admit_group = %u\n", (unsigned)c->admit_gid);
	else
		printf("admit_group = (none)\n");
	printf("threads = %u\nmax_connections = %u\nconnection_timeout = %u\n", c->threads,
	       c->max_connections, c->connection_timeout);
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
	struct eg_probe_record *probed = malloc(sizeof(*probed));
	struct eg_attach_check a = {.point = EG_ATTACH_NONE};

	if (probed) {
		eg_probe_record_read(c->state_dir, probed);
		eg_tier_report_attach(NULL, c->pin_dir, probed, false, false, &a);
	}
	free(probed);
	if (a.point == EG_ATTACH_NOT_ROOT)
		egd_log(EGD_LOG_WARNING,
			"%s: %s is attached at cgroup %s, not the cgroup root %s: sockets created "
			"outside it are not checked (set cgroup = %s in production)",
			EG_WARN_CGROUP_NOT_ROOT, a.hook, a.cgroup, a.root, a.root);
}

static void reload_keys(struct egd *d, const char *why)
{
	char err[EG_ERR_MAX] = "";
	int rc = eg_worker_keys_reload(d->worker, err, sizeof(err));

	if (rc) {
		__atomic_fetch_add(&d->metrics.key_reload_errors, 1, __ATOMIC_RELAXED);
		egd_log(EGD_LOG_ERR, "keys: reload (%s) failed, the previous set stays: %s", why,
			err);
		return;
	}
	__atomic_fetch_add(&d->metrics.key_reloads, 1, __ATOMIC_RELAXED);
	egd_log(EGD_LOG_INFO, "keys: reloaded (%s), token cache flushed", why);
}

/* What this process may do itself (loader/serving.h), probed again: a
 * reload after the unit's restrictions changed shows in status without a
 * restart. Every refused step goes in the log once. */
static void log_serving(const struct egd_config *c)
{
	static struct eg_probe_record r;

	eg_probe_record_read(c->state_dir, &r);
	if (!r.present || !r.serving_probed)
		return;
	for (int i = 0; i < EG_STEP__COUNT; i++)
		if (!r.step_ok[i])
			egd_log(EGD_LOG_WARNING, "serving process: %s refused: %s",
				eg_serving_step_names[i], r.step_why[i]);
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

static int watch_keys(const char *keys_dir)
{
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	if (fd < 0)
		return -1;
	if (inotify_add_watch(fd, keys_dir,
			      IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE |
				  IN_ATTRIB) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void drain(int fd)
{
	char buf[4096];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

/* Signals and key-directory changes, until SIGTERM/SIGINT. */
static void serve(struct egd *d, int sfd, int ifd)
{
	struct pollfd pfd[2] = {{.fd = sfd, .events = POLLIN}, {.fd = ifd, .events = POLLIN}};

	for (;;) {
		struct signalfd_siginfo si;

		if (poll(pfd, ifd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			egd_log(EGD_LOG_ERR, "poll: %s", strerror(errno));
			return;
		}
		if (pfd[0].revents & POLLIN) {
			if (read(sfd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo == SIGHUP) {
				reload_keys(d, "SIGHUP");
				reprobe_serving(d);
				continue;
			}
			egd_log(EGD_LOG_INFO, "stopping on signal %u", si.ssi_signo);
			return;
		}
		if (ifd >= 0 && (pfd[1].revents & POLLIN)) {
			/* A key tool writes several files in a row: settle
			 * first, then reload once. */
			usleep(50000);
			drain(ifd);
			reload_keys(d, "key directory changed");
		}
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"check-config", no_argument, NULL, 'C'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	struct eg_worker_config wcfg = {0};
	struct eg_tier_ctx tctx = {0};
	const char *config = getenv("EXECGATE_CONFIG");
	char err[EG_ERR_MAX], keys_dir[EGD_PATH_MAX + 8];
	static struct egd d = {.listen_fd = -1};
	int c, rc, sfd = -1, ifd = -1, exit_code = EXIT_ERROR;
	bool config_given = false, check_only = false;
	sigset_t mask;

	while ((c = getopt_long(argc, argv, "c:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (config_given) {
				fprintf(stderr, "execgated: --config given twice\n");
				return EXIT_USAGE;
			}
			config_given = true;
			config = optarg;
			break;
		case 'C':
			check_only = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("execgated %s\n", eg_version());
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!config || !*config)
		config = EGD_DEFAULT_CONFIG;
	if (egd_config_load(config, &d.cfg, err, sizeof(err))) {
		fprintf(stderr, "execgated: %s\n", err);
		return EXIT_USAGE;
	}
	if (check_only) {
		print_config(&d.cfg);
		return 0;
	}
	raise_nofile();
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
	rc = eg_proc_check_namespaces(err, sizeof(err));
	if (rc) {
		egd_log(EGD_LOG_ERR, "%s", err);
		goto out;
	}
	tctx.pin_dir = d.cfg.pin_dir;
	tctx.cgroup_path = d.cfg.cgroup[0] ? d.cfg.cgroup : NULL;
	/* where status finds what this load probed: without it, GET /v1/status
	 * would say "not probed" */
	tctx.state_dir = d.cfg.state_dir;
	rc = eg_tiers_load(&tctx, d.cfg.require[0] ? d.cfg.require : NULL, err, sizeof(err));
	if (rc) {
		egd_log(EGD_LOG_ERR, "load: %s", err);
		exit_code = rc == -EOPNOTSUPP ? EXIT_UNSUPPORTED : EXIT_ERROR;
		goto out;
	}
	warn_attach_point(&d.cfg);
	log_serving(&d.cfg);
	snprintf(keys_dir, sizeof(keys_dir), "%s/keys", d.cfg.state_dir);
	mkdirs(keys_dir, 0755);
	/* The node key signs refresh-route and deny verdicts, so that only an
	 * authenticated refresh signal moves a caller's route (DESIGN §4). */
	{
		char pub[EGD_PATH_MAX + 16];
		bool created = false;

		rc = eg_node_key_init(d.cfg.state_dir, d.cfg.worker_id_text, pub, sizeof(pub),
				      &created, err, sizeof(err));
		if (rc) {
			egd_log(EGD_LOG_ERR, "node key: %s", err);
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
	ifd = watch_keys(keys_dir);
	if (ifd < 0)
		egd_log(EGD_LOG_WARNING, "keys: cannot watch %s (%s): reload with SIGHUP", keys_dir,
			strerror(errno));

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
	if (egd_events_start(&d, err, sizeof(err)) || egd_http_start(&d, err, sizeof(err))) {
		egd_log(EGD_LOG_ERR, "%s", err);
		goto stop;
	}
	egd_log(EGD_LOG_INFO, "ready: worker %s, pins %s, socket %s, %u threads",
		d.cfg.worker_id_text, d.cfg.pin_dir, d.cfg.socket, d.cfg.threads);
	sd_notify(0, "READY=1");
	serve(&d, sfd, ifd);
	exit_code = 0;
	sd_notify(0, "STOPPING=1");
stop:
	egd_events_stop(&d);
	egd_http_stop(&d);
	egd_events_free(&d);
	unlink(d.cfg.socket);
out:
	if (d.listen_fd >= 0)
		close(d.listen_fd);
	if (ifd >= 0)
		close(ifd);
	if (sfd >= 0)
		close(sfd);
	if (d.worker)
		eg_worker_close(d.worker);
	return exit_code;
}
