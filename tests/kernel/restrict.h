/* SPDX-License-Identifier: Apache-2.0 */
/* The restrictions of deploy/systemd/execgated.service, emulated without
 * systemd, for a child about to exec (the daemon, the CLI): a seccomp
 * filter refusing what RestrictNamespaces= and RestrictAddressFamilies=
 * refuse, with the errno systemd's filters return, and capabilities
 * dropped from the bounding set as CapabilityBoundingSet= does (a root
 * exec then gets none of them). NoNewPrivileges is set on the way. */
#ifndef EXECGATE_TEST_KERNEL_RESTRICT_H
#define EXECGATE_TEST_KERNEL_RESTRICT_H

enum kr_restriction {
	KR_DENY_SETNS_NET = 1 << 0,   /* setns(fd, CLONE_NEWNET or 0): EPERM */
	KR_DENY_UNSHARE_NET = 1 << 1, /* unshare(CLONE_NEWNET | ...): EPERM */
	KR_DENY_AF_INET = 1 << 2,     /* socket(AF_INET, ...): EAFNOSUPPORT */
	KR_DENY_AF_INET6 = 1 << 3,    /* socket(AF_INET6, ...): EAFNOSUPPORT */
	KR_DENY_AF_NETLINK = 1 << 4,  /* socket(AF_NETLINK, ...): EAFNOSUPPORT */
	KR_DROP_SYS_PTRACE = 1 << 5,  /* CAP_SYS_PTRACE out of the bounding set */
	/* RestrictSUIDSGID=yes: systemd cannot read openat2's open_how, so
	 * its filter answers every openat2 with ENOSYS */
	KR_DENY_OPENAT2 = 1 << 6,
	/* RestrictNamespaces=yes: setns and unshare of a network namespace */
	KR_NO_NAMESPACES = KR_DENY_SETNS_NET | KR_DENY_UNSHARE_NET,
};

/* In the child, before exec: 0 or -errno (the child should _exit). */
int kr_apply(unsigned what);

/* What a unit file's RestrictNamespaces=, RestrictAddressFamilies= and
 * CapabilityBoundingSet= take away, of what the flags above can express
 * (0 when it takes none of it); -errno when the file cannot be read. */
int kr_of_unit(const char *path, unsigned *what);

/* The restrictions kh_cli's children (and dd_start's daemon) run under;
 * 0 by default, reset by kh_setup/dd_setup. */
extern unsigned kh_child_restrict;

#endif
