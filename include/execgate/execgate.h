/* SPDX-License-Identifier: Apache-2.0 */
/* libexecgate: the worker handle. Everything a front end (the `execgate`
 * CLI, `execgated`, a bridge, a sandbox manager) needs to admit, check,
 * install, retire, forget, list and manage keys on one worker, with the key
 * set, the verified-token cache and the pinned map fds held open between
 * calls. docs/api.md is the manual; pkg-config name `execgate`.
 *
 * Threading: one handle may be used from any number of threads at once.
 *  - admit/check take the key set's read lock; keys_reload/keys_add/
 *    keys_remove take its write lock and flush the token cache.
 *  - Calls on one sandbox (admit, install, retire, forget) are serialised by
 *    a per-sandbox lock stripe inside the handle, so an admit never compares
 *    against a half-installed record. Admits (and revokes) of different
 *    sandboxes run in parallel; the writers (install, retire, forget, the
 *    keys_add/keys_remove/keys_replace and eg_worker_fleet_set) also take
 *    one writer lock per handle, so they run one at a time whatever their
 *    sandbox: an install waits for another sandbox's stream cut.
 *  - Writers in other processes (a second handle, the CLI) are serialised
 *    with this one by flock(<state_dir>/lock), taken per write call, never
 *    held between calls.
 *  - eg_worker_close() must not race any other call on the same handle.
 *
 * Errors: functions return 0 or a negative errno, and write a one-line
 * message naming the object and the reason into err (may be NULL).
 *
 * Reloads: every call that reads or writes the pinned maps first checks
 * that the pins at pin_dir are still the ones the handle opened (one
 * fstat() of pin_dir, held open; see eg_worker_refresh). After `execgate unload` and a
 * new `execgate load` it reopens the new pins and answers from them; while
 * nothing is loaded it fails with -ENOLINK (err: "pin dir ...: not loaded
 * ..."), and never answers from maps the kernel no longer uses. */
#ifndef EXECGATE_EXECGATE_H
#define EXECGATE_EXECGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <execgate/sizes.h>
#include <execgate/types.h>
#include <execgate/verdict.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the header: the major is the soname's, the minor moves
 * with every added call, the newest heading of docs/CHANGELOG.md names it
 * (tests/unit/test_version.c checks all four agree). */
#define EXECGATE_VERSION_MAJOR 1
#define EXECGATE_VERSION_MINOR 3
#define EXECGATE_VERSION_PATCH 0
#define EXECGATE_VERSION       "1.3.0"

/* What this library was built as (may differ from the header a caller
 * compiled against). */
const char *eg_version(void);

/* The library's messages, libbpf's included, go to stderr up to a level:
 * EG_LOG_INFO by default, EG_LOG_DEBUG for a front end's -v/--verbose
 * (values are syslog priorities). */
enum eg_log_level {
	EG_LOG_WARN = 4,
	EG_LOG_INFO = 6,
	EG_LOG_DEBUG = 7,
};
void eg_log_set_level(enum eg_log_level level);
/* Sends the library's messages (libbpf's included) to fn instead of
 * stderr: a program with a log of its own (execgated's journal lines) gets
 * them with its prefix and levels. fn sees each message that passes the
 * level, whole (one or more lines, as formatted, usually ending in a
 * newline), from whichever thread logged it; it must not call back into
 * the library. NULL restores stderr. Set it before other threads log. */
typedef void (*eg_log_sink_fn)(enum eg_log_level level, const char *msg, void *ctx);
void eg_log_set_sink(eg_log_sink_fn fn, void *ctx);

#define EG_WORKER_DEFAULT_PIN_DIR   "/sys/fs/bpf/execgate"
#define EG_WORKER_DEFAULT_STATE_DIR "/var/lib/execgate"
#define EG_ERR_MAX		    768 /* big enough for every message */

struct eg_worker;

