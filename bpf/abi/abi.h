/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/* The one kernel/user ABI of execgate: every pinned map's key and value, the
 * event record and the reason codes. Included by bpf/ (after vmlinux.h) and by
 * user/. Widths are explicit, padding is explicit, sizes are asserted.
 *
 * Torn-read rule (docs/design.md): every map value that BPF reads as a whole
 * starts with a bpf_spin_lock. Userspace writes those values only with
 * BPF_F_LOCK, which updates an existing hash element in place under the lock;
 * BPF copies the value to its stack under the same lock. Values also carry
 * their own key (or its identifying part) so that a reader that raced with a
 * delete and a re-use of the element for another key notices and fails
 * closed. */
#ifndef EXECGATE_ABI_H
#define EXECGATE_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#include <linux/bpf.h>
#endif
#include <execgate/sizes.h>

/* EG_UNIX_PATH_MAX (sizeof(sockaddr_un.sun_path)) and EG_COMM_LEN: sizes.h. */
#define EG_USER_HZ	 100 /* /proc/PID/stat start_time unit */
#define EG_NSEC_PER_TICK (1000000000ULL / EG_USER_HZ)

#define EG_MAX_SANDBOXES 16384
#define EG_MAX_ENDPOINTS 131072
#define EG_MAX_GRANTS	 131072
#define EG_EVENTS_BYTES	 (256 * 1024)

#ifndef EG_STATIC_ASSERT
#define EG_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

/* A process as the kernel sees it. start_boottime_ns is the group leader's
 * task->start_boottime, ns of CLOCK_BOOTTIME, unrounded: BPF reads it from
 * the current task, the loader through a task iterator (loader/process/task_start.c),
 * so a pid reused even within one 10 ms tick is another process
 * (/proc/PID/stat field 22 has the same value in USER_HZ ticks). exe_dev is the kernel's s_dev
 * encoding (MAJOR << 20 | MINOR), not userspace st_dev. tgid is in the initial PID namespace. */
struct eg_proc_id {
	__u32 tgid;
	__u32 exe_dev;
	__u64 start_boottime_ns;
	__u64 exe_ino;
};
EG_STATIC_ASSERT(sizeof(struct eg_proc_id) == 24, "eg_proc_id size");

struct eg_sandbox_key {
	__u8 id[EG_ID_BYTES];
};
EG_STATIC_ASSERT(sizeof(struct eg_sandbox_key) == 16, "eg_sandbox_key size");

enum eg_record_state {
	EG_RECORD_ACTIVE = 1,
	/* The sandbox no longer runs here: its endpoints deny everything
	 * until a later install claims them. */
	EG_RECORD_RETIRED = 2,
};

/* map eg_records: sandbox -> current execution. */
struct eg_exec_record {
	struct bpf_spin_lock lock;
	__u32 state;		   /* enum eg_record_state */
	__u8 sandbox[EG_ID_BYTES]; /* == key, checked by readers */
	__u8 worker[EG_ID_BYTES];
	__u8 pod_uid[EG_ID_BYTES];
	__u64 generation;
	__u64 epoch; /* moves on every replacement; streams bind to it */
	__u32 activation;
	__u32 substrate;
	struct eg_proc_id bridge; /* the only process a VMM socket admits */
	struct eg_proc_id vmm;	  /* the expected listener of VMM sockets */
	/* ServicePort profile of the execution, for `execgate admit` (the
	 * record in this map is the loader's only copy). BPF ignores it. */
	__u32 nports;
	/* Nonzero: streams of this sandbox admitted below `epoch` (every
	 * stream of it when RETIRED) may still be open. Set in the same locked
	 * write that moves the epoch, cleared only once every revoker has cut
	 * them (user/loader/revokers/cut_intent.c): a writer killed in between leaves
	 * the intent here, and the next writer finishes the cut. Was `pad`
	 * (always 0), so records of an older loader read as "nothing
	 * pending". BPF ignores it. */
	__u32 cut_pending;
	struct eg_port {
		__u16 port;
		__u8 proto; /* IPPROTO_TCP / IPPROTO_UDP */
		__u8 pad;
	} ports[EG_RECORD_MAX_PORTS];
	/* enum eg_mode of this sandbox's decisions; EG_MODE_INHERIT (0)
	 * takes the global one (eg_mode). Read by BPF under the lock. */
	__u32 mode;
	__u32 mode_pad;
};
EG_STATIC_ASSERT(sizeof(struct eg_exec_record) == 176, "eg_exec_record size");
/* The record's ports are stored in place: their number is map layout, and
 * the core's and the API's records (sizes.h) hold exactly as many. */
