/* SPDX-License-Identifier: Apache-2.0 */
/* The Unix revoker's parts, one method per file (revoke_unix.c chooses):
 *   revoke_unix_iter.c    the iter/task_file program: adopted from its pin
 *                         or loaded, and read;
 *   revoke_unix_cut.c     cutting what the iterator found, in batches;
 *   revoke_unix_procfs.c  the fallback where the iterator is refused. */
#ifndef EXECGATE_LOADER_REVOKE_UNIX_H
#define EXECGATE_LOADER_REVOKE_UNIX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "loader/revokers/revoke.h"
#include "abi/revoke_abi.h"

struct eg_runtime;

/* A growing array of iterator hits. */
struct eg_unix_hits {
	struct eg_revoke_hit *v;
	size_t n, cap;
};

/* revoke_unix_iter.c. The iterator is cached per process; every call below
 * the lock pair needs the caller to hold it. */
void eg_unix_iter_lock(void);
void eg_unix_iter_unlock(void);
void eg_unix_iter_drop(void);
/* The iterator for rt's eg_sk_tags (tags_fd), adopted from its pin or
 * loaded and pinned: 0 or a negative errno (the kernel refused it). */
int eg_unix_iter_ensure(struct eg_runtime *rt, int tags_fd);
/* Loads the iterator against tags_fd and pins its link at pin (NULL: no
 * pin); the link's fd, or a negative errno. */
int eg_unix_iter_load(int tags_fd, const char *pin);
/* Sets what the pinned program yields: the target's stale sockets, of
 * every process (tgid 0) or of tgid only. */
void eg_unix_iter_target(const struct eg_revoke_target *t);
/* One pass over every process (all = true) or over this process only,
 * appending what it yields to h. */
int eg_unix_iter_read(bool all, struct eg_unix_hits *h, char *err, size_t err_size);

/* revoke_unix_cut.c: groups the hits by stream and cuts each once, through
 * one of its holders, re-checking every duplicate before the cut. */
int eg_unix_cut_streams(struct eg_unix_hits *h, struct eg_revoke_count *out, char *err,
			size_t err_size);

/* revoke_unix_cut.c: how many streams the hits are (both tagged ends and
 * every holder of one stream count once): what a cut would take. */
unsigned eg_unix_count_streams(struct eg_unix_hits *h);

/* revoke_unix_procfs.c: every socket fd under /proc/PID/fd. */
int eg_unix_revoke_procfs(const struct eg_revoke_target *t, int tags_fd,
			  struct eg_revoke_count *out, char *err, size_t err_size);

/* Both methods: a stale tag of the target. */
bool eg_unix_stale(const struct eg_revoke_target *t, const struct eg_sk_tag *tag);

#endif