struct eg_worker_config {
	const char *pin_dir;	     /* NULL: EG_WORKER_DEFAULT_PIN_DIR */
	const char *state_dir;	     /* NULL: EG_WORKER_DEFAULT_STATE_DIR */
	size_t token_cache_capacity; /* 0: 4096 entries; rounded up to a power of two */
	bool skip_namespace_check;   /* tests only: do not require the initial PID/time ns */
	/* This worker's id, as the control plane names it (UUID text), for
	 * signed verdicts. NULL: <state_dir>/node.worker, written by
	 * eg_node_key_init; without either, verdicts are not signed. */
	const char *worker_id;
};

/* Opens the pinned maps and loads <state_dir>/keys. -ENOENT when nothing
 * is loaded at pin_dir (err says "not loaded"). A key file that does not
 * load is skipped, its key not trusted, and named by
 * eg_worker_keys_warnings; an unreadable key directory fails the open. */
int eg_worker_open(const struct eg_worker_config *cfg, struct eg_worker **out, char *err,
		   size_t err_size);
void eg_worker_close(struct eg_worker *w);
const char *eg_worker_pin_dir(const struct eg_worker *w);
const char *eg_worker_state_dir(const struct eg_worker *w);

/* --- admission -------------------------------------------------------------- */

/* Who the grant is for. pidfd >= 0 wins (e.g. from SO_PEERPIDFD): the
 * identity is read for the process it names and confirmed through it;
 * otherwise pid is opened with pidfd_open() first. */
struct eg_subject {
	pid_t pid;
	int pidfd; /* -1 when not known */
	/* An identity read before with eg_worker_identify for this pidfd (a
	 * server reads its peer once per connection): admit then only checks
	 * that the pidfd is still alive. NULL: read it now. */
	const struct eg_process *known;
};

/* The identity BPF will compare for who: (tgid, start time, executable
 * dev+inode), read from /proc and confirmed through the pidfd. If the
 * process exec()s later, a grant for the identity read before names a
 * binary it no longer runs, and the kernel refuses it: reuse fails closed. */
int eg_worker_identify(const struct eg_subject *who, struct eg_process *out, char *err,
		       size_t err_size);

struct eg_admit_args {
	const char *token_text; /* base64url text form, or NULL to use token/len */
	const uint8_t *token;	/* binary form */
	size_t token_len;
	struct eg_request req; /* scope, port/proto, open kind */
	uint64_t now_unix;     /* 0: the real clock */
};

struct eg_verdict_result {
	struct eg_decision d;
	bool cache_hit; /* the signature check was served by the token cache */
	bool decoded;	/* the token decoded: the cap_* fields are its contents */
	uint8_t cap_sandbox[EG_ID_BYTES];
	uint8_t cap_token_id[EG_ID_BYTES];
	uint8_t cap_worker[EG_ID_BYTES];
	uint64_t cap_generation;
	uint32_t cap_activation;
	uint32_t cap_scope;
	uint64_t cap_expiry; /* unix seconds */
	bool had_record;
	struct eg_runtime_record record;
	bool granted; /* admit only: the grant was written */
	struct eg_grant_info grant;
	struct eg_process subject; /* admit only: who the grant is for */
	/* refresh-route and deny of a token that decoded, when the worker has
	 * a node key and a worker id: the verdict signed by the node key,
	 * base64url (docs/capability.md "Signed verdicts"); "" otherwise. */
	char signed_verdict[EG_SIGNED_VERDICT_TEXT_MAX];
};

/* Decode, verify (or token-cache hit), compare against the installed
 * record; on Allow write a grant for the subject at the record's epoch
 * that dies with the token. Returns 0 with the verdict in res (a Deny is a
 * 0 return), or a negative errno when no verdict could be reached (the
 * subject is gone: -ESRCH; a thread id: -EINVAL, err says "is a thread, not
 * a process"), the grant could not be written (-ENOSPC: grants map full
 * even after dropping dead grants) or the record's substrate is above 255
 * (-ERANGE: a map edited behind the library; never compared narrowed). */
int eg_worker_admit(struct eg_worker *w, const struct eg_subject *who,
		    const struct eg_admit_args *a, struct eg_verdict_result *res, char *err,
		    size_t err_size);
/* The same verdict, without a grant and without reading any process. */
int eg_worker_check(struct eg_worker *w, const struct eg_admit_args *a,
		    struct eg_verdict_result *res, char *err, size_t err_size);
/* Deletes every grant of tgid pid for sandbox. -ENOENT when there was none. */
int eg_worker_revoke(struct eg_worker *w, pid_t pid, const uint8_t sandbox[EG_ID_BYTES],
		     unsigned *removed, char *err, size_t err_size);

/* --- runtime records -------------------------------------------------------- */

struct eg_install_spec {
	uint8_t sandbox[EG_ID_BYTES];
	uint8_t worker[EG_ID_BYTES];
	uint8_t pod_uid[EG_ID_BYTES]; /* zero unless substrate is firecracker-k8s */
	/* 1 firecracker-k8s, 2 firecracker-host. 8 bits, as the library's
	 * own identity; eg_runtime_record's is 32. Both widths are frozen
	 * until the next soname (docs/api.md, "ABI stability"). */
	uint8_t substrate;
	uint64_t generation;
	uint32_t activation;
	pid_t bridge_pid;
	pid_t vmm_pid; /* 0: none */
	const char *bridge_sockets[EG_WORKER_MAX_ENDPOINTS];
	size_t n_bridge_sockets;
	const char *vmm_sockets[EG_WORKER_MAX_ENDPOINTS];
	size_t n_vmm_sockets;
	struct eg_vsock_addr vsock[EG_WORKER_MAX_ENDPOINTS];
	size_t n_vsock;
	struct eg_service_port ports[EG_RECORD_MAX_PORTS];
	size_t n_ports;
	/* The guest's ServicePort addresses (TCP tier): connects to them from
	 * the attached cgroup need a ServicePort grant. */
	struct eg_inet_addr service_addrs[EG_WORKER_MAX_ENDPOINTS];
	size_t n_service_addrs;
};

enum eg_install_outcome {
	EG_INSTALLED_NEW = 0,	      /* no record before: epoch 1 */
	EG_INSTALLED_REPLACED = 1,    /* newer generation: epoch moved */
	EG_INSTALLED_REACTIVATED = 2, /* record was retired: epoch moved */
	EG_INSTALLED_ACTIVATION = 3,  /* same generation, newer attempt: epoch kept */
	EG_INSTALLED_UNCHANGED = 4,   /* identical: idempotent, endpoints ensured */
};

/* Established streams of a replaced or retired epoch, cut before install or
 * retire returned (docs/operators.md, "Stream revocation"). One member per
 * kind the library reports; the revokers' own per-kind table stays inside
 * the library and is folded into this struct when a call returns. */
struct eg_stream_cuts {
	unsigned unix_cut;	   /* Unix streams shut down, both directions */
	unsigned unix_unreachable; /* stale Unix sockets whose holder could not be reached */
	unsigned tcp_cut, tcp_unreachable;
	const char *unix_method; /* "iter/task_file", "procfs"; NULL: no cut ran */
	const char *tcp_method;
	/* 0, or the first revoker's negative errno: a step failed (setns,
	 * socket, pidfd_getfd, a thread) or a stale stream was left running.
	 * The record change stands; the caller must treat the operation as
	 * failed (the CLI exits 8, the API answers 500). */
	int error;
	char error_text[256];
	int unix_error, tcp_error; /* each kind's negative errno, or 0 */
	/* Audit (the sandbox's effective mode at the revocation, docs/
	 * design.md §19): the stale streams of the sandbox the revokers
	 * found and left running, Unix and TCP together; the *_cut counts
	 * are then 0 for it. Added in 1.2.0 in what was the struct's tail
	 * padding: size and every other offset unchanged. */
	unsigned would_cut;
};

struct eg_install_report {
	enum eg_install_outcome outcome;
	const char *outcome_name; /* "new", "replaced", ... */
	bool had_before;
	struct eg_runtime_record before, after;
	unsigned endpoints_added, endpoints_claimed, inodes, grants_dropped;
	/* when the epoch moved, or when a writer killed between its epoch
	 * move and its cut left that cut pending (record.cut_pending): an
	 * `unchanged` install finishes it and counts it here */
	struct eg_stream_cuts streams;
	/* Endpoints installed that no tier loaded on this kernel enforces
	 * (docs/api.md, "Install warnings"): the install stands, but connects
	 * to them are not checked. code: "vsock-not-enforced",
	 * "unix-not-enforced", "tcp-not-enforced", "ports-without-service-addrs". */
	size_t n_warnings;
	struct eg_install_warning {
		const char *code;
		char message[256];
	} warnings[4];
};

/* 0, or -ESTALE (older than what is installed: err names both), -EEXIST
 * (an endpoint belongs to another active sandbox), -ESRCH/-EINVAL (a
 * process could not be identified, a bad path), -ENOSPC (a new sandbox and
 * eg_records holds EG_MAX_SANDBOXES already). After 1.2.0 the install
 * rule (docs/fleet.md, "The install rule") is the library's, for every
 * caller: -EXDEV when spec->worker is not this worker's id (the config's
 * worker_id, else <state_dir>/node.worker; not checked when neither
 * exists), and, while the fleet is on (eg_worker_fleet_set), -ENOMSG when
 * the signed selection in force for the sandbox does not name exactly
 * this execution or none has arrived. Nothing is written unless every
 * check passed; the record is published before its endpoints. */
int eg_worker_install(struct eg_worker *w, const struct eg_install_spec *spec,
		      struct eg_install_report *rep, char *err, size_t err_size);
/* eg_worker_install that also sets the sandbox's own mode in the same
 * record write (docs/design.md, "Modes"): "enforce", "audit", "inherit"
 * (take the global mode), or NULL to keep the record's (a new record
 * inherits). -EINVAL for another word. */
int eg_worker_install_mode(struct eg_worker *w, const struct eg_install_spec *spec,
			   const char *mode, struct eg_install_report *rep, char *err,
			   size_t err_size);
/* Whether this state dir takes part in the fleet (execgated with
 * etcd_endpoints): on writes <state_dir>/fleet/on, naming this worker's
 * id (-EINVAL when the handle knows none), off removes it. While it is
 * on, every install through the library must match the selection stored
 * in <state_dir>/fleet/selections (see eg_worker_install). Added in
 * a release after 1.2.0. */
int eg_worker_fleet_set(struct eg_worker *w, bool on, char *err, size_t err_size);
/* 0 (also when already retired), -ENOENT without a record. */
int eg_worker_retire(struct eg_worker *w, const uint8_t sandbox[EG_ID_BYTES],
		     struct eg_runtime_record *after, char *err, size_t err_size);
/* eg_worker_retire, and what it cut (streams may be NULL; zero when the
 * record was already retired, unless a retire killed before its cut left it
 * pending: this call finishes and counts it). */
int eg_worker_retire_report(struct eg_worker *w, const uint8_t sandbox[EG_ID_BYTES],
			    struct eg_runtime_record *after, struct eg_stream_cuts *streams,
			    char *err, size_t err_size);
/* Deletes a RETIRED record, its endpoints and its grants. -ENOENT without a
 * record, -EBUSY when the record is still active (retire it first). */
int eg_worker_forget(struct eg_worker *w, const uint8_t sandbox[EG_ID_BYTES], unsigned *endpoints,
		     char *err, size_t err_size);
