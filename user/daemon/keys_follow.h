/* SPDX-License-Identifier: Apache-2.0 */
/* execgated follows its key directory (<state_dir>/keys): SIGHUP and the
 * changes an inotify watch reports reload the set, a periodic check
 * (main.c's serve(), every KEY_CHECK_MS) compares the directory with
 * memory for what no watch can see (keys_follow.c says how). */
#ifndef EXECGATE_DAEMON_KEYS_FOLLOW_H
#define EXECGATE_DAEMON_KEYS_FOLLOW_H

#include <stdbool.h>
#include "daemon/daemon.h"

struct egd_key_watch {
	int fd;
	int state_wd;	  /* <state_dir>, for its entry "keys" */
	int dir_wd;	  /* <state_dir>/keys; -1 while it is not there */
	const char *dir;  /* <state_dir>/keys */
	bool gone_logged; /* the directory's absence is logged once */
};

/* What egd_key_watch_read() found: reload the keys, re-arm the
 * directory's watch. */
enum { EGD_KW_RELOAD = 1, EGD_KW_REARM = 2 };

/* Reloads the key set (why: for the log); always: SIGHUP's reload, which
 * flushes the token cache whatever the directory holds. */
void egd_keys_reload(struct egd *d, const char *why, bool always);
/* The watches on state_dir and keys_dir: the inotify fd, or -1. */
int egd_key_watch_open(struct egd_key_watch *kw, const char *state_dir, const char *keys_dir);
/* (Re)arms the directory's watch on whatever inode its path names now. */
void egd_key_watch_arm(struct egd_key_watch *kw);
/* Every pending event read: EGD_KW_RELOAD and EGD_KW_REARM bits. */
int egd_key_watch_read(struct egd_key_watch *kw);
/* The periodic check of the directory against memory. */
void egd_keys_check(struct egd *d, struct egd_key_watch *kw);

#endif
