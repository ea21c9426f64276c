// SPDX-License-Identifier: Apache-2.0
/* The key directory followed (daemon/keys_follow.h): reloads on SIGHUP
 * and on a change its watches report, and the periodic check that finds
 * what no watch can see. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>
#include <execgate/admin.h>
#include "frontend/opts.h"
#include "daemon/daemon.h"
#include "daemon/events.h"
#include "daemon/http.h"
#include "daemon/log.h"
#include "fleet/etcd.h"
#include "fleetd/worker.h"
#include "daemon/keys_follow.h"

/* SIGHUP reloads and flushes the token cache whatever the directory holds
 * (the operator asked for it); a change seen in the key directory reloads
 * only when its keys differ from memory, since this daemon's own key
 * writes (the API's, the fleet's key sets) land there too and are in
 * memory already: flushing again would only make every cached token pay
 * its Ed25519 verify once more. */
void egd_keys_reload(struct egd *d, const char *why, bool always)
{
	char err[EG_ERR_MAX] = "";
	bool changed = true;
	int rc = always ? eg_worker_keys_reload(d->worker, err, sizeof(err))
			: eg_worker_keys_sync(d->worker, &changed, err, sizeof(err));

	if (rc) {
		__atomic_fetch_add(&d->metrics.key_reload_errors, 1, __ATOMIC_RELAXED);
		egd_log(EGD_LOG_ERR, "keys: reload (%s) failed, the previous set stays: %s", why,
			err);
		return;
	}
	__atomic_fetch_add(&d->metrics.key_reloads, 1, __ATOMIC_RELAXED);
	if (changed)
		egd_log(EGD_LOG_INFO, "keys: reloaded (%s), token cache flushed", why);
	else
		egd_log(EGD_LOG_INFO, "keys: reloaded (%s), the same keys, token cache kept", why);
	/* A file that does not load is skipped (not trusted) and named,
	 * one line each. */
	for (char *line = err; *line;) {
		size_t n = strcspn(line, "\n");

		egd_log(EGD_LOG_WARNING, "keys: skipped: %.*s", (int)n, line);
		line += n + (line[n] ? 1 : 0);
	}
}

/* The key directory is followed, not one inode of it: configuration tools
 * replace a directory whole (delete and recreate, or a rename swap), and a
 * Kubernetes Secret volume renames a new "..data" symlink over the old one
 * (the key files are symlinks through it). A watch on the directory alone
 * dies with its inode (IN_IGNORED) and sees nothing after that; so the
 * state dir is watched for the name "keys" too, and the directory's watch
 * is re-armed on the path whenever either says it may name another inode.
 * What no watch can see (a mount over the directory, a swap further up a
 * symlink) the periodic check (KEY_CHECK_MS) finds. */
#define KEYS_DIR_MASK                                                                              \
	(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_ATTRIB |        \
	 IN_DELETE_SELF | IN_MOVE_SELF)
#define STATE_DIR_MASK (IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_ONLYDIR)

/* (Re)arms the directory's watch on whatever inode its path names now. */
void egd_key_watch_arm(struct egd_key_watch *kw)
{
	int wd = inotify_add_watch(kw->fd, kw->dir, KEYS_DIR_MASK);

	if (wd < 0) {
		if (!kw->gone_logged)
			egd_log(EGD_LOG_WARNING,
				"keys: cannot watch %s (%s): following it by its parent and the "
				"periodic check",
				kw->dir, strerror(errno));
		kw->gone_logged = true;
	} else if (kw->gone_logged) {
		egd_log(EGD_LOG_NOTICE, "keys: watching %s again", kw->dir);
		kw->gone_logged = false;
	}
	/* the old inode (renamed away, or a directory a mount hides) */
	if (kw->dir_wd >= 0 && kw->dir_wd != wd)
		inotify_rm_watch(kw->fd, kw->dir_wd);
	kw->dir_wd = wd;
}

int egd_key_watch_open(struct egd_key_watch *kw, const char *state_dir, const char *keys_dir)
{
	kw->dir = keys_dir;
	kw->dir_wd = -1;
	kw->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (kw->fd < 0)
		return -1;
	kw->state_wd = inotify_add_watch(kw->fd, state_dir, STATE_DIR_MASK);
	if (kw->state_wd < 0) {
		close(kw->fd);
		kw->fd = -1;
		return -1;
	}
	egd_key_watch_arm(kw);
	return kw->fd;
}

/* Reads every pending event: EGD_KW_RELOAD when one concerns the keys,
 * EGD_KW_REARM too when the directory's path may now name another inode than
 * the one watched. The state dir's other entries (lock, probe, the fleet's
 * files) concern nothing here. */
int egd_key_watch_read(struct egd_key_watch *kw)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int what = 0;
	ssize_t n;

	while ((n = read(kw->fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			if (ev->mask & IN_Q_OVERFLOW)
				what |= EGD_KW_RELOAD | EGD_KW_REARM;
			else if (ev->wd != kw->state_wd)
				what |= EGD_KW_RELOAD |
					(ev->wd == kw->dir_wd &&
						 (ev->mask &
						  (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED))
					     ? EGD_KW_REARM
					     : 0);
			else if (ev->len && !strcmp(ev->name, "keys"))
				what |= EGD_KW_RELOAD | EGD_KW_REARM;
			p += sizeof(*ev) + ev->len;
		}
	}
	return what;
}

/* The periodic check: the set that loads from the directory against the
 * one held (eg_worker_keys_sync compares them, as their digests would).
 * A difference here is a change no watch reported: logged as a warning
 * with both digests, counted, reloaded, and the watch re-armed, since it
 * may be watching an inode the path no longer names. */
void egd_keys_check(struct egd *d, struct egd_key_watch *kw)
{
	static bool failing;
	char before[EG_KEYS_DIGEST_TEXT_LEN], after[EG_KEYS_DIGEST_TEXT_LEN];
	char err[EG_ERR_MAX] = "";
	bool changed = false;

	eg_worker_keys_digest(d->worker, before);
	if (eg_worker_keys_sync(d->worker, &changed, err, sizeof(err))) {
		if (!failing)
			egd_log(EGD_LOG_ERR,
				"keys: periodic check of %s failed, the set held stays: %s",
				kw->dir, err);
		failing = true;
		return;
	}
	failing = false;
	if (!changed)
		return;
	eg_worker_keys_digest(d->worker, after);
	__atomic_fetch_add(&d->metrics.key_drifts, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&d->metrics.key_reloads, 1, __ATOMIC_RELAXED);
	egd_log(EGD_LOG_WARNING,
		"keys: %s holds other keys than memory and no change was reported: reloaded "
		"(digest %s, was %s), token cache flushed",
		kw->dir, after, before);
	if (kw->fd >= 0)
		egd_key_watch_arm(kw);
}