/* eg_worker_forget, and the streams it cut first when a retire killed
 * before its cut left that cut pending (streams may be NULL). When that cut
 * fails nothing is deleted: the error, err naming the revoker. */
int eg_worker_forget_report(struct eg_worker *w, const uint8_t sandbox[EG_ID_BYTES],
			    unsigned *endpoints, struct eg_stream_cuts *streams, char *err,
			    size_t err_size);

/* A stream cut that a writer killed between its epoch move and its cut
 * left pending, finished by eg_worker_finish_cuts. */
struct eg_cut_finished {
	uint8_t sandbox[EG_ID_BYTES];
	uint64_t epoch; /* the record's epoch: streams below it were cut */
	bool retired;	/* every stream of the sandbox was cut */
	struct eg_stream_cuts streams;
};
/* Finishes every pending stream cut in the maps (docs/operators.md, "Crash
 * recovery"): the daemon runs it at start-up and the CLI when it opens the
 * worker. skip (may be NULL): a sandbox the caller's own install, retire or
 * forget is about to finish and report. fn (may be NULL) sees each one,
 * failed ones too (streams.error). Returns how many were finished, or the
 * first negative errno (err set): a cut that failed stays pending for the
 * next writer. */
int eg_worker_finish_cuts(struct eg_worker *w, const uint8_t *skip,
			  void (*fn)(const struct eg_cut_finished *cut, void *ctx), void *ctx,
			  char *err, size_t err_size);

struct eg_sandbox_info {
	struct eg_runtime_record record;
	unsigned n_endpoints; /* paths, vsock addresses and inodes pointing at it */
	unsigned n_grants;
	/* Its ServicePort guest addresses (TCP tier), up to
	 * EG_WORKER_MAX_ENDPOINTS of them. */
	struct eg_inet_addr service_addrs[EG_WORKER_MAX_ENDPOINTS];
	size_t n_service_addrs;
};
/* The record of sandbox alone: one map lookup, where eg_worker_show also
 * walks the endpoint and grant maps to count. -ENOENT when there is none. */
int eg_worker_record(struct eg_worker *w, const uint8_t sandbox[EG_ID_BYTES],
		     struct eg_runtime_record *out, char *err, size_t err_size);
/* The mode the kernel decides sandbox's connections in, as the hooks read
 * it: the sandbox's own, else the global one (also when the sandbox has no
 * record). "enforce" or "audit" into mode (8 bytes are enough). 0 or a
 * negative errno with err. */
int eg_worker_mode(struct eg_worker *w, const uint8_t sandbox[EG_ID_BYTES], char *mode,
		   size_t mode_size, char *err, size_t err_size);
/* -ENOENT when the sandbox has no record. */
int eg_worker_show(struct eg_worker *w, const uint8_t sandbox[EG_ID_BYTES],
		   struct eg_sandbox_info *out, char *err, size_t err_size);
/* The ServicePort addresses registered for sandbox (install
 * --service-addr, at most EG_WORKER_MAX_ENDPOINTS): *n of them into out.
 * 0 (also when there are none) or a negative errno. */
int eg_worker_service_addrs(struct eg_worker *w, const uint8_t sandbox[EG_ID_BYTES],
			    struct eg_inet_addr *out, size_t max, size_t *n, char *err,
			    size_t err_size);
/* Calls fn for every record (order unspecified); fn returns nonzero to
 * stop, which is returned. */
int eg_worker_list(struct eg_worker *w, int (*fn)(const struct eg_runtime_record *rec, void *ctx),
		   void *ctx, char *err, size_t err_size);

/* --- verification keys ------------------------------------------------------ */

