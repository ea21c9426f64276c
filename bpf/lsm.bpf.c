// SPDX-License-Identifier: GPL-2.0-only
/* The LSM tier: the checks only BPF LSM can make. One object, loaded beside
 * the cgroup tier and sharing its pinned maps (execgate_maps.bpf.h):
 *
 *   socket_listen        tag each AF_UNIX listener with the process that
 *                        called listen() (eg_listener_tags)
 *   socket_connect       AF_VSOCK endpoints (eg_vsock_endpoints); AF_UNIX
 *                        path endpoints only where the kernel has no
 *                        connect_unix hook (eg_lsm_unix_connect, 6.1)
 *   unix_stream_connect  inode endpoints (eg_inode_endpoints: the bound
 *                        socket, whatever path reached it) and the listener
 *                        check for every admitted stream
 *   socket_sendmsg/recvmsg  stream leases: I/O on a socket tagged with an
 *                        epoch that is no longer current fails with EPIPE
 *   sock_graft           the accepted end of a VSOCK stream to a registered
 *                        endpoint gets the lease too (the connecting end got
 *                        it in socket_connect)
 *
 * Errnos: a denied connect fails with EPERM (as in the cgroup tier); a
 * revoked stream fails send and receive, on both ends of a Unix stream, with
 * EPIPE (no SIGPIPE: the protocol code never runs). Every hook first returns
 * an earlier LSM's non-zero verdict unchanged.
 *
 * One object loads on 6.1 and 6.12: no kfuncs that 6.1 lacks (no
 * bpf_rdonly_cast: socket addresses are copied with bpf_probe_read_kernel),
 * and every sock->sk is NULL-checked before bpf_sk_storage_get (6.12 types it
 * trusted_ptr_or_null and refuses the program otherwise). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
/* Neither 6.1 nor 6.12 offers bpf_ktime_get_coarse_ns() to LSM programs
 * (their verifiers: "unknown func bpf_ktime_get_coarse_ns#160", "program of
 * this type cannot use helper"), so grants expire here by CLOCK_BOOTTIME
 * read in the hook (execgate_common.bpf.h, eg_grant_clock_ns). */
#define EG_GRANT_CLOCK_BOOTTIME_ONLY
#include "execgate_connect.bpf.h"

#define AF_UNIX	 1
#define AF_VSOCK 40
#define EPERM	 1
#define EPIPE	 32

char LICENSE[] SEC("license") = "GPL";

/* struct sockaddr_vm, a fixed UAPI layout. Not the vmlinux.h type: on
 * modular kernels that type lives in the vsock module's BTF, and a CO-RE
 * relocation against it would fail to load while vsock is not loaded. */
struct eg_sockaddr_vm {
	__u16 svm_family;
	__u16 svm_reserved1;
	__u32 svm_port;
	__u32 svm_cid;
	__u8 svm_flags;
	__u8 svm_zero[3];
};

/* Set by the loader before load: true on kernels without
 * BPF_CGROUP_UNIX_CONNECT, where socket_connect enforces the Unix path
 * endpoints instead. False elsewhere, so a connect is checked (and counted)
 * once. The verifier drops the dead branch. */
const volatile bool eg_lsm_unix_connect = false;

/* Sockets whose lease denial was already reported: one event per revoked
 * socket, however often its owner retries. The counters stay exact. Private
 * to this object (not pinned): losing it on a reload only repeats an event. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} eg_lease_reported SEC(".maps");

/* The words a Unix path is read into on kernels without connect_unix: off
 * the stack, which the admission cache's key and entry already fill. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[EG_PATH_WORDS]);
} eg_lsm_path_words SEC(".maps");

/* ---- socket_listen ---------------------------------------------------------- */

