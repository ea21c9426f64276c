/* SPDX-License-Identifier: Apache-2.0 */
/* Userspace side of the Unix path keys: the exact key of eg_endpoints and
 * the pre-filter key of eg_path_filter, byte-identical to what
 * bpf/execgate_unix_path.bpf.h computes from a connect(). */
#ifndef EXECGATE_LOADER_PATH_FILTER_H
#define EXECGATE_LOADER_PATH_FILTER_H

#include "abi/abi.h"

/* -EINVAL for an empty, relative or too long path (a registrable path is
 * absolute and at most 107 bytes, so connect() callers can NUL-terminate
 * it). */
int eg_path_key_make(const char *path, struct eg_path_key *key);
void eg_path_filter_key_make(const struct eg_path_key *key, struct eg_path_filter_key *fk);
/* Sets fk's bit in the pinned eg_path_hint bitmap (single writer: the
 * caller holds the state-dir lock). Call only after the path's eg_endpoints
 * and eg_path_filter entries are written. 0 or -errno. */
int eg_path_hint_set(int hint_fd, const struct eg_path_filter_key *fk);

#endif