EG_STATIC_ASSERT(sizeof(((struct eg_exec_record *)0)->ports) ==
		     EG_RECORD_MAX_PORTS * sizeof(struct eg_port),
		 "eg_exec_record ports");
EG_STATIC_ASSERT(EG_RECORD_MAX_PORTS == 8, "a new port count is a new map layout");

enum eg_endpoint_role {
	EG_ROLE_BRIDGE = 1, /* the bridge's listener: needs a live grant */
	EG_ROLE_VMM = 2,    /* Firecracker's host-side VSOCK socket: bridge only */
};

/* map eg_endpoints: Unix socket path (NUL padded to 108 bytes, exactly the
 * bytes passed to connect()) -> endpoint. */
struct eg_path_key {
	char path[EG_UNIX_PATH_MAX];
};
EG_STATIC_ASSERT(sizeof(struct eg_path_key) == 108, "eg_path_key size");

struct eg_endpoint {
	struct bpf_spin_lock lock;
	__u32 role; /* enum eg_endpoint_role */
	__u8 sandbox[EG_ID_BYTES];
};
EG_STATIC_ASSERT(sizeof(struct eg_endpoint) == 24, "eg_endpoint size");

/* map eg_path_filter: cheap pre-filter in front of eg_endpoints, so that a
 * connect to an unregistered path costs one small lookup. The key folds the
 * path length and its first and last 8-byte chunks (chunks are aligned at
 * multiples of 8 so BPF can compute them in one pass of constant-offset
 * loads); the value counts how many registered paths share it. A hit only
 * means "look in eg_endpoints". Both u64s are the chunk bytes in memory
 * order, read as a native-endian integer. */
struct eg_path_filter_key {
	__u32 len; /* strnlen(path, 108) */
	__u32 pad;
	__u64 head; /* path bytes [0, min(8, len)), zero padded */
	__u64 tail; /* path bytes [8 * ((len - 1) / 8), len), zero padded; 0 if len == 0 */
};
EG_STATIC_ASSERT(sizeof(struct eg_path_filter_key) == 24, "eg_path_filter_key size");

/* map eg_path_hint: a bitmap in front of eg_path_filter. Most connects on a
 * worker go to unregistered sockets; for them one inlined array load and a
 * bit test replace a hash lookup. Bits are only ever set (a stale bit costs
 * one eg_path_filter lookup, never a wrong verdict), and the loader sets a
 * path's bit only after its eg_endpoints and eg_path_filter entries exist,
 * so a set bit never points at missing state. 2^20 bits: at 100 000
 * registered paths about 9% of unregistered connects take the slow path. */
#define EG_PATH_HINT_BITS_LOG2 20
#define EG_PATH_HINT_WORDS     (1u << (EG_PATH_HINT_BITS_LOG2 - 6)) /* __u64 each */

/* Bit index of a filter key: the loader and BPF must agree bit for bit, so
 * this is the only definition. */
static inline __attribute__((always_inline)) __u32
eg_path_hint_bit(const struct eg_path_filter_key *fk)
{
	__u64 h = (fk->head ^ (fk->tail * 0xc2b2ae3d27d4eb4fULL) ^ fk->len) * 0x9e3779b97f4a7c15ULL;

	return (__u32)(h >> (64 - EG_PATH_HINT_BITS_LOG2));
}

/* map eg_vsock_endpoints (LSM tier): AF_VSOCK destination -> endpoint. */
struct eg_vsock_key {
	__u32 cid;
	__u32 port;
};
EG_STATIC_ASSERT(sizeof(struct eg_vsock_key) == 8, "eg_vsock_key size");

/* map eg_inode_endpoints (LSM tier): bound socket inode -> endpoint, the same
 * whatever path (symlink, relative, bind mount) reached it. */
struct eg_inode_key {
	__u64 ino;
	__u32 dev; /* kernel s_dev encoding */
	__u32 pad;
};
EG_STATIC_ASSERT(sizeof(struct eg_inode_key) == 16, "eg_inode_key size");

/* map eg_grants: (process, sandbox) -> grant, installed by the loader after
 * an Allow. A grant is live iff its epoch is the record's current epoch and
 * expiry_ns (CLOCK_BOOTTIME) has not passed. */
struct eg_grant_key {
	struct eg_proc_id proc;
	__u8 sandbox[EG_ID_BYTES];
};
EG_STATIC_ASSERT(sizeof(struct eg_grant_key) == 40, "eg_grant_key size");

struct eg_grant {
	struct bpf_spin_lock lock;
	__u32 scope;
	struct eg_grant_key key; /* == map key, checked by readers */
	__u64 generation;
	__u64 epoch;
	__u64 expiry_ns; /* bpf_ktime_get_boot_ns() domain */
};
EG_STATIC_ASSERT(sizeof(struct eg_grant) == 72, "eg_grant size");

/* sk_storage eg_sk_tags: the execution a connected socket was admitted to.
 * Written once, when the socket is admitted, and never changed: no lock. */
struct eg_sk_tag {
	__u8 sandbox[EG_ID_BYTES];
	__u64 epoch;
	__u64 generation;
	__u32 activation;
	__u32 role;
};
EG_STATIC_ASSERT(sizeof(struct eg_sk_tag) == 40, "eg_sk_tag size");

/* sk_storage eg_listener_tags (LSM tier): who called listen() on a socket. */
struct eg_listener_tag {
	struct eg_proc_id owner;
};
EG_STATIC_ASSERT(sizeof(struct eg_listener_tag) == 24, "eg_listener_tag size");

/* Verdict reasons, kernel side. Index into struct eg_cpu_counters, and
 * eg_event.reason. Append only: operators' dashboards key on these
 * numbers. */
enum eg_kreason {
	EG_K_ALLOW_UNREGISTERED = 0,
	EG_K_ALLOW_BRIDGE = 1,
	EG_K_ALLOW_GRANT = 2,
	EG_K_DENY_NO_RECORD = 3,     /* guarded endpoint, no record: fail closed */
	EG_K_DENY_INCONSISTENT = 4,  /* record/endpoint disagree or raced a re-use */
	EG_K_DENY_RETIRED = 5,	     /* sandbox retired on this worker */
	EG_K_DENY_NOT_BRIDGE = 6,    /* VMM socket, caller is not the registered bridge */
	EG_K_DENY_NO_GRANT = 7,	     /* bridge socket, caller holds no grant */
	EG_K_DENY_GRANT_EPOCH = 8,   /* grant of a replaced execution */
	EG_K_DENY_GRANT_EXPIRED = 9, /* grant past its expiry */
	EG_K_DENY_LISTENER = 10,     /* listener is not the expected process */
	EG_K_DENY_STREAM_EPOCH = 11, /* I/O on a stream of a replaced execution */
	EG_K_DENY_NO_TASK = 12,	     /* could not read the caller's identity */
	/* Not a verdict: a denial event the ring buffer had no room for
	 * (the verdict itself was counted under its own reason). */
	EG_K_EVENT_DROPPED = 13,
	/* Admitted, but the socket's lease tag could not be created (Unix,
	 * VSOCK: its socket-local storage, an allocation failure or the
	 * socket's net.core.optmem_max used up; TCP/UDP: eg_inet_tags full).
	 * Denied: a stream without its tag would escape the epoch lease and
	 * revocation. */
	EG_K_DENY_NO_TAG = 14,
	EG_K_REASON_COUNT = 15,
};

/* map eg_counters: an ARRAY keyed by CPU number, one struct per possible
 * CPU; a reason's count is the sum over the CPUs. Not a PERCPU_ARRAY: its
 * inlined lookup loads the element's per-CPU pointer and then the value,
 * two dependent cache misses on every connect, where this array is one
 * (the address is a constant plus cpu * 128; bench-kernel's memory-touch
 * rows: ~100 vs ~50 ns over an empty program). A CPU increments only its own slot, without atomics;
 * an increment that is preempted, or interrupted by a hook on the same CPU, can lose one count, as
 * with a per-CPU map. */
