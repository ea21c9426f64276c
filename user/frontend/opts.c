// SPDX-License-Identifier: Apache-2.0
/* The command-line parser every execgate program uses (frontend/opts.h). */
#include <stdarg.h>
#include <string.h>
#include "frontend/opts.h"
#include "execgate/execgate.h"

void eg_opts_init(struct eg_opts *p, const char *prog, const char *cmd, int argc, char **argv)
{
	memset(p, 0, sizeof(*p));
	p->prog = prog;
	p->cmd = cmd;
	p->argc = argc;
	p->argv = argv;
	p->i = 1;
}

static void vmsg(const struct eg_opts *p, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", p->prog);
	if (p->cmd)
		fprintf(stderr, "%s: ", p->cmd);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (%s%s%s --help)\n", p->prog, p->cmd ? " " : "", p->cmd ? p->cmd : "");
}

int eg_opts_usage(const struct eg_opts *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(p, fmt, ap);
	va_end(ap);
	return EG_OPTS_EXIT_USAGE;
}

void eg_opts_print_version(const char *prog)
{
	printf("%s %s\n", prog, EXECGATE_VERSION);
}

/* Help rows fit 80 columns: the text folds at spaces onto lines indented
 * to its column, so the man pages made from --help fit too. */
#define HELP_COLUMN 29
#define HELP_WIDTH  80

static void help_row(FILE *f, char short_name, const char *name, const char *arg, const char *help,
		     bool repeat)
{
	char left[64], text[512];
	const char *p = text;
	int col;

	if (short_name)
		snprintf(left, sizeof(left), "-%c, --%s%s%s", short_name, name, arg ? " " : "",
			 arg ? arg : "");
	else
		snprintf(left, sizeof(left), "--%s%s%s", name, arg ? " " : "", arg ? arg : "");
	snprintf(text, sizeof(text), "%s%s", help, repeat ? " (repeatable)" : "");
	col = fprintf(f, "  %-26s ", left);
	while (*p) {
		size_t room = (size_t)(HELP_WIDTH - col), n = strlen(p);

		if (n > room) {
			n = room;
			while (n && p[n] != ' ')
				n--;
			if (!n) /* one word longer than the room: whole */
				n = strcspn(p, " ");
		}
		fprintf(f, "%.*s\n", (int)n, p);
		p += n;
		while (*p == ' ')
			p++;
		if (*p)
			col = fprintf(f, "%*s", HELP_COLUMN, "");
	}
	if (p == text)
		fputc('\n', f);
}

void eg_opts_help_rows(FILE *f, const struct eg_opt *table)
{
	for (const struct eg_opt *o = table; o && o->name; o++)
		help_row(f, o->short_name, o->name, o->arg, o->help, o->repeat);
}

static void (*verbose_hook)(void);

void eg_opts_verbose(void (*fn)(void))
{
	verbose_hook = fn;
}

void eg_opts_help_std(FILE *f)
{
	help_row(f, 'h', "help", NULL, "print this help and exit 0", false);
	if (verbose_hook)
		help_row(f, 'v', "verbose", NULL,
			 "print debug messages on stderr, libbpf's included", true);
	help_row(f, 'V', "version", NULL, "print the version and exit 0", false);
}

static bool is_verbose(const char *a)
{
	return verbose_hook && (!strcmp(a, "-v") || !strcmp(a, "--verbose"));
}

static int stop(struct eg_opts *p, int code)
{
	p->exit = code;
	return -1;
}

static int print_help(struct eg_opts *p)
{
	if (p->help)
		p->help(p, stdout);
	return stop(p, EG_OPTS_EXIT_OK);
}

static int print_version(struct eg_opts *p)
{
	eg_opts_print_version(p->prog);
	return stop(p, EG_OPTS_EXIT_OK);
}

/* The row of an exact long name (len bytes of name), or of a short alias
 * (len 0, short_name c); NULL when none. */
static const struct eg_opt *find(const struct eg_opts *p, const char *name, size_t len, char c,
				 size_t *tab, size_t *row)
{
	for (size_t t = 0; t < EG_OPTS_TABLES; t++) {
		const struct eg_opt *o = p->tables[t];

		for (size_t r = 0; o && o[r].name && r < EG_OPTS_PER_TAB; r++) {
			bool hit = len ? strlen(o[r].name) == len && !strncmp(o[r].name, name, len)
				       : c && o[r].short_name == c;

			if (hit) {
				*tab = t;
				*row = r;
				return &o[r];
			}
		}
	}
	return NULL;
}

