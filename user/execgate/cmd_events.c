// SPDX-License-Identifier: Apache-2.0
/* execgate events: the denial ring buffer, followed until SIGINT/SIGTERM,
 * --count N events, or (--drain) what is pending now. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include "execgate/text.h"
#include "execgate/commands.h"
#include "execgate/daemon_ask.h"
#include "lib/json.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct follow {
	bool json;
	long remaining;	       /* < 0: unlimited */
	const char *worker_id; /* NULL: not recorded (node.worker) */
};

static void print_denial(struct follow *f, const struct eg_denial *d)
{
	char u[EG_UUID_TEXT_LEN], t[64], addr[EG_INET_TEXT_MAX];

	if (f->json) {
		if (eg_json_print(stdout, eg_json_event(d, f->worker_id)))
			eg_cli_err("event: out of memory");
	} else {
		eg_uuid_to_text(d->sandbox, u);
		eg_json_rfc3339(d->realtime_ns, t);
		/* comm and path are the caller's bytes: escaped, so that an
		 * event is always exactly one line. */
		printf("%s pid %u (", t, d->pid);
		eg_cli_print_escaped(stdout, d->comm, sizeof(d->comm));
		printf(") %s: %s%s sandbox %s epoch %llu ", eg_hook_name(d->hook),
		       d->audit ? "audit would-" : "", eg_kreason_name(d->reason), u,
		       (unsigned long long)d->epoch);
		if (d->dest == EG_DENIAL_DEST_UNIX) {
			printf("path ");
			eg_cli_print_escaped(stdout, d->path, sizeof(d->path));
			printf("\n");
		} else if (d->dest == EG_DENIAL_DEST_INET) {
			printf("inet %s port %u/%s\n",
			       eg_inet_format(d->inet.family, d->inet.addr, addr), d->inet_port,
			       eg_proto_name(d->inet_proto));
		} else {
			printf("vsock %u:%u\n", d->vsock.cid, d->vsock.port);
		}
	}
	fflush(stdout);
	if (f->remaining > 0)
		f->remaining--;
}

static const struct eg_opt events_opts[] = {
    EG_OPT("json", NULL, "one JSON object per line (schema_version 2)"),
    EG_OPT("count", "N", "exit 0 after exactly N events"),
    EG_OPT("drain", NULL, "print the events pending now, then exit 0 (with --count: at most N)"),
    EG_CLI_SOCKET_OPT("when it serves this pin dir and reads its ring, events refuses (exit 12)"),
    EG_OPT("force", NULL,
	   "read the ring even though execgated reads it (each event then reaches only one of "
	   "the two)"),
    EG_OPT_END,
};

static int run_events(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	struct follow f = {.json = false, .remaining = -1};
	struct eg_denial d;
	char worker_id[EG_UUID_TEXT_LEN];
	struct eg_cli_parse p;
	struct eg_worker *w;
	struct sigaction sa;
	const char *name, *val, *sock = EG_DAEMON_DEFAULT_SOCKET;
	bool drain = false, force = false, loaded;
	char said[512];
	uint64_t count;
	int c, n, rc;

	eg_cli_parse_init(&p, cmd, argc, argv);
	while ((c = eg_cli_next(&p, &name, &val)) == 1) {
		if (!strcmp(name, "drain")) {
			drain = true;
		} else if (!strcmp(name, "force")) {
			force = true;
		} else if (!strcmp(name, "socket")) {
			sock = val;
		} else if (eg_cli_parse_u64(val, 1000000000, &count) || !count) {
			return eg_cli_usage(&p, "--count %s: not a positive number", val);
		} else {
			f.remaining = (long)count;
		}
	}
	if (c < 0)
		return p.exit;
	f.json = p.json;
	if (p.npos)
		return eg_cli_usage(&p, "%s: unexpected argument", p.pos[0]);
	rc = eg_cli_pins_denied(p.pin_dir, sock);
	if (rc >= 0)
		return rc;
	/* The ring has one read position: beside the daemon that reads it,
	 * each event would reach one of the two readers, and the daemon's
	 * streams and audit report would miss what this took. */
	if (!force && eg_cli_daemon_serves(sock, p.pin_dir, &loaded, said, sizeof(said))) {
		eg_cli_err("execgated at %s reads the events of %s: a second reader would take "
			   "events from it; read its stream (curl --unix-socket %s "
			   "http://localhost/v1/events), or --force",
			   sock, p.pin_dir, sock);
		return EG_EXIT_DAEMON_READS;
	}
	if (eg_cli_worker_open(&p, &w))
		return EG_EXIT_ERROR;
	if (!eg_node_worker_id_text(p.state_dir, worker_id))
		f.worker_id = worker_id;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: the wait returns -EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* Line-buffered so a follower piped into another tool sees events at once. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* One denial at a time: with --count the N+1th stays in the ring. */
	rc = EG_EXIT_OK;
	while (!stop && f.remaining != 0) {
		n = eg_worker_events_next(w, &d, drain ? 0 : 200);
		if (n == 1) {
			print_denial(&f, &d);
		} else if (!n) {
			if (drain)
				break;
		} else if (n != -EINTR) {
			eg_cli_err("ring buffer eg_events: %s", strerror(-n));
			rc = EG_EXIT_ERROR;
			break;
		}
	}
	eg_worker_close(w);
	return rc;
}

const struct eg_cli_cmd eg_cmd_events = {
    .name = "events",
    .args = "[--json] [--count N] [--drain] [--socket PATH] [--force]",
    .about = "Prints the kernel's denial events (pid, hook, reason, sandbox, epoch, path or\n"
	     "VSOCK address) with their wall-clock time (RFC 3339, UTC, nanoseconds), until\n"
	     "SIGINT/SIGTERM. The ring buffer has one read position: where execgated serves\n"
	     "this pin dir (at --socket) it is the reader, and events refuses (exit 12)\n"
	     "unless --force; read its GET /v1/events instead.",
    .opts = events_opts,
    .dirs = true,
    .run = run_events,
};
