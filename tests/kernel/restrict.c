// SPDX-License-Identifier: Apache-2.0
/* tests/kernel/restrict.h: a classic BPF seccomp filter, checked on the
 * architecture, then on the syscall number and its first argument. */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include "restrict.h"

unsigned kh_child_restrict;

#if defined(__x86_64__)
#define KR_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define KR_ARCH AUDIT_ARCH_AARCH64
#else
#error "restrict.c: add this architecture's AUDIT_ARCH"
#endif

#define ARG0_LO	     offsetof(struct seccomp_data, args[0])
#define RET_ERRNO(e) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((e)&SECCOMP_RET_DATA))
#define RET_ALLOW    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define LOAD_NR	     BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LOAD_ARG0    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO)

int kr_apply(unsigned what)
{
	struct sock_filter f[64];
	struct sock_fprog prog;
	unsigned n = 0;

	if ((what & KR_DROP_SYS_PTRACE) && prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0))
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	if (!(what & (KR_DENY_SETNS_NET | KR_DENY_UNSHARE_NET | KR_DENY_AF_INET | KR_DENY_AF_INET6 |
		      KR_DENY_AF_NETLINK | KR_DENY_OPENAT2)))
		return 0;
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, KR_ARCH, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	if (what & KR_DENY_SETNS_NET) {
		/* setns(fd, nstype): CLONE_NEWNET, or 0 ("any type"), as
		 * systemd refuses every type it does not allow */
		f[n++] = (struct sock_filter)LOAD_NR;
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_setns, 0, 5);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						      offsetof(struct seccomp_data, args[1]));
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
		f[n++] =
		    (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWNET, 0, 1);
		f[n++] = (struct sock_filter)RET_ERRNO(EPERM);
		f[n++] = (struct sock_filter)RET_ALLOW;
	}
	if (what & KR_DENY_UNSHARE_NET) {
		f[n++] = (struct sock_filter)LOAD_NR;
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 0, 4);
		f[n++] = (struct sock_filter)LOAD_ARG0;
		f[n++] =
		    (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWNET, 0, 1);
		f[n++] = (struct sock_filter)RET_ERRNO(EPERM);
		f[n++] = (struct sock_filter)RET_ALLOW;
	}
	if (what & (KR_DENY_AF_INET | KR_DENY_AF_INET6 | KR_DENY_AF_NETLINK)) {
		unsigned fam[3], k = 0;

		if (what & KR_DENY_AF_INET)
			fam[k++] = AF_INET;
		if (what & KR_DENY_AF_INET6)
			fam[k++] = AF_INET6;
		if (what & KR_DENY_AF_NETLINK)
			fam[k++] = AF_NETLINK;
		f[n++] = (struct sock_filter)LOAD_NR;
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0,
						      (unsigned char)(2 * k + 2));
		f[n++] = (struct sock_filter)LOAD_ARG0;
		for (unsigned i = 0; i < k; i++) {
			f[n++] =
			    (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, fam[i], 0, 1);
			f[n++] = (struct sock_filter)RET_ERRNO(EAFNOSUPPORT);
		}
		f[n++] = (struct sock_filter)RET_ALLOW;
	}
	if (what & KR_DENY_OPENAT2) {
		f[n++] = (struct sock_filter)LOAD_NR;
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1);
		f[n++] = (struct sock_filter)RET_ERRNO(ENOSYS);
	}
	f[n++] = (struct sock_filter)RET_ALLOW;
	prog.len = (unsigned short)n;
	prog.filter = f;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		return -errno;
	return 0;
}

/* The value of the last "key=" line of the unit, or NULL. */
static const char *unit_value(char *text, const char *key, char *out, size_t size)
{
	size_t klen = strlen(key);
	const char *found = NULL;

	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		if (!strncmp(line, key, klen) && line[klen] == '=') {
			snprintf(out, size, "%s", line + klen + 1);
			found = out;
		}
	return found;
}

static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
			return true;
	return false;
}

int kr_of_unit(const char *path, unsigned *what)
{
	char text[16384], copy[16384], v[1024];
	FILE *f = fopen(path, "re");
	size_t len;

	if (!f)
		return -errno;
	len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = '\0';
	*what = 0;
	memcpy(copy, text, len + 1);
	if (unit_value(copy, "RestrictNamespaces", v, sizeof(v)) &&
	    (!strcmp(v, "yes") || (strcmp(v, "no") && !has_word(v, "net"))))
		*what |= KR_NO_NAMESPACES;
	memcpy(copy, text, len + 1);
	if (unit_value(copy, "RestrictAddressFamilies", v, sizeof(v)) && v[0] != '~') {
		if (!has_word(v, "AF_INET"))
			*what |= KR_DENY_AF_INET;
		if (!has_word(v, "AF_INET6"))
			*what |= KR_DENY_AF_INET6;
		if (!has_word(v, "AF_NETLINK"))
			*what |= KR_DENY_AF_NETLINK;
	}
	memcpy(copy, text, len + 1);
	if (unit_value(copy, "CapabilityBoundingSet", v, sizeof(v)) && v[0] != '~' &&
	    !has_word(v, "CAP_SYS_PTRACE"))
		*what |= KR_DROP_SYS_PTRACE;
	memcpy(copy, text, len + 1);
	if (unit_value(copy, "RestrictSUIDSGID", v, sizeof(v)) && !strcmp(v, "yes"))
		*what |= KR_DENY_OPENAT2;
	return 0;
}