/* Key changes are transactions over <state_dir>/keys and the set in
 * memory: after every return, success or failure, memory holds exactly
 * the keys that load from the directory. A file that does not load (a
 * malformed neighbour) is skipped, its key not trusted; on success err
 * holds one line per such file ("key file PATH: NAME: DETAIL", "" when
 * none), which eg_worker_keys_warnings also returns until the next load.
 *
 * Adds a public key file (typed key-file form, docs/capability.md). 0 when
 * added, 1 when that key was already present (idempotent), -EINVAL with
 * the reason (a secret key, CRLF, wrong length, ...). When the key cannot
 * be loaded once stored (the set is full), the file is removed again and
 * -EINVAL says why. */
int eg_worker_keys_add(struct eg_worker *w, const char *file, char kid[EG_KID_TEXT_LEN], char *err,
		       size_t err_size);
/* The same, from a key file's contents (PUT /v1/keys/{kid}); when
 * expect_kid is non-NULL the key must have that id. */
int eg_worker_keys_add_text(struct eg_worker *w, const char *text, size_t len,
			    const char *expect_kid, char kid[EG_KID_TEXT_LEN], char *err,
			    size_t err_size);
/* Withdraws a key: -ENOENT when neither memory nor the directory has it.
 * The key leaves memory (and the token cache) whatever else happens; when
 * its file cannot be removed, the error says so (the key would be trusted
 * again at the next reload). */
int eg_worker_keys_remove(struct eg_worker *w, const char *kid, char *err, size_t err_size);
/* Re-reads <state_dir>/keys and flushes the cache; -errno (and the previous
 * set stays) only when the directory cannot be read. */
int eg_worker_keys_reload(struct eg_worker *w, char *err, size_t err_size);
/* eg_worker_keys_reload, but the set is swapped in and the cache flushed
 * only when the directory holds other keys than memory (*changed says so);
 * the warnings of files that do not load are updated either way. For a
 * watcher of the directory: a change written through this handle is in
 * memory already, and re-verifying every cached token for it buys nothing. */
int eg_worker_keys_sync(struct eg_worker *w, bool *changed, char *err, size_t err_size);
/* Replaces the whole key set with exactly the n public keys of pks (1 to
 * 64, each passing the key-set loader's checks), as one transaction: the
 * key files of <state_dir>/keys that are not among them go first, then the
 * missing ones are written, then the set in memory is swapped whole and
 * the token cache flushed, so a key not in pks verifies nothing from the
 * moment this returns, success or failure. version is the key set's
 * version (the fleet's signed key set, docs/fleet.md): it must be higher
 * than the one applied before (-ESTALE otherwise, nothing changes), and is
 * persisted in <state_dir>/keyset.version once the directory holds
 * exactly pks. -EINVAL for a bad key or count (nothing changes). */
int eg_worker_keys_replace(struct eg_worker *w, const uint8_t (*pks)[32], size_t n,
			   uint64_t version, char *err, size_t err_size);
/* The version eg_worker_keys_replace applied last (0: none), from
 * <state_dir>/keyset.version. */
int eg_worker_keys_version(struct eg_worker *w, uint64_t *version, char *err, size_t err_size);
/* The key files the last load skipped, one line each, into buf (cut to
 * size); returns the full length, 0 when none. */
size_t eg_worker_keys_warnings(struct eg_worker *w, char *buf, size_t size);
/* Calls fn for each key held; fn returns nonzero to stop. */
int eg_worker_keys_list(struct eg_worker *w,
			int (*fn)(const char *kid, const uint8_t pk[32], void *ctx), void *ctx);

/* The key-set digest's text: 64 lowercase hex digits and the NUL. */
#define EG_KEYS_DIGEST_TEXT_LEN 65
/* The digest of the key set held (docs/api.md, "Key-set digest":
 * BLAKE2b-256 of `execgate keys list | sort`) into digest, and how many
 * keys it covers, both of one set. After a key change through this handle
 * it is the digest of what loads from <state_dir>/keys; execgated shows
 * its own in GET /v1/keys, GET /v1/status and /metrics, so `execgate keys`
 * can tell whether the daemon took a change. */
