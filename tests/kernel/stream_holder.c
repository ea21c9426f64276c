// SPDX-License-Identifier: Apache-2.0
/* A bridge that holds streams (stream_holder.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "harness.h"
#include "stream_holder.h"

#define SH_MAX_FDS 16

bool sh_end_cut(int fd)
{
	int recv_errno;
	char b[64];
	ssize_t r, s;

	do /* bytes the peer sent before the cut */
		r = recv(fd, b, sizeof(b), MSG_DONTWAIT);
	while (r > 0);
	recv_errno = r < 0 ? errno : 0;
	s = send(fd, "x", 1, MSG_NOSIGNAL);
	return (r == 0 || (r < 0 && recv_errno == EPIPE)) && s < 0 && errno == EPIPE;
}

static void holder_main(int ctl, const char *path)
{
	int fds[SH_MAX_FDS], n = 0;
	char cmd;

	signal(SIGPIPE, SIG_IGN);
	while (read(ctl, &cmd, 1) == 1) {
		int reply = 0;

		if (cmd == 'c' && n < SH_MAX_FDS) {
			struct sockaddr_un a = {.sun_family = AF_UNIX};
			int fd = socket(AF_UNIX, SOCK_STREAM, 0);

			snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
			reply = connect(fd, (struct sockaddr *)&a, sizeof(a)) ? -errno : 0;
			if (!reply)
				fds[n++] = fd;
			else
				close(fd);
		} else if (cmd == 'w') {
			for (int i = 0; i < n; i++)
				reply += send(fds[i], "x", 1, MSG_NOSIGNAL) == 1;
		} else if (cmd == 'r') {
			for (int i = 0; i < n; i++) {
				char b[8];

				reply += recv(fds[i], b, sizeof(b), MSG_DONTWAIT) > 0;
			}
		} else if (cmd == 'e') {
			for (int i = 0; i < n; i++)
				reply += sh_end_cut(fds[i]);
		}
		if (write(ctl, &reply, sizeof(reply)) != sizeof(reply))
			break;
	}
	_exit(0);
}

void sh_start(struct sh_holder *h, const char *path)
{
	char procs[600], pid[16];
	int sv[2];
	FILE *f;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	h->pid = fork();
	cr_assert(h->pid >= 0);
	if (h->pid == 0) {
		close(sv[0]);
		holder_main(sv[1], path);
	}
	close(sv[1]);
	h->ctl = sv[0];
	kh_track(h->pid);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", kh.cgroup);
	snprintf(pid, sizeof(pid), "%d", (int)h->pid);
	f = fopen(procs, "w");
	cr_assert(f, "open %s", procs);
	cr_assert(fputs(pid, f) >= 0 && fclose(f) == 0, "join cgroup");
}

int sh_cmd(struct sh_holder *h, char cmd)
{
	int reply;

	cr_assert_eq(write(h->ctl, &cmd, 1), 1);
	cr_assert_eq(read(h->ctl, &reply, sizeof(reply)), (ssize_t)sizeof(reply));
	return reply;
}

bool sh_lease_loaded(void)
{
	char pin[256];

	snprintf(pin, sizeof(pin), "%s/links/lsm_socket_sendmsg", kh.pin_dir);
	return access(pin, F_OK) == 0;
}

int sh_listen(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	cr_assert(fd >= 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(fd, 64), 0);
	return fd;
}
