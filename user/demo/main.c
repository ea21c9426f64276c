// SPDX-License-Identifier: Apache-2.0
/* execgate-demo: one binary, one subcommand per actor (demo.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "demo/demo.h"

const char *egd_opt(int argc, char **argv, const char *name)
{
	for (int i = 1; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return NULL;
		if (argv[i][0] == '-' && argv[i][1] == '-' && !strcmp(argv[i] + 2, name))
			return argv[i + 1];
	}
	return NULL;
}

bool egd_flag(int argc, char **argv, const char *name)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return false;
		if (argv[i][0] == '-' && argv[i][1] == '-' && !strcmp(argv[i] + 2, name))
			return true;
	}
	return false;
}

void egd_log(const char *file, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int fd, n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	/* one write: lines of concurrent connections never interleave */
	if (write(fd, line, (size_t)n) != n)
		fprintf(stderr, "execgate-demo: %s: short write\n", file);
	close(fd);
}

int egd_join_cgroup(const char *cgroup)
{
	char path[600], pid[24];
	int fd, n, rc = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
	n = snprintf(pid, sizeof(pid), "%d", (int)getpid());
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, pid, (size_t)n) != n)
		rc = -errno;
	close(fd);
	return rc;
}

const char *egd_errno_name(int err)
{
	const char *n = strerrorname_np(err);

	return n ? n : "E?";
}

long long egd_unix_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} cmds[] = {
    {"firecracker", egd_firecracker}, {"impostor", egd_impostor}, {"manager", egd_manager},
    {"frontend", egd_frontend},	      {"as-pid", egd_as_pid},
};

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2)
		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
			if (!strcmp(argv[1], cmds[i].name))
				return cmds[i].run(argc - 1, argv + 1);
	fprintf(stderr, "usage: execgate-demo firecracker|impostor|manager|frontend|as-pid ...\n"
			"(the actors of scripts/demo-two-workers.sh; see user/demo/demo.h)\n");
	return 2;
}
