// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/un.h>
#include "core/ids.h"
#include "execgate/cli.h"
#include "execgate/commands.h"

const char *eg_cli_command = "execgate";

/* The options every command of the worker takes, after its own. */
static const struct eg_cli_opt dir_opts[] = {
    EG_OPT("pin-dir", "DIR",
	   "where the BPF maps and links are pinned (default " EG_WORKER_DEFAULT_PIN_DIR ")"),
    EG_OPT("state-dir", "DIR",
	   "verification keys, the writer lock and what load probed "
	   "(default " EG_WORKER_DEFAULT_STATE_DIR ")"),
};
static const struct eg_cli_opt help_opt = EG_OPT("help", NULL, "print this help and exit 0");

void eg_cli_err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "execgate: %s: ", eg_cli_command);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void help_row(FILE *f, const struct eg_cli_opt *o)
{
	char left[64];

	snprintf(left, sizeof(left), "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
	fprintf(f, "  %-26s %s%s\n", left, o->help, o->repeat ? " (repeatable)" : "");
}

void eg_cli_help(const struct eg_cli_cmd *cmd, FILE *f)
{
	fprintf(f, "usage: execgate %s %s\n\n%s\n\noptions:\n", cmd->name, cmd->args, cmd->about);
	for (const struct eg_cli_opt *o = cmd->opts; o && o->name; o++)
		help_row(f, o);
	if (cmd->dirs)
		for (size_t i = 0; i < sizeof(dir_opts) / sizeof(dir_opts[0]); i++)
			help_row(f, &dir_opts[i]);
	help_row(f, &help_opt);
	fprintf(f, "\nexit codes: 0 ok/allow, 1 failed, 2 usage, 3 refresh-route, 4 deny,\n"
		   "5 tier not offered, 6 stale install, 7 not found / not loaded\n");
}

int eg_cli_usage(const struct eg_cli_parse *p, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "execgate: %s: ", p->cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (execgate %s --help)\n", p->cmd->name);
	return EG_EXIT_USAGE;
}

void eg_cli_parse_init(struct eg_cli_parse *p, const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	memset(p, 0, sizeof(*p));
	p->cmd = cmd;
	p->argc = argc;
	p->argv = argv;
	p->i = 1;
	p->pin_dir = EG_WORKER_DEFAULT_PIN_DIR;
	p->state_dir = EG_WORKER_DEFAULT_STATE_DIR;
}

static int stop(struct eg_cli_parse *p, int code)
{
	p->exit = code;
	return -1;
}

/* The row of an exact name: the command's own (index < n), then the dirs;
 * NULL when unknown. getopt_long would also take an unambiguous prefix
 * (--bridge-sock for --bridge-socket): a typo then silently means another
 * flag, so only full names are accepted. */
static const struct eg_cli_opt *find(const struct eg_cli_parse *p, const char *name, size_t len,
				     size_t *idx)
{
	size_t n = 0;

	for (const struct eg_cli_opt *o = p->cmd->opts; o && o->name && n < EG_CLI_MAX_OPTS;
	     o++, n++)
		if (strlen(o->name) == len && !strncmp(o->name, name, len)) {
			*idx = n;
			return o;
		}
	if (!p->cmd->dirs)
		return NULL;
	for (size_t i = 0; i < 2; i++)
		if (strlen(dir_opts[i].name) == len && !strncmp(dir_opts[i].name, name, len)) {
			*idx = EG_CLI_MAX_OPTS + i;
			return &dir_opts[i];
		}
	return NULL;
}

int eg_cli_next(struct eg_cli_parse *p, const char **name, const char **value)
{
	const struct eg_cli_opt *o;
	const char *a, *eq;
	size_t len, idx;

	while (p->i < p->argc) {
		a = p->argv[p->i++];
		if (p->only_pos || strncmp(a, "--", 2) || (a[0] == '-' && a[1] == '\0')) {
			if (!p->only_pos && (!strcmp(a, "-h"))) {
				eg_cli_help(p->cmd, stdout);
				return stop(p, EG_EXIT_OK);
			}
			if (p->npos == EG_CLI_MAX_POS)
				return stop(p, eg_cli_usage(p, "%s: unexpected argument", a));
			p->pos[p->npos++] = a;
			continue;
		}
		if (a[2] == '\0') {
			p->only_pos = true;
			continue;
		}
		eq = strchr(a, '=');
		len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
		if (len == 4 && !strncmp(a + 2, "help", 4)) {
			eg_cli_help(p->cmd, stdout);
			return stop(p, EG_EXIT_OK);
		}
		o = find(p, a + 2, len, &idx);
		if (!o)
			return stop(p, eg_cli_usage(p, "%.*s: unknown option", (int)len + 2, a));
		if (p->seen[idx]++ && !o->repeat)
			return stop(p, eg_cli_usage(p, "--%s: given more than once", o->name));
		if (!o->arg && eq)
			return stop(p, eg_cli_usage(p, "--%s: takes no value", o->name));
		*value = NULL;
		if (o->arg) {
			if (eq)
				*value = eq + 1;
			else if (p->i < p->argc)
				*value = p->argv[p->i++];
			else
				return stop(p,
					    eg_cli_usage(p, "--%s: missing %s", o->name, o->arg));
		}
		if (idx == EG_CLI_MAX_OPTS) {
			p->pin_dir = *value;
			continue;
		}
		if (idx == EG_CLI_MAX_OPTS + 1) {
			p->state_dir = *value;
			continue;
		}
		*name = o->name;
		return 1;
	}
	return 0;
}

static void cut_finished(const struct eg_cut_finished *c, void *ctx)
{
	char u[EG_UUID_TEXT_LEN];

	(void)ctx;
	eg_uuid_to_text(c->sandbox, u);
	if (c->streams.error)
		return; /* eg_cli_worker_open_for prints the error */
	eg_cli_err("sandbox %s: finished the stream cut of epoch %llu%s that an interrupted "
		   "writer left: %u cut, %u unreachable",
		   u, (unsigned long long)c->epoch, c->retired ? " (retired)" : "",
		   c->streams.unix_cut + c->streams.tcp_cut,
		   c->streams.unix_unreachable + c->streams.tcp_unreachable);
}

int eg_cli_worker_open_for(const struct eg_cli_parse *p, struct eg_worker **w, const __u8 *own)
{
	struct eg_worker_config cfg = {.pin_dir = p->pin_dir, .state_dir = p->state_dir};
	char err[EG_ERR_MAX];
	int rc;

	rc = eg_worker_open(&cfg, w, err, sizeof(err));
	if (rc) {
		eg_cli_err("%s", err);
		return rc;
	}
	eg_cli_finish_cuts(*w, own);
	return 0;
}

void eg_cli_finish_cuts(struct eg_worker *w, const __u8 *skip)
{
	char err[EG_ERR_MAX] = "";

	/* A writer (this CLI or the daemon) killed between an epoch move and
	 * its cut left the intent in the record: whoever comes next cuts. */
	if (eg_worker_finish_cuts(w, skip, cut_finished, NULL, err, sizeof(err)) < 0)
		eg_cli_err("%s", err);
}

int eg_cli_worker_open(const struct eg_cli_parse *p, struct eg_worker **w)
{
	return eg_cli_worker_open_for(p, w, NULL);
}

int eg_cli_exit_for(int rc)
{
	switch (rc) {
	case 0:
		return EG_EXIT_OK;
	case -ESTALE:
		return EG_EXIT_STALE;
	case -ENOENT:
		return EG_EXIT_NOT_FOUND;
	case -EOPNOTSUPP:
		return EG_EXIT_UNSUPPORTED;
	default:
		return EG_EXIT_ERROR;
	}
}

int eg_cli_verdict_exit(enum eg_verdict v)
{
	return v == EG_ALLOW ? EG_EXIT_OK : v == EG_REFRESH_ROUTE ? EG_EXIT_REFRESH : EG_EXIT_DENY;
}

int eg_cli_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	return eg_parse_u64(s, max, out) ? -EINVAL : 0;
}

int eg_parse_pid(const char *s, int *pid)
{
	uint64_t v;

	if (eg_parse_u64(s, 0x7fffffff, &v) || v == 0)
		return -EINVAL;
	*pid = (int)v;
	return 0;
}

int eg_cli_check_path(const char *s, const char **why)
{
	size_t n = strlen(s);

	if (!n) {
		*why = "empty path";
		return -EINVAL;
	}
	if (n >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		*why = "longer than a Unix socket path can be (107 bytes)";
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
			*why = "contains a control character (newline, tab, escape, ...)";
			return -EINVAL;
		}
	return 0;
}

int eg_cli_read_token(const char *arg, char **text)
{
	enum { MAX = 65536 };
	size_t n = 0;
	char *buf;

	if (strcmp(arg, "-")) {
		buf = strdup(arg);
		if (!buf)
			return -ENOMEM;
		n = strlen(buf);
	} else {
		buf = malloc(MAX + 1);
		if (!buf)
			return -ENOMEM;
		while (n <= MAX) {
			ssize_t r = read(STDIN_FILENO, buf + n, MAX + 1 - n);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			n += (size_t)r;
		}
		if (n > MAX) {
			free(buf);
			return -E2BIG;
		}
	}
	if (n && buf[n - 1] == '\n')
		n--;
	buf[n] = '\0';
	*text = buf;
	return 0;
}

