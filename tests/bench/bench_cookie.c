/* SPDX-License-Identifier: Apache-2.0 */
/* Which program types on this kernel may call bpf_get_socket_cookie():
 * loads each program of bpf/bench/cookie_probe.bpf.c alone (nothing is
 * attached) and prints one line per program, "ok" or the load error. A
 * cookie-keyed socket tag needs the helper in every hook that writes, reads
 * or collects tags. Where connect_unix loads, it then checks that the
 * cookie BPF sees in a connect is the one userspace reads with SO_COOKIE
 * (what a revoker holding the socket would key by): attached to a scratch
 * cgroup only, on a Unix socket of its own. Exit status 0 when every program loaded, 1 otherwise
 * (on the dev host the LSM and iterator programs are refused with EPERM
 * whatever they call: KERNELS.md). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "kcompat.h"
#include "loader/tiers/cgroup.h"

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

/* The connect_unix program on a scratch cgroup; one connect from inside
 * it; the cookie the program stored against SO_COOKIE. 0 when they agree. */
static int same_cookie(const char *path)
{
	char root[400], cg[480], sock_path[64], err_at[64] = "";
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_program *q, *prog = NULL;
	struct bpf_link *link = NULL;
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	__u64 seen = 0, cookie = 0;
	socklen_t len = sizeof(cookie);
	int cg_fd = -1, lfd = -1, fd = -1, rc = 1;
	__u32 zero = 0;
	struct bpf_map *m;

	snprintf(sock_path, sizeof(sock_path), "/tmp/egcookie-%d.sock", (int)getpid());
	cg[0] = 0;
	if (!obj || eg_cgroup2_root(root, sizeof(root))) {
		snprintf(err_at, sizeof(err_at), "open / cgroup v2 root");
		goto out;
	}
	bpf_object__for_each_program(q, obj)
	{
		bool mine = !strcmp(bpf_program__name(q), "cookie_connect_unix");

		bpf_program__set_autoload(q, mine);
		if (mine)
			prog = q;
	}
	bpf_program__set_expected_attach_type(prog, EG_BPF_CGROUP_UNIX_CONNECT);
	snprintf(cg, sizeof(cg), "%s/egcookie-%d", root, (int)getpid());
	if (bpf_object__load(obj) || mkdir(cg, 0755)) {
		snprintf(err_at, sizeof(err_at), "load / mkdir");
		cg[0] = errno == EEXIST ? 0 : cg[0];
		goto out;
	}
	cg_fd = open(cg, O_RDONLY | O_DIRECTORY);
	link = cg_fd < 0 ? NULL : bpf_program__attach_cgroup(prog, cg_fd);
	if (!link) {
		snprintf(err_at, sizeof(err_at), "attach");
		goto out;
	}
	memcpy(sun.sun_path, sock_path, strlen(sock_path));
	unlink(sock_path);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sun, sizeof(sun)) || listen(lfd, 1)) {
		snprintf(err_at, sizeof(err_at), "listener");
		goto out;
	}
	if (eg_cgroup_join(cg)) {
		snprintf(err_at, sizeof(err_at), "join");
		goto out;
	}
	fd = socket(AF_UNIX, SOCK_STREAM, 0); /* made in the scratch cgroup */
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) ||
	    getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cookie, &len)) {
		snprintf(err_at, sizeof(err_at), "connect / SO_COOKIE");
		goto out;
	}
	bpf_object__for_each_map(m, obj)
	{
		if (bpf_map__is_internal(m) &&
		    bpf_map__lookup_elem(m, &zero, sizeof(zero), &seen, sizeof(seen), 0))
			snprintf(err_at, sizeof(err_at), "reading cookie_sink");
	}
	rc = err_at[0] || !seen || seen != cookie;
	printf("connect_unix cookie %llu, SO_COOKIE %llu: %s\n", (unsigned long long)seen,
	       (unsigned long long)cookie, rc ? "DIFFERENT" : "the same");
out:
	if (err_at[0])
		printf("cookie check: %s failed: %s\n", err_at, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (lfd >= 0)
		close(lfd);
	unlink(sock_path);
	if (!eg_cgroup2_root(root, sizeof(root)))
		eg_cgroup_join(root);
	bpf_link__destroy(link);
	if (cg_fd >= 0)
		close(cg_fd);
	if (cg[0])
		rmdir(cg);
	bpf_object__close(obj);
	return rc;
}

int main(void)
{
	char exe[512], path[700];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct bpf_object *obj;
	struct bpf_program *p, *q;
	int failed = 0, total = 0;
	bool unix_ok = false;

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
					bpf_program__set_expected_attach_type(
					    p, EG_BPF_CGROUP_UNIX_CONNECT);
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
			unix_ok |= !strcmp(name, "cookie_connect_unix");
		}
		bpf_object__close(obj);
	}
	printf("bpf_get_socket_cookie(): %d of %d program types load\n", total - failed, total);
	if (unix_ok && same_cookie(path))
		failed++;
	return failed ? 1 : 0;
}