#define EG_COUNTER_SLOTS 16   /* >= EG_K_REASON_COUNT; 128 bytes, two cache lines */
#define EG_COUNTER_CPUS	 1024 /* possible CPUs; the loader refuses a host with more */
struct eg_cpu_counters {
	__u64 n[EG_COUNTER_SLOTS]; /* enum eg_kreason -> count on this CPU */
};
EG_STATIC_ASSERT(sizeof(struct eg_cpu_counters) == 128, "eg_cpu_counters size");
EG_STATIC_ASSERT(EG_K_REASON_COUNT <= EG_COUNTER_SLOTS, "a counter slot per reason");

enum eg_hook {
	EG_HOOK_CONNECT_UNIX = 1,
	EG_HOOK_LSM_SOCKET_CONNECT = 2,
	EG_HOOK_LSM_UNIX_STREAM_CONNECT = 3,
	EG_HOOK_LSM_SENDMSG = 4,
	EG_HOOK_LSM_RECVMSG = 5,
};

/* map eg_inet_endpoints (TCP tier, below): guest address -> struct eg_endpoint (role
 * EG_ROLE_SERVICE). addr holds the address in network byte order: 4 bytes
 * for AF_INET (rest zero), 16 for AF_INET6. A v4-mapped v6 address
 * (::ffff:a.b.c.d) is looked up as AF_INET. */
struct eg_inet_key {
	__u32 family; /* AF_INET (2) or AF_INET6 (10) */
	__u32 pad;
	__u8 addr[16];
};
EG_STATIC_ASSERT(sizeof(struct eg_inet_key) == 24, "eg_inet_key size");

/* ring buffer eg_events: one record per denial. */
struct eg_event {
	__u64 ts_ns; /* bpf_ktime_get_boot_ns() */
	__u32 pid;   /* tgid, initial PID namespace */
	__u32 tid;
	__u32 reason; /* enum eg_kreason */
	__u32 hook;   /* enum eg_hook */
	char comm[EG_COMM_LEN];
	__u8 sandbox[EG_ID_BYTES];
	__u64 epoch;
	struct eg_vsock_key vsock;   /* AF_VSOCK destination, else zero */
	char path[EG_UNIX_PATH_MAX]; /* Unix destination, else empty */
	__u16 inet_port;	     /* TCP/UDP destination port (host order), else 0 */
	__u8 inet_proto;	     /* 6 TCP, 17 UDP, else 0 */
	__u8 flags;		     /* EG_EVENT_* (was padding: 0 on older builds) */
	struct eg_inet_key inet;     /* TCP/UDP destination (TCP tier), else family 0 */
};
EG_STATIC_ASSERT(sizeof(struct eg_event) == 208, "eg_event size");

/* eg_event.flags: the hook allowed what it would have denied (audit mode);
 * the reason is the denial's. */
#define EG_EVENT_AUDIT 0x01

/* ---- Modes (docs/design.md, "Modes: enforce and audit") ----
 * map eg_mode: an ARRAY of one struct eg_mode_word, the global mode. A hook
 * reads it once per decision as one aligned 8-byte load; userspace switches
 * it with one 8-byte update. Only EG_MODE_AUDIT audits: every other value
 * (the 0 of a map never written included) enforces. eg_exec_record.mode
 * overrides it for decisions against that record. The word also counts
 * the switches, so mode and count move in the one write. */
enum eg_mode {
	EG_MODE_INHERIT = 0, /* record only: the global mode */
	EG_MODE_ENFORCE = 1,
	EG_MODE_AUDIT = 2,
};

struct eg_mode_word {
	__u32 mode;	/* enum eg_mode */
	__u32 switches; /* global switches since load: written in the same 8 bytes */
};
EG_STATIC_ASSERT(sizeof(struct eg_mode_word) == 8, "eg_mode_word size");