static int positional(struct eg_opts *p, const char *a)
{
	if (p->npos >= p->max_pos || p->npos >= EG_OPTS_MAX_POS)
		return stop(p, eg_opts_usage(p, "%s: unexpected argument", a));
	p->pos[p->npos++] = a;
	return 0;
}

int eg_opts_next(struct eg_opts *p, const struct eg_opt **out, const char **value)
{
	const struct eg_opt *o;
	const char *a, *eq, *shown;
	size_t len, tab, row;

	while (p->i < p->argc) {
		a = p->argv[p->i++];
		if (p->only_pos || a[0] != '-' || !a[1]) {
			if (positional(p, a))
				return -1;
			continue;
		}
		if (is_verbose(a)) {
			verbose_hook();
			continue;
		}
		if (a[1] != '-') {
			/* "-x": -h, -V, -v, a row's alias, else unknown or positional. */
			if (!strcmp(a, "-h"))
				return print_help(p);
			if (!strcmp(a, "-V"))
				return print_version(p);
			o = a[2] ? NULL : find(p, NULL, 0, a[1], &tab, &row);
			if (!o) {
				if (p->dash_positional) {
					if (positional(p, a))
						return -1;
					continue;
				}
				return stop(p, eg_opts_usage(p, "%s: unknown option", a));
			}
			eq = NULL;
			shown = a;
		} else {
			if (!a[2]) {
				p->only_pos = true;
				continue;
			}
			eq = strchr(a, '=');
			len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
			o = find(p, a + 2, len, 0, &tab, &row);
			/* A command with a --version row of its own (execgate-issue
			 * keyset --version N) takes it, value or not, unless it is
			 * the command's only argument: "CMD --version" still prints
			 * the program's version, but "--root-key K --version" with
			 * an empty $N is a usage error, never a version line that a
			 * script would take for its output. */
			if (o && o->arg && len == 7 && (eq || p->argc > 2)) {
				shown = NULL;
				goto have_row;
			}
			if ((len == 4 && !strncmp(a + 2, "help", 4)) ||
			    (len == 7 && !strncmp(a + 2, "version", 7)) ||
			    (verbose_hook && len == 7 && !strncmp(a + 2, "verbose", 7))) {
				if (eq)
					return stop(p, eg_opts_usage(p, "%.*s: takes no value",
								     (int)len + 2, a));
				return len == 4 ? print_help(p) : print_version(p);
			}
			if (!o)
				return stop(
				    p, eg_opts_usage(p, "%.*s: unknown option", (int)len + 2, a));
			shown = NULL;
		}
	have_row:
		if (p->seen[tab][row]++ && !o->repeat)
			return stop(p, eg_opts_usage(p, "--%s: given more than once", o->name));
		if (!o->arg && eq)
			return stop(p, eg_opts_usage(p, "--%s: takes no value", o->name));
		*value = NULL;
		if (o->arg) {
			if (eq)
				*value = eq + 1;
			else if (p->i < p->argc)
				*value = p->argv[p->i++];
			else if (shown)
				return stop(p, eg_opts_usage(p, "%s: missing %s", shown, o->arg));
			else
				return stop(p,
					    eg_opts_usage(p, "--%s: missing %s", o->name, o->arg));
		}
		*out = o;
		return 1;
	}
	return 0;
}

int eg_opts_top(const char *prog, int *argc, char **argv, void (*usage)(FILE *f))
{
	const char *a;

	while (*argc >= 2 && is_verbose(argv[1])) {
		verbose_hook();
		memmove(&argv[1], &argv[2], (size_t)(*argc - 1) * sizeof(*argv));
		(*argc)--;
	}
	if (*argc < 2) {
		usage(stderr);
		return EG_OPTS_EXIT_USAGE;
	}
	a = argv[1];
	if (!strcmp(a, "-h") || !strcmp(a, "--help") || !strcmp(a, "help")) {
		usage(stdout);
		return EG_OPTS_EXIT_OK;
	}
	if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
		eg_opts_print_version(prog);
		return EG_OPTS_EXIT_OK;
	}
	if (a[0] == '-') {
		fprintf(stderr, "%s: %s: unknown option (%s --help)\n", prog, a, prog);
		return EG_OPTS_EXIT_USAGE;
	}
	return -1;
}