SEC("lsm/socket_listen")
int BPF_PROG(eg_lsm_socket_listen, struct socket *sock, int backlog, int ret)
{
	struct eg_listener_tag *lt;
	struct eg_proc_id owner;
	struct sock *sk;

	if (ret)
		return ret;
	sk = sock->sk;
	if (!sk || sk->__sk_common.skc_family != AF_UNIX)
		return 0;
	if (!eg_current_proc(&owner))
		return 0; /* untagged listeners fail the listener check: closed */
	lt = bpf_sk_storage_get(&eg_listener_tags, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (lt)
		lt->owner = owner;
	return 0;
}

/* ---- socket_connect --------------------------------------------------------- */

/* The hook's answer to a connect the decision ended (execgate_connect.bpf.h):
 * true, go on (allowed, or let through in audit); false, EPERM. */
EG_INLINE int eg_connect_rc(bool go_on)
{
	return go_on ? 0 : -EPERM;
}

/* A registered (CID, port) is looked up first: every other VSOCK connect
 * on the machine pays that one lookup and nothing more. A process's
 * connect again to an address it was allowed on is then decided by the
 * admission cache; a miss runs the one decision, which reads the stripe's
 * word before the record and grant it decides on. */
static __noinline int eg_vsock_connect(struct socket *sock, struct sockaddr *address, int addrlen)
{
	struct eg_endpoint_snap ep = {};
	struct eg_record_snap rec;
	struct eg_proc_id caller;
	struct eg_sockaddr_vm svm;
	struct eg_dest dest;
	struct eg_vsock_key key;
	struct eg_admit_key ak;
	struct eg_endpoint *v;
	struct eg_sk_tag tag;
	__u64 gen, until;
	__u32 reason;
	bool known;
	int rc;

	/* Shorter addresses never connect: vsock_addr_cast() refuses them. */
	if (addrlen < (int)sizeof(svm))
		return 0;
	if (bpf_probe_read_kernel(&svm, sizeof(svm), address))
		return 0;
	key.cid = svm.svm_cid;
	key.port = svm.svm_port;

	v = bpf_map_lookup_elem(&eg_vsock_endpoints, &key);
	if (!v) {
		eg_count(EG_K_ALLOW_UNREGISTERED);
		return 0;
	}
	known = eg_current_proc(&caller);
	if (known) {
		eg_admit_key_vsock(&key, caller.tgid, &ak);
		if (eg_admit_hit_vsock(&ak, &key, &caller, &tag) && eg_connect_hit(sock->sk, &tag))
			return 0;
	}

	rc = eg_endpoint_copy_at(&eg_vsock_endpoints, &key, v, &ep);
	__builtin_memset(&dest, 0, sizeof(dest));
	dest.vsock = &key;
	reason = eg_connect_decide(rc, &ep, &dest, known, &caller, &rec, &gen, &until);
	if (!eg_reason_allows(reason))
		return eg_connect_rc(
		    eg_connect_deny(EG_HOOK_LSM_SOCKET_CONNECT, reason, &ep, &rec, &dest));
	return eg_connect_rc(eg_connect_admit(sock->sk, EG_HOOK_LSM_SOCKET_CONNECT, reason, &ep,
					      &rec, &caller, gen, until, &ak, NULL, &dest));
}

/* Path endpoints on kernels without connect_unix: the same check as
 * bpf/cgroup_connect_unix.bpf.c, admission cache included, but
 * machine-wide rather than per cgroup, and reading the address with a
 * helper (6.1 has no bpf_rdonly_cast). */
static __noinline int eg_unix_connect(struct socket *sock, struct sockaddr *address, int addrlen)
{
	struct eg_endpoint_snap ep = {};
	struct eg_record_snap rec;
	struct eg_path_filter_key fk;
	struct eg_proc_id caller;
	struct eg_dest dest;
	struct eg_admit_key ak;
	struct eg_path_key key;
	struct eg_sk_tag tag;
	__u32 limit, len, reason;
	__u64 gen, until, *words;
	__u32 zero = 0;
	bool known;
	int rc;

	if (addrlen <= 2)
		return 0; /* unnamed: nothing to check */
	/* eg_unix_path_scan() reads whole 8-byte words: 14 of them, the last
	 * 4 bytes never written, so zero. */
	words = bpf_map_lookup_elem(&eg_lsm_path_words, &zero);
	if (!words)
		return 0; /* never: an ARRAY always has its element */
	limit = addrlen - 2 > EG_UNIX_PATH_MAX ? EG_UNIX_PATH_MAX : addrlen - 2;
	/* A fixed-size read: every connect() path hands the hook a full
	 * sockaddr_storage (128 bytes), so 108 bytes after the family are
	 * always there; the scan ignores what lies beyond addrlen. */
	if (bpf_probe_read_kernel(words, EG_UNIX_PATH_MAX, address->sa_data))
		return 0;
	len = eg_unix_path_scan((const __u8 *)words, limit, &fk);
	if (!len || !eg_path_hinted(&fk)) {
		eg_count(EG_K_ALLOW_UNREGISTERED);
		return 0;
	}
	eg_path_key_load((const __u8 *)words, len, &key);
	known = eg_current_proc(&caller);
	if (known) {
		eg_admit_key_make(&key, len, caller.tgid, &ak);
		if (eg_admit_hit(&ak, &key, &caller, &tag) && eg_connect_hit(sock->sk, &tag))
			return 0;
	}
	if (!eg_path_filtered(&fk)) {
		eg_count(EG_K_ALLOW_UNREGISTERED);
		return 0;
	}
	rc = eg_endpoint_copy(&eg_endpoints, &key, &ep);
	if (rc == EG_COPY_MISSING) {
		eg_count(EG_K_ALLOW_UNREGISTERED); /* filter collision */
		return 0;
	}
	/* filled here, not at entry: the unregistered path pays nothing for it */
	__builtin_memset(&dest, 0, sizeof(dest));
	dest.path = key.path;
	reason = eg_connect_decide(rc, &ep, &dest, known, &caller, &rec, &gen, &until);
	if (!eg_reason_allows(reason))
		return eg_connect_rc(
		    eg_connect_deny(EG_HOOK_LSM_SOCKET_CONNECT, reason, &ep, &rec, &dest));
	return eg_connect_rc(eg_connect_admit(sock->sk, EG_HOOK_LSM_SOCKET_CONNECT, reason, &ep,
					      &rec, &caller, gen, until, &ak, &key, &dest));
}

SEC("lsm/socket_connect")
int BPF_PROG(eg_lsm_socket_connect, struct socket *sock, struct sockaddr *address, int addrlen,
	     int ret)
{
	__u16 family;

	if (ret)
		return ret;
	family = address->sa_family;
	if (family == AF_VSOCK)
		return eg_vsock_connect(sock, address, addrlen);
	if (eg_lsm_unix_connect && family == AF_UNIX)
		return eg_unix_connect(sock, address, addrlen);
	return 0;
}

/* ---- unix_stream_connect ------------------------------------------------------ */

/* The inode of the socket file `other` is bound to: the same whether the
 * client named it by its real path, a symlink, a relative path or a bind
 * mount. False for abstract and unbound sockets. */
EG_INLINE bool eg_listener_inode(struct sock *other, struct eg_inode_key *key)
{
	struct unix_sock *u = bpf_skc_to_unix_sock(other);
	struct dentry *d;
	struct inode *inode;

	if (!u)
		return false;
	d = u->path.dentry;
	if (!d)
		return false;
	inode = d->d_inode;
	if (!inode)
		return false;
	key->ino = inode->i_ino;
	key->dev = inode->i_sb->s_dev;
	key->pad = 0;
	return true;
}

/* Connects to a registered endpoint reach here admitted either by the path
 * hook (connect_unix, or socket_connect on 6.1), which tagged `sock`, or
 * not at all when the client used another name for the socket; then the
 * inode endpoint catches it. Either way the listener must be the process the
 * current record expects: the VMM for a VMM socket, the bridge for a bridge
 * socket. A listener that died and was replaced by another process binding
 * the same path has a new inode (no inode endpoint) and the wrong owner. */
SEC("lsm/unix_stream_connect")
int BPF_PROG(eg_lsm_unix_stream_connect, struct sock *sock, struct sock *other, struct sock *newsk,
	     int ret)
{
	struct eg_endpoint_snap ep = {};
	struct eg_record_snap rec = {};
	const struct eg_dest none = {};
	const struct eg_proc_id *expected;
	struct eg_listener_tag *lt;
	struct eg_inode_key ikey;
	struct eg_proc_id caller;
	struct eg_sk_tag *tag;
	__u32 reason;
	int rc = EG_COPY_MISSING;

	if (ret)
		return ret;
	tag = bpf_sk_storage_get(&eg_sk_tags, sock, 0, 0);
	if (eg_listener_inode(other, &ikey))
		rc = eg_endpoint_copy(&eg_inode_endpoints, &ikey, &ep);
	if (rc == EG_COPY_MISSING && !tag)
		return 0; /* unregistered: counted once, by the path hook */
	if (rc == EG_COPY_RACED) {
		reason = EG_K_DENY_INCONSISTENT;
		goto deny;
	}

	if (rc == EG_COPY_OK && tag) {
		/* The path hook already decided this connect: one verdict per
		 * connect (and per counter), not a second one against a record
		 * that may have moved since. Path and inode must agree. */
		if (!eg_id_eq(tag->sandbox, ep.sandbox) || tag->role != ep.role) {
			reason = EG_K_DENY_INCONSISTENT;
			goto deny;
		}
	}
	if (rc == EG_COPY_OK && !tag) {
		/* Reached by a name the path hook does not know (symlink,
		 * relative path, bind mount, or a caller outside its cgroup):
		 * the one decision, as a path hook would make it. */
		bool known = eg_current_proc(&caller);

		reason =
		    eg_connect_decide(EG_COPY_OK, &ep, &none, known, &caller, &rec, NULL, NULL);
		if (!eg_reason_allows(reason))
			goto deny;
	} else {
		__builtin_memcpy(ep.sandbox, tag->sandbox, EG_ID_BYTES);
		ep.role = tag->role;
		reason = eg_record_state_verdict(&ep, &rec);
		if (reason)
			goto deny;
		/* An install between the path hook and here moved the epoch:
		 * the connect stands (the path hook decided it), and its lease,
		 * copied to both ends below, dies at the first I/O. */
		reason = EG_K_ALLOW_BRIDGE; /* counted by the path hook */
	}

	/* The listener check. A record without the expected listener's
	 * identity (install without --vmm-pid) cannot be checked: that gap is
	 * reported by `execgate status`, not papered over here. */
	expected = ep.role == EG_ROLE_VMM ? &rec.vmm : &rec.bridge;
	if (expected->tgid) {
		lt = bpf_sk_storage_get(&eg_listener_tags, other, 0, 0);
		if (!lt || !eg_proc_eq(&lt->owner, expected)) {
			reason = EG_K_DENY_LISTENER;
			goto deny;
		}
	}

	/* Both ends carry one lease: the client's socket and the one the
	 * listener will accept. A client the path hook admitted keeps the
	 * epoch it was admitted at. */
	if (tag) {
		struct eg_sk_tag copy = *tag, *peer;

		peer = bpf_sk_storage_get(&eg_sk_tags, newsk, 0, BPF_SK_STORAGE_GET_F_CREATE);
		if (!peer) {
			reason = EG_K_DENY_NO_TAG;
			goto deny;
		}
		*peer = copy;
		return 0;
	}
	if (!eg_tag_socket(sock, &rec, ep.role) || !eg_tag_socket(newsk, &rec, ep.role)) {
		reason = EG_K_DENY_NO_TAG;
		goto deny;
	}
	eg_count(reason);
	return 0;

deny:
	/* audit: allowed; ends the denial would have left untagged stay so */
	return eg_connect_rc(
	    eg_connect_deny(EG_HOOK_LSM_UNIX_STREAM_CONNECT, reason, &ep, &rec, &none));
}

/* ---- sock_graft: the accepted end of a VSOCK stream ------------------------- */

/* vsock_sock begins with its struct sock, then the transport pointer, then
 * local_addr (af_vsock.h, the same on 6.1 and 6.12). Read by offset: the
 * type lives in the vsock module's BTF, which need not be loaded (see
 * struct eg_sockaddr_vm). */
EG_INLINE int eg_vsock_local_addr(struct sock *sk, struct eg_sockaddr_vm *out)
{
	__u64 off = bpf_core_type_size(struct sock) + sizeof(void *);

	return bpf_probe_read_kernel(out, sizeof(*out), (void *)((__u64)sk + off));
}

/* accept() grafts the connected child onto the new socket. A child of a
 * registered (CID, port) -- its local address is what the peer dialed --
 * is tagged with the record's current epoch and role, so the stream lease
 * stops I/O on this end as well when the epoch moves. The peer was admitted
 * (or not) by socket_connect; this hook decides nothing. Residual: an
 * install landing between the peer's connect and this accept tags this end
 * with the new epoch; the peer's end is dead then, and the loader's
 * revocation shuts the stream down. */
SEC("lsm/sock_graft")
int BPF_PROG(eg_lsm_sock_graft, struct sock *sk, struct socket *parent)
{
	struct eg_endpoint_snap ep = {};
	struct eg_record_snap rec = {};
	struct eg_sockaddr_vm addr;
	struct eg_vsock_key key;

	if (!sk || sk->__sk_common.skc_family != AF_VSOCK)
		return 0;
	if (eg_vsock_local_addr(sk, &addr))
		return 0;
	key.cid = addr.svm_cid;
	key.port = addr.svm_port;
	if (eg_endpoint_copy(&eg_vsock_endpoints, &key, &ep) != EG_COPY_OK)
		return 0;
	if (eg_record_copy(ep.sandbox, &rec) != EG_COPY_OK || rec.state != EG_RECORD_ACTIVE)
		return 0; /* no lease to give; the peer's connect was denied */
	/* sock_graft cannot refuse: an end left untagged here (its storage
	 * could not be created) keeps no lease; the peer's end has its own. */
	eg_tag_socket(sk, &rec, ep.role);
	return 0;
}

/* ---- stream leases ---------------------------------------------------------- */

/* The current epoch of a sandbox, copied under the record's lock. False when
 * there is no consistent active record: the lease is dead. */
EG_INLINE bool eg_current_epoch(const __u8 sandbox[EG_ID_BYTES], __u64 *epoch, __u32 *mode)
{
	struct eg_exec_record *v;
	__u8 seen[EG_ID_BYTES];
	__u32 state, m;

	v = bpf_map_lookup_elem(&eg_records, sandbox);
	if (!v)
		return false;
	bpf_spin_lock(&v->lock);
	state = v->state;
	*epoch = v->epoch;
	m = v->mode;
	__builtin_memcpy(seen, v->sandbox, EG_ID_BYTES);
	bpf_spin_unlock(&v->lock);
	if (!eg_id_eq(seen, sandbox) || bpf_map_lookup_elem(&eg_records, sandbox) != v)
		return false;
	*mode = m; /* a retired record's mode still governs its streams */
	return state == EG_RECORD_ACTIVE;
}

/* Only for tagged sockets: the untagged path is one sk_storage lookup. */
static __noinline int eg_lease_check(struct sock *sk, struct eg_sk_tag *tag, __u32 hook)
{
	struct eg_sk_tag t = *tag;
	__u32 *reported, mode = EG_MODE_INHERIT;
	__u64 epoch = 0;
	bool audit;

	if (eg_current_epoch(t.sandbox, &epoch, &mode) && epoch == t.epoch)
		return 0; /* same epoch: an activation change keeps the stream */
	/* audit: the I/O goes through, counted on every call and reported
	 * once per socket, as a denial is */
	audit = eg_decide_audit(mode);
	if (audit)
		eg_count_would_deny(hook, EG_K_DENY_STREAM_EPOCH);
	else
		eg_count(EG_K_DENY_STREAM_EPOCH);
	reported = bpf_sk_storage_get(&eg_lease_reported, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (reported && !*reported) {
		*reported = 1;
		eg_emit_denial(hook, EG_K_DENY_STREAM_EPOCH, t.sandbox, t.epoch, NULL, 0, NULL,
			       audit ? EG_EVENT_AUDIT : 0);
	}
	return audit ? 0 : -EPIPE;
}

/* sendmsg and recvmsg: an earlier LSM's verdict stands; an untagged socket
 * costs one sk_storage lookup. */
EG_INLINE int eg_stream_lease(struct socket *sock, int ret, __u32 hook)
{
	struct eg_sk_tag *tag;
	struct sock *sk;

	if (ret)
		return ret;
	sk = sock->sk;
	if (!sk)
		return 0;
	tag = bpf_sk_storage_get(&eg_sk_tags, sk, 0, 0);
	if (!tag)
		return 0;
	return eg_lease_check(sk, tag, hook);
}

SEC("lsm/socket_sendmsg")
int BPF_PROG(eg_lsm_socket_sendmsg, struct socket *sock, struct msghdr *msg, int size, int ret)
{
	return eg_stream_lease(sock, ret, EG_HOOK_LSM_SENDMSG);
}

SEC("lsm/socket_recvmsg")
int BPF_PROG(eg_lsm_socket_recvmsg, struct socket *sock, struct msghdr *msg, int size, int flags,
	     int ret)
{
	return eg_stream_lease(sock, ret, EG_HOOK_LSM_RECVMSG);
}