/* ---- The grant clock (docs/design.md §15) ----
 * Grants expire in CLOCK_BOOTTIME, which counts the time the host spent
 * suspended. Reading it costs a clocksource read (~35 ns in a connect hook
 * here); the coarse CLOCK_MONOTONIC costs ~2 ns but stops while suspended.
 * The two differ by the kernel's boot offset, which moves only at resume,
 * when the kernel adds the time asleep. map eg_clock: an ARRAY of one
 * struct eg_clock_word holding that offset, kept by
 * bpf/clock_resume.bpf.c on the power:suspend_resume tracepoint, which the
 * kernel fires at every step of a suspend and a resume; the step that
 * thaws user space comes after every addition, so no process runs on a
 * stale offset. The program computes the offset itself (CLOCK_BOOTTIME
 * read after CLOCK_MONOTONIC: never smaller than the true offset, so a
 * grant never outlives its expiry for it), and the loader runs it once
 * (BPF_PROG_TEST_RUN) after attaching it. The cgroup and tcp tiers' hooks
 * read the word once, one aligned 8-byte load (the LSM programs cannot
 * read the coarse clock; they read CLOCK_BOOTTIME): with EG_CLOCK_KEPT
 * set, now = coarse CLOCK_MONOTONIC
 * + the offset, up to one scheduler tick behind CLOCK_BOOTTIME; without it
 * (the program is not attached: an older loader, a kernel without the
 * tracepoint) the hooks read CLOCK_BOOTTIME itself. */
#define EG_CLOCK_KEPT (1ULL << 63)

struct eg_clock_word {
	__u64 word; /* EG_CLOCK_KEPT | (CLOCK_BOOTTIME - CLOCK_MONOTONIC) ns, or 0 */
};
EG_STATIC_ASSERT(sizeof(struct eg_clock_word) == 8, "eg_clock_word size");

/* ---- The admission cache (docs/design.md §20) ----
 * A process that connects to the same registered Unix path or VSOCK
 * address again, while nothing that decided its first connect has changed,
 * is allowed by one lookup instead of the endpoint, record and grant
 * checks.
 *
 * map eg_admit_cache: an LRU hash, (path hash, tgid, path length) or
 * ((CID << 32 | port), tgid, EG_ADMIT_LEN_VSOCK) -> the allow the full
 * checks made, written on an allowed connect by the programs that decide
 * connects: connect_unix (cgroup tier), and socket_connect (LSM tier:
 * AF_VSOCK, and AF_UNIX paths where the kernel has no connect_unix). An
 * entry is used only when the whole address, the whole caller identity and
 * its generation word match, and its expiry is ahead of the grant clock;
 * anything else is a miss, and a miss runs the full checks.
 *
 * Losing an entry (eviction, a full map) costs one full check and never
 * changes a verdict, so an LRU map is right here, unlike for tags.
 *
 * map eg_admit_gen: EG_ADMIT_STRIPES generation words, mmapable. The
 * loader adds one to the word of a sandbox's stripe (eg_admit_stripe())
 * after every change that can turn an allow of that sandbox into a denial:
 * a record written or removed, an endpoint re-pointed or removed, a grant
 * narrowed or removed. The connect program reads the word before it reads
 * the state it decides on and stores it in the entry; an entry whose word
 * has moved since is stale. Userspace adds with an atomic add on the
 * mapping, so concurrent writers never lose a step. A write that is not
 * the loader's moves no word; EG_ADMIT_TTL_NS bounds how long it goes
 * unseen. */
#define EG_ADMIT_STRIPES_LOG2 12
#define EG_ADMIT_STRIPES      (1u << EG_ADMIT_STRIPES_LOG2)
#define EG_ADMIT_CACHE_SIZE   65536
#define EG_ADMIT_NO_EXPIRY    (~0ULL) /* the bridge at a VMM socket: no grant */
/* An entry lives at most this long, whatever its grant: a map edited
 * behind the loader's back (bpftool, an older execgate still running
 * during an upgrade), which moves no word, is seen by then. */
#define EG_ADMIT_TTL_NS 1000000000ULL

/* The stripe of a sandbox id: the loader and BPF must agree. */
static inline __attribute__((always_inline)) __u32 eg_admit_stripe(const __u8 sandbox[16])
{
#ifdef __bpf__
	const __u64 *w = (const __u64 *)sandbox; /* 8-byte aligned in every ABI struct */
#else
	__u64 w[2]; /* userspace callers pass any buffer */

	__builtin_memcpy(w, sandbox, sizeof(w));
#endif
	__u64 h = (w[0] ^ (w[1] * 0xc2b2ae3d27d4eb4fULL)) * 0x9e3779b97f4a7c15ULL;

	return (__u32)(h >> (64 - EG_ADMIT_STRIPES_LOG2));
}

/* The len of a VSOCK address's key: no path is that long, so a VSOCK key
 * never names a path's entry. */
#define EG_ADMIT_LEN_VSOCK 0xffffffffu

struct eg_admit_key {
	__u64 path_hash; /* a fold of the NUL-padded path, collisions only miss;
			  * AF_VSOCK: CID << 32 | port, exact */
	__u32 tgid;
	__u32 len; /* path length, or EG_ADMIT_LEN_VSOCK */
};
EG_STATIC_ASSERT(sizeof(struct eg_admit_key) == 16, "eg_admit_key size");

struct eg_admit_entry {
	__u64 gen;	 /* eg_admit_gen[eg_admit_stripe(tag.sandbox)] before the checks */
	__u64 expiry_ns; /* grant clock: the grant's expiry or insert + EG_ADMIT_TTL_NS, earlier */
	struct eg_proc_id proc;
	struct eg_sk_tag tag; /* what the socket is tagged with; tag.role is the endpoint's */
	/* NUL padded, as struct eg_path_key; AF_VSOCK: a struct eg_vsock_key,
	 * then zeros */
	char path[EG_UNIX_PATH_MAX];
	__u32 key_len; /* the key's len again: a copy names its kind and length */
};
EG_STATIC_ASSERT(sizeof(struct eg_admit_entry) == 192, "eg_admit_entry size");

/* map eg_would_deny: a PERCPU_ARRAY of __u64, the denials audit mode let
 * through, keyed by EG_WOULD_DENY_KEY(hook, reason); a count is the sum
 * over the CPUs. Only the audit path touches it. */
#define EG_HOOK_SLOTS			16 /* > every enum eg_hook / eg_inet_hook value */
#define EG_WOULD_DENY_KEY(hook, reason) ((hook)*EG_COUNTER_SLOTS + (reason))
#define EG_WOULD_DENY_ENTRIES		(EG_HOOK_SLOTS * EG_COUNTER_SLOTS)

/* ---- TCP / ServicePort tier (bpf/cgroup_inet.bpf.c, bpf/iter_tcp_revoke.bpf.c) ----
 * A guest address registered by `install --service-addr` is an endpoint of
 * role EG_ROLE_SERVICE in eg_inet_endpoints (value: struct eg_endpoint, so
 * the same locked copy reads it). A connect or unconnected sendmsg from the
 * attached cgroup to it needs a live grant in eg_service_grants for that
 * (process, sandbox, port, protocol), written by `admit` after an Allow of a
 * ServicePort capability. Admitted sockets carry an eg_inet_tags entry; a
 * stream whose tag's epoch is no longer its record's is destroyed by the
 * revoker (user/loader/revokers/revoke_tcp.c). Locked values follow the torn-read
 * rule at the top of this file. */
#define EG_ROLE_SERVICE	      3 /* enum eg_endpoint_role: a guest ServicePort address */
#define EG_MAX_INET_ENDPOINTS 16384
#define EG_MAX_SERVICE_GRANTS 131072
#define EG_MAX_INET_NETNS     4096
/* Admitted inet sockets open at once. The capacity is the bucket count,
 * which costs every tag insert its cache misses: 16 384 to 131 072 moved
 * the allowed connect4 from ~455 to ~585 ns (docs/bench/
 * 2026-12-04-allowed-path.md); 65 536 is for "tens of thousands of live
 * streams" on a worker. */
#define EG_MAX_INET_TAGS EG_INET_TAGS_DEFAULT

enum eg_inet_hook {
	EG_HOOK_CONNECT4 = 6, /* enum eg_hook continues here: append only */
	EG_HOOK_CONNECT6 = 7,
	EG_HOOK_SENDMSG4 = 8,
	EG_HOOK_SENDMSG6 = 9,
};

