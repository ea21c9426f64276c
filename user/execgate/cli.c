// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include "core/ids.h"
#include "execgate/cli.h"
#include "execgate/commands.h"
#include "loader/pins.h"
#include "loader/proc_id.h"

void eg_cli_dirs_init(struct eg_cli_dirs *d)
{
	d->pin_dir = EG_DEFAULT_PIN_DIR;
	d->state_dir = EG_DEFAULT_STATE_DIR;
}

bool eg_cli_dirs_opt(struct eg_cli_dirs *d, const char *name, const char *value)
{
	if (!strcmp(name, "pin-dir")) {
		d->pin_dir = value;
		return true;
	}
	if (!strcmp(name, "state-dir")) {
		d->state_dir = value;
		return true;
	}
	return false;
}

int eg_cli_getopt(int argc, char **argv, const struct option *opts, struct eg_cli_dirs *d,
		  const char **name)
{
	int c, idx;

	do {
		c = getopt_long(argc, argv, "", opts, &idx);
		if (c != 0)
			return c;
		*name = opts[idx].name;
	} while (eg_cli_dirs_opt(d, *name, optarg));
	return 0;
}

int eg_cli_runtime_open(struct eg_runtime *rt, const struct eg_cli_dirs *d, bool check_ns)
{
	char err[768];
	int rc = 0;

	if (check_ns)
		rc = eg_proc_check_namespaces(err, sizeof(err));
	if (!rc)
		rc = eg_runtime_open(rt, d->pin_dir, d->state_dir, true, err, sizeof(err));
	if (rc)
		eg_cli_err("%s", err);
	return rc;
}

void eg_cli_err(const char *fmt, ...)
{
	va_list ap;

	fputs("execgate: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
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

const char *eg_cli_uuid(const __u8 *id, char *buf)
{
	eg_uuid_format(id, buf);
	return buf;
}

void eg_cli_print_proc(FILE *f, const struct eg_proc_id *p)
{
	fprintf(f, "tgid %u start %llu exe %u:%u/%llu", p->tgid, (unsigned long long)p->start_ticks,
		p->exe_dev >> 20, p->exe_dev & 0xfffff, (unsigned long long)p->exe_ino);
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
	fprintf(f, "{\"tgid\":%u,\"start_ticks\":%llu,\"exe_dev\":%u,\"exe_ino\":%llu}", p->tgid,
		(unsigned long long)p->start_ticks, p->exe_dev, (unsigned long long)p->exe_ino);
}

int eg_parse_pid(const char *s, int *pid)
{
	uint64_t v;

	if (eg_parse_u64(s, 0x7fffffff, &v) || v == 0)
		return -EINVAL;
	*pid = (int)v;
	return 0;
}
