/* SPDX-License-Identifier: Apache-2.0 */
/* Loading and reporting the enforcement tiers: `execgate load`, `unload`,
 * `probe` and `status`, and what execgated does at start-up and on
 * SIGHUP. These act on the pin dir (the maps and programs the worker
 * handle of execgate.h opens), not on a handle. Plain C types only. */
#ifndef EXECGATE_ADMIN_H
#define EXECGATE_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <execgate/sizes.h>

#ifdef __cplusplus
extern "C" {
#endif

/* -EPERM with err when this process is not in the initial PID and time
 * namespaces, where /proc numbers match what BPF reads: call it before
 * eg_load. */
int eg_namespaces_check(char *err, size_t err_size);

/* Probes which tiers the kernel offers, keeps the result in
 * <state_dir>/probe, then loads, attaches and pins each offered tier at
 * pin_dir (adopting what is pinned already). cgroup: the cgroup v2
 * directory for the cgroup programs (NULL: the cgroup v2 root). require:
 * NULL, "cgroup", "lsm", "tcp" or "full". 0, or -EOPNOTSUPP (a required
 * tier is not offered: nothing loaded), -EINVAL (a bad require word) or
 * another negative errno, with err. */
int eg_load(const char *pin_dir, const char *state_dir, const char *cgroup, const char *require,
	    char *err, size_t err_size);
/* eg_load, with the capacity of the TCP tier's socket tag map
 * (eg_inet_tags: admitted inet sockets open at once, EG_INET_TAGS_MIN..MAX
 * of execgate/sizes.h; 0: the pinned map's, else EG_INET_TAGS_DEFAULT). A larger map costs every
 * admitted connect more (docs/operators.md §2). -EINVAL for a capacity out of range; -EEXIST when
 * the map is pinned with another capacity: it changes only after eg_unload. */
int eg_load_sized(const char *pin_dir, const char *state_dir, const char *cgroup,
		  const char *require, unsigned inet_tags, char *err, size_t err_size);
/* Detaches every program and removes the pins at pin_dir. 0 or a negative
 * errno with err. */
int eg_unload(const char *pin_dir, char *err, size_t err_size);

/* The report `load` prints: what the last load probed (<state_dir>/probe)
 * and what is attached at pin_dir, as text or JSON (schema_version 2). 0,
 * -ENOENT when nothing is loaded, or another negative errno. */
int eg_load_report(const char *pin_dir, const char *state_dir, FILE *out, bool json);
/* Probes now (loads probe programs, attaches one for an instant to a
 * scratch cgroup) and writes the same report; records nothing. */
int eg_probe_write(const char *pin_dir, FILE *out, bool json);

/* Where the cgroup programs are attached, as status judges it. */
enum eg_attach_where {
	EG_ATTACHED_NONE = 0,	    /* no cgroup program attached: nothing to judge */
	EG_ATTACHED_ROOT = 1,	    /* every cgroup program at the cgroup v2 root */
	EG_ATTACHED_BELOW_ROOT = 2, /* at least one below it */
};
#define EG_WARN_CGROUP_NOT_ROOT "cgroup-not-root" /* status's warning code */
/* status's warning code: a part of the loaded state could not be read; the
 * report shows nothing for that part, never a made-up 0 */
#define EG_WARN_STATE_UNREAD "state-unread"
#define EG_ATTACH_PATH_MAX   512
struct eg_attach_info {
	enum eg_attach_where where;
	/* EG_ATTACHED_BELOW_ROOT: the first program below the root */
	char hook[64];
	char cgroup[EG_ATTACH_PATH_MAX];
	char root[EG_ATTACH_PATH_MAX]; /* the cgroup v2 mount point */
};
/* eg_status_write (execgate.h), and where the cgroup programs are
 * attached. out NULL: only attach is filled. */
int eg_status_write_attach(const char *pin_dir, const char *state_dir, FILE *out, bool json,
			   struct eg_attach_info *attach);
/* Where the cgroup programs at pin_dir are attached; writes nothing. */
void eg_attach_read(const char *pin_dir, const char *state_dir, struct eg_attach_info *attach);

/* What the probing process may do itself (setns, sock_diag, pidfd_getfd:
 * the stream revokers' steps). reprobe re-probes them for the calling
 * process and rewrites <state_dir>/probe (who: "execgated pid 123");
 * -ENOENT when there is no probe record of this boot. refusals calls fn
 * for every step the record says was refused, in order. */
int eg_serving_reprobe(const char *state_dir, const char *who, char *err, size_t err_size);
void eg_serving_refusals(const char *state_dir,
			 void (*fn)(const char *step, const char *why, void *ctx), void *ctx);

/* execgate node-key reset: removes the node key and its worker id from the
 * state dir and creates a new key bound to worker_id (required), as
 * eg_node_key_init (execgate.h) would. Verdicts signed before no longer
 * verify against the new node.pub. 0 or a negative errno with err. */
int eg_node_key_reset(const char *state_dir, const char *worker_id, char *pub_path,
		      size_t pub_path_size, char *err, size_t err_size);

/* Enforce and audit (docs/design.md, "Modes: enforce and audit"), switched
 * at run time without reloading anything. sandbox: 16 bytes, or NULL for
 * the global mode. mode: "enforce" or "audit"; for a sandbox also
 * "inherit" (take the global mode). who: logged with the switch (e.g.
 * "uid 0 pid 123 (execgate)"). Takes the writer lock of state_dir. before
 * (may be NULL, at least 8 bytes): the mode it replaced. 0, or -EINVAL (a
 * bad mode word), -ENOENT (nothing loaded, or no record for sandbox) or
 * another negative errno, with err. */
int eg_mode_set(const char *pin_dir, const char *state_dir, const unsigned char *sandbox,
		const char *mode, const char *who, char *before, char *err, size_t err_size);

/* The global mode ("enforce" or "audit", at least 8 bytes), how many
 * times it was switched since the maps were made, and how many sandboxes'
 * records decide in each mode (their own mode, else the global one). Any
 * pointer but mode may be NULL. 0 or a negative errno with err. */
int eg_mode_get(const char *pin_dir, char *mode, unsigned *switches, unsigned *sandboxes_enforce,
		unsigned *sandboxes_audit, char *err, size_t err_size);

/* The would-deny counts (denials audit let through), summed over the CPUs:
 * fn once per non-zero (reason, hook), with their names as status prints
 * them. 0 or a negative errno with err. */
int eg_mode_would_deny(const char *pin_dir,
		       void (*fn)(const char *reason, const char *hook, unsigned long long n,
				  void *ctx),
		       void *ctx, char *err, size_t err_size);

/* The rollout report (docs/operators.md, "Rolling enforcement out"): the
 * would-deny events (EG_EVENT_AUDIT) folded into rows by reason, hook,
 * sandbox, comm and executable, with counts and first/last seen times, at
 * most max_rows of them (0: 4096; more go to one "other" row). Whoever
 * consumes the eg_events ring feeds it: execgated for as long as it runs,
 * or eg_audit_drain. Thread-safe. NULL on ENOMEM or a max_rows over 2^20. */
struct eg_audit;
struct eg_audit *eg_audit_new(size_t max_rows);
void eg_audit_free(struct eg_audit *a);
/* One denial (eg_worker_events_next): folded in when it is an audit
 * event, ignored otherwise (1 folded, 0 ignored). The executable is read
 * from /proc/<pid>/exe now; unknown when the process is gone or its pid
 * was reused since the event. Added in 1.3.0. */
struct eg_denial;
int eg_audit_add_denial(struct eg_audit *a, const struct eg_denial *d);
/* eg_audit_add_denial of one raw eg_events ring record (as the ring hands
 * it, size bytes; ignored when shorter than the kernel's record). The
 * record's layout is not part of this API: a consumer reads denials with
 * eg_worker_events_next and calls eg_audit_add_denial. */
int eg_audit_add(struct eg_audit *a, const void *record, size_t size);
/* Consumes what is pending now in pin_dir's eg_events ring into a (the
 * events are gone for any other reader). The number of records read, or a
 * negative errno with err. */
int eg_audit_drain(struct eg_audit *a, const char *pin_dir, char *err, size_t err_size);
/* A duration "30s", "10m", "2h", "1d" in ns: 0, or -EINVAL. */
int eg_audit_since_parse(const char *text, int64_t *ns);
/* The report (docs/schema/audit.schema.json) as one line of JSON text, to
 * free(): the rows last seen within since (NULL: all), the kernel's
 * would-deny totals and dropped-event count, the global mode. source:
 * "daemon" or "ring"; worker_id may be NULL. 0, or -EINVAL (since is not a
 * duration), -ENOENT (nothing loaded) or another negative errno, with err. */
int eg_audit_report(struct eg_audit *a, const char *pin_dir, const char *since, const char *source,
		    const char *worker_id, char **json, char *err, size_t err_size);
/* Writes a report document (eg_audit_report's, or GET /v1/audit's) as text:
 * one row a line, the caller's bytes escaped. 0, or -EINVAL when json is
 * not a report, with err. */
int eg_audit_print(FILE *f, const char *json, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif
