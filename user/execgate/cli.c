// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/un.h>
#include "execgate/text.h"
#include "execgate/cli.h"
#include "frontend/identity_opts.h"
#include "execgate/commands.h"

const char *eg_cli_command = "execgate";

/* The options every command of the worker takes, after its own. */
static const struct eg_opt dir_opts[] = {
    EG_OPT("pin-dir", "DIR",
	   "where the BPF maps and links are pinned (default " EG_WORKER_DEFAULT_PIN_DIR ")"),
    EG_OPT("state-dir", "DIR",
	   "verification keys, the writer lock and what load probed "
	   "(default " EG_WORKER_DEFAULT_STATE_DIR ")"),
    EG_OPT_END,
};

void eg_cli_err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "execgate: %s: ", eg_cli_command);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void eg_cli_help(const struct eg_cli_cmd *cmd, FILE *f)
{
	fprintf(f, "usage: execgate %s %s\n\n%s\n\noptions:\n", cmd->name, cmd->args, cmd->about);
	eg_opts_help_rows(f, cmd->opts);
	if (cmd->dirs)
		eg_cli_help_dirs(f);
	eg_opts_help_std(f);
	fputc('\n', f);
	eg_cli_exit_codes_brief(f);
}

void eg_cli_help_dirs(FILE *f)
{
	eg_opts_help_rows(f, dir_opts);
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

static void help(const struct eg_opts *o, FILE *f)
{
	eg_cli_help(o->ctx, f);
}

void eg_cli_parse_init(struct eg_cli_parse *p, const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	memset(p, 0, sizeof(*p));
	p->cmd = cmd;
	p->pin_dir = EG_WORKER_DEFAULT_PIN_DIR;
	p->state_dir = EG_WORKER_DEFAULT_STATE_DIR;
	eg_opts_init(&p->opts, "execgate", cmd->name, argc, argv);
	p->opts.tables[0] = cmd->opts;
	p->opts.tables[1] = cmd->dirs ? dir_opts : NULL;
	/* "-" is stdin, and a base64url token may start with "-". */
	p->opts.dash_positional = true;
	p->opts.max_pos = EG_CLI_MAX_POS;
	p->opts.help = help;
	p->opts.ctx = cmd;
}

int eg_cli_next(struct eg_cli_parse *p, const char **name, const char **value)
{
	const struct eg_opt *o;
	int rc;

	while ((rc = eg_opts_next(&p->opts, &o, value)) == 1) {
		if (o == &dir_opts[0])
			p->pin_dir = *value;
		else if (o == &dir_opts[1])
			p->state_dir = *value;
		else if (!strcmp(o->name, "json"))
			p->json = true;
		else {
			*name = o->name;
			return 1;
		}
	}
	if (rc < 0) {
		p->exit = p->opts.exit;
		return -1;
	}
	p->npos = (int)p->opts.npos;
	memcpy(p->pos, p->opts.pos, sizeof(p->pos));
	return 0;
}

int eg_cli_parse_json_only(struct eg_cli_parse *p, const struct eg_cli_cmd *cmd, int argc,
			   char **argv)
{
	const char *name, *val;
	int c;

	eg_cli_parse_init(p, cmd, argc, argv);
	while ((c = eg_cli_next(p, &name, &val)) == 1)
		; /* --json is the only flag of its own, and eg_cli_next takes it */
	if (c < 0)
		return p->exit;
	if (p->npos)
		return eg_cli_usage(p, "%s: unexpected argument", p->pos[0]);
	return -1;
}

int eg_cli_next_identity(struct eg_cli_parse *p, struct eg_identity_opts *id, const char **name,
			 const char **value)
{
	char err[EG_ERR_MAX];
	int c, rc;

	while ((c = eg_cli_next(p, name, value)) == 1) {
		rc = eg_identity_opt(id, *name, *value, err, sizeof(err));
		if (rc < 0) {
			p->exit = eg_cli_usage(p, "%s", err);
			return -1;
		}
		if (rc == 0)
			return 1;
	}
	return c;
}

static void cut_finished(const struct eg_cut_finished *c, void *ctx)
{
	char u[EG_UUID_TEXT_LEN], audit[64] = "";

	(void)ctx;
	eg_uuid_to_text(c->sandbox, u);
	if (c->streams.error)
		return; /* eg_cli_worker_open_for prints the error */
	/* In audit the cut is decided, not made: say how many were left
	 * running, as install and retire do (sandbox_cmd.c). */
	if (c->streams.would_cut)
		snprintf(audit, sizeof(audit), ", %u would be cut (audit, left running)",
			 c->streams.would_cut);
	eg_cli_err("sandbox %s: finished the stream cut of epoch %llu%s that an interrupted "
		   "writer left: %u cut, %u unreachable%s",
		   u, (unsigned long long)c->epoch, c->retired ? " (retired)" : "",
		   c->streams.unix_cut + c->streams.tcp_cut,
		   c->streams.unix_unreachable + c->streams.tcp_unreachable, audit);
}

int eg_cli_worker_open_for(const struct eg_cli_parse *p, struct eg_worker **w, const uint8_t *own)
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

void eg_cli_finish_cuts(struct eg_worker *w, const uint8_t *skip)
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

const char *eg_cli_uuid(const uint8_t *id, char *buf)
{
	eg_uuid_to_text(id, buf);
	return buf;
}

void eg_cli_print_proc(FILE *f, const struct eg_process *p)
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

void eg_cli_print_service_profile(FILE *f, const struct eg_runtime_record *r,
				  const struct eg_inet_addr *addrs, size_t naddrs)
{
	char text[EG_INET_TEXT_MAX];

	fprintf(f, "ports");
	if (!r->n_ports)
		fprintf(f, " none");
	for (size_t i = 0; i < r->n_ports && i < EG_RECORD_MAX_PORTS; i++)
		fprintf(f, "%s%u/%s", i ? "," : " ", r->ports[i].port,
			eg_proto_name(r->ports[i].proto));
	fprintf(f, " service-addrs");
	if (!naddrs)
		fprintf(f, " none");
	for (size_t i = 0; i < naddrs; i++)
		fprintf(f, "%s%s", i ? "," : " ",
			eg_inet_format(addrs[i].family, addrs[i].addr, text));
}