const char *eg_cli_uuid(const __u8 *id, char *buf)
{
	eg_uuid_format(id, buf);
	return buf;
}

void eg_cli_print_proc(FILE *f, const struct eg_proc_id *p)
{
	fprintf(f, "tgid %u start %llu exe %u:%u/%llu", p->tgid,
		(unsigned long long)p->start_boottime_ns, p->exe_dev >> 20, p->exe_dev & 0xfffff,
		(unsigned long long)p->exe_ino);
}

void eg_cli_print_escaped(FILE *f, const char *s, size_t max)
{
	for (size_t i = 0; i < max && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c >= 0x7f || c == '\\')
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

void eg_json_strn(FILE *f, const char *s, size_t max)
{
	fputc('"', f);
	for (size_t i = 0; i < max && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c); /* bytes, not UTF-8: paths and comm are bytes */
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void eg_json_str(FILE *f, const char *s)
{
	eg_json_strn(f, s, (size_t)-1);
}

void eg_json_proc(FILE *f, const struct eg_proc_id *p)
{
	fprintf(f, "{\"tgid\":%u,\"start_boottime_ns\":%llu,\"exe_dev\":%u,\"exe_ino\":%llu}",
		p->tgid, (unsigned long long)p->start_boottime_ns, p->exe_dev,
		(unsigned long long)p->exe_ino);
}

void eg_json_record(FILE *f, const struct eg_exec_record *r)
{
	char u[EG_UUID_TEXT_LEN];

	fprintf(f, "{\"sandbox\":\"%s\"", eg_cli_uuid(r->sandbox, u));
	fprintf(f, ",\"state\":\"%s\"", r->state == EG_RECORD_RETIRED ? "retired" : "active");
	fprintf(f, ",\"worker\":\"%s\"", eg_cli_uuid(r->worker, u));
	fprintf(f, ",\"pod_uid\":\"%s\"", eg_cli_uuid(r->pod_uid, u));
	fprintf(f, ",\"substrate\":\"%s\"", eg_substrate_name((uint8_t)r->substrate));
	fprintf(f, ",\"generation\":%llu,\"activation\":%u,\"epoch\":%llu,\"bridge\":",
		(unsigned long long)r->generation, r->activation, (unsigned long long)r->epoch);
	eg_json_proc(f, &r->bridge);
	fprintf(f, ",\"vmm\":");
	eg_json_proc(f, &r->vmm);
	fprintf(f, "}");
}

void eg_cli_boottime_rfc3339(uint64_t boot_ns, char *out, size_t size)
{
	struct timespec rt, bt;
	int64_t real_ns;
	struct tm tm;
	time_t secs;

	/* The two clocks differ by the time spent suspended; read them
	 * back to back and shift the event by the difference. */
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_BOOTTIME, &bt);
	real_ns = (int64_t)boot_ns + ((int64_t)rt.tv_sec - (int64_t)bt.tv_sec) * 1000000000LL +
		  ((int64_t)rt.tv_nsec - (int64_t)bt.tv_nsec);
	secs = (time_t)(real_ns / 1000000000LL);
	gmtime_r(&secs, &tm);
	snprintf(out, size, "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (long long)(real_ns % 1000000000LL));
}
