// SPDX-License-Identifier: Apache-2.0
/* execgate events: follows the denial ring buffer until SIGINT/SIGTERM. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/ids.h"
#include "execgate/cli.h"
#include "execgate/commands.h"
#include "loader/kreason.h"
#include "loader/maps.h"
#include "loader/pins.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct follow {
	bool json;
	long remaining; /* < 0: unlimited */
};

static int on_event(void *ctx, void *data, size_t size)
{
	struct follow *f = ctx;
	const struct eg_event *ev = data;
	char u[EG_UUID_TEXT_LEN];

	if (size < sizeof(*ev))
		return 0;
	eg_uuid_format(ev->sandbox, u);
	if (f->json) {
		printf("{\"ts_ns\":%llu,\"pid\":%u,\"tid\":%u,\"comm\":",
		       (unsigned long long)ev->ts_ns, ev->pid, ev->tid);
		eg_json_strn(stdout, ev->comm, sizeof(ev->comm));
		printf(",\"hook\":\"%s\",\"reason\":\"%s\",\"reason_code\":%u,\"sandbox\":\"%s\","
		       "\"epoch\":%llu,\"path\":",
		       eg_hook_name(ev->hook), eg_kreason_name(ev->reason), ev->reason, u,
		       (unsigned long long)ev->epoch);
		eg_json_strn(stdout, ev->path, sizeof(ev->path));
		printf(",\"vsock\":{\"cid\":%u,\"port\":%u}}\n", ev->vsock.cid, ev->vsock.port);
	} else {
		printf("%llu.%09llu pid %u (%.*s) %s: %s sandbox %s epoch %llu ",
		       (unsigned long long)(ev->ts_ns / 1000000000ULL),
		       (unsigned long long)(ev->ts_ns % 1000000000ULL), ev->pid,
		       (int)strnlen(ev->comm, sizeof(ev->comm)), ev->comm, eg_hook_name(ev->hook),
		       eg_kreason_name(ev->reason), u, (unsigned long long)ev->epoch);
		if (ev->path[0])
			printf("path %.*s\n", (int)strnlen(ev->path, sizeof(ev->path)), ev->path);
		else
			printf("vsock %u:%u\n", ev->vsock.cid, ev->vsock.port);
	}
	fflush(stdout);
	if (f->remaining > 0 && --f->remaining == 0)
		stop = 1;
	return 0;
}

int cmd_events(int argc, char **argv)
{
	static const struct option opts[] = {
	    EG_CLI_DIRS_LONG_OPTS,
	    {"json", no_argument, NULL, 0},
	    {"count", required_argument, NULL, 0},
	    {NULL, 0, NULL, 0},
	};
	struct follow f = {.json = false, .remaining = -1};
	struct sigaction sa;
	struct eg_cli_dirs dirs;
	struct ring_buffer *rb = NULL;
	char path[EG_PIN_PATH_MAX];
	uint64_t count;
	const char *name;
	int c, fd, rc = EG_EXIT_OK;

	eg_cli_dirs_init(&dirs);
	optind = 1;
	while ((c = eg_cli_getopt(argc, argv, opts, &dirs, &name)) == 0) {
		if (!strcmp(name, "json")) {
			f.json = true;
		} else if (eg_parse_u64(optarg, 1000000000, &count) || !count) {
			eg_cli_err("events: --count %s: not a positive number", optarg);
			return EG_EXIT_USAGE;
		} else {
			f.remaining = (long)count;
		}
	}
	if (c != -1 || optind != argc) {
		eg_cli_err("events: usage: events [--pin-dir DIR] [--json] [--count N]");
		return EG_EXIT_USAGE;
	}
	if (eg_pin_path(path, sizeof(path), dirs.pin_dir, eg_map_names[EG_MAP_EVENTS]))
		return EG_EXIT_USAGE;
	fd = bpf_obj_get(path);
	if (fd < 0) {
		eg_cli_err("pin dir %s: not loaded (%s: %s)", dirs.pin_dir, path, strerror(errno));
		return EG_EXIT_ERROR;
	}
	rb = ring_buffer__new(fd, on_event, &f, NULL);
	if (!rb) {
		eg_cli_err("ring buffer %s: %s", path, strerror(errno));
		close(fd);
		return EG_EXIT_ERROR;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: poll returns EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* Line-buffered so a follower piped into another tool sees events at once. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (!stop) {
		int n = ring_buffer__poll(rb, 200);

		if (n < 0 && n != -EINTR) {
			eg_cli_err("ring buffer %s: %s", path, strerror(-n));
			rc = EG_EXIT_ERROR;
			break;
		}
	}
	ring_buffer__free(rb);
	close(fd);
	return rc;
}
