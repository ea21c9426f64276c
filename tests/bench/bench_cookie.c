/* SPDX-License-Identifier: Apache-2.0 */
/* Which program types on this kernel may call bpf_get_socket_cookie():
 * loads each program of bpf/bench/cookie_probe.bpf.c alone (nothing is
 * attached) and prints one line per program, "ok" or the load error. A
 * cookie-keyed socket tag needs the helper in every hook that writes, reads
 * or collects tags. Exit status 0 when every program loaded, 1 otherwise
 * (on the dev host the LSM and iterator programs are refused with EPERM
 * whatever they call: KERNELS.md). */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#define CGROUP_UNIX_CONNECT 49 /* BPF_CGROUP_UNIX_CONNECT, 6.7+ (user/kcompat.h) */

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* The verifier's last words (the summary line and the three before it):
 * why a program was refused. */
static void last_lines(const char *log)
{
	const char *end = log + strlen(log), *start = end;
	int lines = 0;

	while (end > log && end[-1] == '\n')
		end--;
	for (start = end; start > log; start--)
		if (start[-1] == '\n' && ++lines == 4)
			break;
	if (end > start)
		printf("    verifier: %.*s\n", (int)(end - start), start);
}

static char vlog[1 << 20];

int main(void)
{
	char exe[512], path[700];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct bpf_object *obj;
	struct bpf_program *p, *q;
	int failed = 0, total = 0;

	if (n <= 0) {
		perror("bench-cookie: /proc/self/exe");
		return 2;
	}
	exe[n] = 0;
	snprintf(path, sizeof(path), "%s/bpf-steps/cookie_probe.bpf.o", dirname(exe));
	libbpf_set_print(silent);
	for (int i = 0;; i++) {
		int k = 0, err;
		const char *name = NULL, *sec = NULL;

		obj = bpf_object__open_file(path, NULL);
		if (!obj) {
			fprintf(stderr, "bench-cookie: %s: %s\n", path, strerror(errno));
			return 2;
		}
		bpf_object__for_each_program(q, obj)
		{
			bpf_program__set_autoload(q, k == i);
			if (k == i) {
				p = q;
				name = bpf_program__name(p);
				sec = bpf_program__section_name(p);
				if (!strcmp(name, "cookie_connect_unix")) {
					sec = "cgroup/connect_unix";
					bpf_program__set_expected_attach_type(p,
									      CGROUP_UNIX_CONNECT);
				}
			}
			k++;
		}
		if (!name) {
			bpf_object__close(obj);
			break;
		}
		vlog[0] = 0;
		bpf_program__set_log_buf(p, vlog, sizeof(vlog));
		err = bpf_object__load(obj);
		total++;
		if (err) {
			failed++;
			printf("%-22s %-32s refused: %s\n", sec, name, strerror(-err));
			last_lines(vlog);
		} else {
			printf("%-22s %-32s ok\n", sec, name);
		}
		bpf_object__close(obj);
	}
	printf("bpf_get_socket_cookie(): %d of %d program types load\n", total - failed, total);
	return failed ? 1 : 0;
}