/* map eg_inet_hint: a bitmap in front of eg_inet_endpoints, as eg_path_hint
 * is for paths. Nearly every connect from a gateway's cgroup goes to an
 * unregistered address; one inlined array load and a bit test replace the
 * hash lookup for it. Bits are only ever set, and only after the address's
 * eg_inet_endpoints entry exists: a set bit costs a lookup, never a wrong
 * verdict. 2^18 bits: at 16 384 guest addresses ~6% of unregistered
 * connects take the lookup. */
#define EG_INET_HINT_BITS_LOG2 18
#define EG_INET_HINT_WORDS     (1u << (EG_INET_HINT_BITS_LOG2 - 6)) /* __u64 each */

/* Bit index of a (canonical) key: the loader and BPF must agree. */
static inline __attribute__((always_inline)) __u32 eg_inet_hint_bit(const struct eg_inet_key *k)
{
	const __u64 *w = (const __u64 *)k->addr;
	__u64 h = (w[0] ^ (w[1] * 0xc2b2ae3d27d4eb4fULL) ^ k->family) * 0x9e3779b97f4a7c15ULL;

	return (__u32)(h >> (64 - EG_INET_HINT_BITS_LOG2));
}

/* map eg_service_grants: (process, sandbox, port, protocol) -> grant. Live
 * iff its epoch and generation are the record's and expiry_ns has not
 * passed, as in eg_grants. */
struct eg_service_grant_key {
	struct eg_proc_id proc;
	__u8 sandbox[EG_ID_BYTES];
	__u16 port; /* host byte order */
	__u8 proto; /* IPPROTO_TCP (6) / IPPROTO_UDP (17) */
	__u8 pad[5];
};
EG_STATIC_ASSERT(sizeof(struct eg_service_grant_key) == 48, "eg_service_grant_key size");

struct eg_service_grant {
	struct bpf_spin_lock lock;
	__u32 pad;
	struct eg_service_grant_key key; /* == map key, checked by readers */
	__u64 generation;
	__u64 epoch;
	__u64 expiry_ns; /* bpf_ktime_get_boot_ns() domain */
};
EG_STATIC_ASSERT(sizeof(struct eg_service_grant) == 80, "eg_service_grant size");

enum eg_inet_tag_state {
	EG_INET_CONNECTING = 1,	 /* admitted by connect4/6 */
	EG_INET_ESTABLISHED = 2, /* sockops saw the handshake complete */
	/* sockops saw an established stream to a guest address that no
	 * connect check admitted (a socket made outside the cgroup): its
	 * epoch is 0, so the next revocation cuts it. */
	EG_INET_UNADMITTED = 3,
};

/* map eg_inet_tags, socket cookie -> the execution an inet socket was
 * admitted to. Created whole by the connect check; sockops only moves
 * state; the cgroup sock_release program deletes it when the socket is
 * released. Keyed by SO_COOKIE (bpf_get_socket_cookie()), which the kernel
 * never hands out twice within a boot, so an entry can name no other socket
 * than its own; a preallocated hash insert costs less than creating
 * socket-local storage (docs/bench/2026-12-04-allowed-path.md). A full map
 * denies the connect (EG_K_DENY_NO_TAG); `execgate status` shows its fill. */
struct eg_inet_tag {
	__u8 sandbox[EG_ID_BYTES];
	__u64 epoch;
	__u64 generation;
	__u16 port;
	__u8 proto;
	__u8 state; /* enum eg_inet_tag_state */
	__u32 pad;
};
EG_STATIC_ASSERT(sizeof(struct eg_inet_tag) == 40, "eg_inet_tag size");

/* map eg_inet_netns: network namespace (bpf_get_netns_cookie) -> the last
 * process admitted there. iter/tcp and sock_diag see one namespace each;
 * the revoker visits every namespace listed here (through /proc/<tgid>/ns/net,
 * checked against the cookie). Plain values: each field is written whole. */
struct eg_inet_netns {
	__u32 tgid;
	__u32 pad;
	__u64 last_ns; /* bpf_ktime_get_boot_ns() of the last admitted connect */
};
EG_STATIC_ASSERT(sizeof(struct eg_inet_netns) == 16, "eg_inet_netns size");

#endif
