/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel constants that the build host's headers may lack, defined once.
 * The build host is Debian 12: its linux/bpf.h, libbpf 1.1 and bpftool 7.1
 * are from Linux 6.1, older than some hooks and socket options the tiers
 * use on newer kernels. Each value is the kernel's own ABI number (never
 * renumbered), with the kernel that introduced it. A macro the system
 * headers define wins; enum members (bpf_attach_type) cannot be tested
 * for, so those get an EG_ name.
 *
 * Internal to the project: not installed, not part of include/execgate/. */
#ifndef EXECGATE_KCOMPAT_H
#define EXECGATE_KCOMPAT_H

/* enum bpf_attach_type: the cgroup connect() hook for AF_UNIX, Linux 6.7
 * (bpf/cgroup_connect_unix.bpf.c). */
#define EG_BPF_CGROUP_UNIX_CONNECT 49
/* Its name, as newer libbpf's libbpf_bpf_attach_type_str() gives it. */
#define EG_BPF_CGROUP_UNIX_CONNECT_NAME "cgroup_unix_connect"

/* getsockopt(SOL_SOCKET) options. */
#ifndef SO_COOKIE
#define SO_COOKIE 57 /* Linux 4.12 */
#endif
#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59 /* Linux 4.13 */
#endif
#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71 /* Linux 5.14 */
#endif
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5 */
#endif

/* setsockopt(SOL_NETLINK): acks without the request echoed, Linux 4.3. */
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif

#endif