size_t eg_worker_keys_digest(struct eg_worker *w, char digest[EG_KEYS_DIGEST_TEXT_LEN]);

/* --- node key and signed verdicts ------------------------------------------ */

/* Creates the worker's node key in state_dir if missing (node.seed 0600,
 * node.pub 0644, typed key-file form), and with worker_id (UUID text, may
 * be NULL) records the worker's id in node.worker. Idempotent: an existing
 * key is kept (*created false); a different worker id than the one
 * recorded is refused (-EEXIST). pub_path gets the public key file. */
int eg_node_key_init(const char *state_dir, const char *worker_id, char *pub_path,
		     size_t pub_path_size, bool *created, char *err, size_t err_size);

/* A signed verdict, decoded. */
struct eg_verdict_claim {
	enum eg_verdict verdict;
	enum eg_reason reason;
	bool has_record;
	char node_key_id[EG_KID_TEXT_LEN];
	uint8_t token_id[EG_ID_BYTES];
	uint8_t sandbox[EG_ID_BYTES];
	uint8_t worker[EG_ID_BYTES];
	uint64_t generation;
	uint32_t activation;
	uint64_t issued_at; /* unix seconds */
};

/* Verifies signed-verdict text against a node public key file (typed
 * form). 0 when the signature is valid; -EBADMSG (err names the decoder's
 * reason: bad-length, bad-signature, wrong-key, ...) or -EINVAL (the key
 * file) otherwise. out is written only on 0. */
int eg_verdict_verify(const char *node_pub_file, const char *text, struct eg_verdict_claim *out,
		      char *err, size_t err_size);

/* --- observation ------------------------------------------------------------ */

struct eg_worker_stats {
	uint64_t cache_hits, cache_misses;
	size_t cache_entries, cache_capacity;
	uint64_t keyset_generation;
	size_t keys;
};
void eg_worker_stats(struct eg_worker *w, struct eg_worker_stats *out);

/* The kernel's per-reason verdict counters, summed over the CPUs: out[i]
 * counts kernel reason i (the numbers of `execgate status` and of the
 * events' "reason"; append only). Fills min(max, the kernel's count) and
 * returns how many reasons the kernel has, or a negative errno. */
int eg_worker_counters(struct eg_worker *w, uint64_t *out, size_t max);

struct eg_map_fill {
	const char *name; /* pin name, e.g. "eg_grants" */
	unsigned entries, max_entries;
};
/* Fills up to max entries for the hash maps; returns how many. */
size_t eg_worker_map_fill(struct eg_worker *w, struct eg_map_fill *out, size_t max);

/* --- denials ---------------------------------------------------------------- */

/* Where a denied connect or message was going. */
enum eg_denial_dest {
	EG_DENIAL_DEST_NONE = 0,  /* none of the below (a stream's message) */
	EG_DENIAL_DEST_UNIX = 1,  /* path */
	EG_DENIAL_DEST_VSOCK = 2, /* vsock */
	EG_DENIAL_DEST_INET = 3,  /* inet, inet_port, inet_proto (TCP tier) */
};

/* One denial the kernel made, or (audit) would have made: a record of the
 * pinned eg_events ring buffer, in the library's own types. Added in
 * 1.3.0. */
struct eg_denial {
	uint64_t boottime_ns; /* when the hook decided, CLOCK_BOOTTIME */
	int64_t realtime_ns;  /* the same instant in CLOCK_REALTIME, as read */
	uint32_t pid;	      /* the caller's tgid, initial PID namespace */
	uint32_t tid;
	char comm[EG_COMM_LEN + 1]; /* the caller's comm: its bytes, NUL terminated */
	/* The kernel reason (eg_kreason_name: "deny-no-grant"), numbered as
	 * eg_worker_counters counts them, and the hook (eg_hook_name). */
	uint32_t reason;
	uint32_t hook;
	bool audit; /* audit mode let it through (docs/design.md, "Modes") */
	uint8_t sandbox[EG_ID_BYTES];
	uint64_t epoch; /* the record's epoch the decision saw */
	enum eg_denial_dest dest;
	/* UNIX: the endpoint's path, the bytes passed to connect(), NUL
	 * padded; always NUL terminated. "" otherwise. */
	char path[EG_UNIX_PATH_MAX + 1];
	struct eg_vsock_addr vsock; /* VSOCK, else zero */
	struct eg_inet_addr inet;   /* INET: the guest address asked for, else family 0 */
	uint16_t inet_port;	    /* INET: host byte order */
	uint8_t inet_proto;	    /* INET: 6 tcp, 17 udp */
};

/* Takes the next denial from the worker's eg_events ring buffer into *out:
 * exactly one, the rest stay in the ring for the next call. Waits up to
 * timeout_ms for one (0: only what is pending now; -1: until one comes).
 * Returns 1 with *out, 0 when none came in time, -EINTR when a signal
 * interrupted the wait, -ENOLINK when nothing is loaded at pin_dir, or
 * another negative errno. A ring buffer has one read position, shared by
 * every reader of the pinned map: run one consumer per worker (execgated
 * is it while it runs) and fan the denials out from there. Calls on one
 * handle are serialised. After `execgate unload` and a new load it reads
 * the new ring from the next call on (a wait in progress ends on the old
 * one). Added in 1.3.0. */
int eg_worker_events_next(struct eg_worker *w, struct eg_denial *out, int timeout_ms);

/* fd of the pinned eg_events ring buffer, owned by the handle: for a
 * program that polls it beside other fds (it turns readable when a record
 * is pending) and then takes the records with eg_worker_events_next. Its
 * records are the kernel's layout, which is not part of this API: read
 * them only through eg_worker_events_next. The fd is closed when the
 * handle reopens its pins (another thread's call may do so at any time):
 * a threaded program uses eg_worker_events_open instead. */
int eg_worker_events_fd(struct eg_worker *w);
/* A new fd (the caller closes it) of the eg_events map the handle holds now,
 * and in *generation (may be NULL) the pins generation it belongs to, to
 * poll as eg_worker_events_fd's. -ENOLINK when nothing is loaded. */
int eg_worker_events_open(struct eg_worker *w, uint64_t *generation, char *err, size_t err_size);

/* Checks the pins now: 0 when the handle holds the maps pinned at pin_dir
 * (reopened first if they were replaced since), -ENOLINK when nothing is
 * loaded there (the handle has closed the old maps; err says so), or another
 * negative errno with err. *generation (may be NULL) counts the changes the
 * handle has seen, 0 at open and +1 per reopen or unload seen: a caller
 * that keeps something made from the maps (a ring buffer consumer) rebuilds
 * it when the number moves. Every map call does this check itself; calling
 * it on a timer only makes a change seen (and logged) without a request. */
int eg_worker_refresh(struct eg_worker *w, uint64_t *generation, char *err, size_t err_size);

/* `execgate status` for pin_dir: tiers, programs, guarantees, counters and
 * map fill, as text or as JSON (schema_version 2, docs/schema/status.schema.json). No side effects:
 * it reads pins and the probe results `load` recorded. Returns 0 when something is loaded, -ENOENT
 * when nothing is. */
int eg_status_write(const char *pin_dir, const char *state_dir, FILE *out, bool json);

/* Text forms used across the API, the CLI and the daemon (EG_UUID_TEXT_LEN:
 * sizes.h). */
int eg_uuid_from_text(const char *text, uint8_t out[EG_ID_BYTES]); /* 0 or -EINVAL */
void eg_uuid_to_text(const uint8_t id[EG_ID_BYTES], char out[EG_UUID_TEXT_LEN]);

#ifdef __cplusplus
}
#endif

#endif
