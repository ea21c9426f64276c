/* SPDX-License-Identifier: Apache-2.0 */
/* `execgate check --keys`: admit's verdict without a worker. */
#ifndef EXECGATE_FRONTEND_CHECK_OFFLINE_H
#define EXECGATE_FRONTEND_CHECK_OFFLINE_H

#include <stddef.h>
#include <execgate/execgate.h>
#include "frontend/identity_opts.h"

/* The verdict of the token a->token_text against rec (NULL: no record
 * here) under the keys at keys (a directory of *.pub files, or one file),
 * at a->now_unix. 0 with res filled, or a negative errno with err: the
 * keys did not load (-EINVAL), there are none (-ENOENT), no memory. */
int eg_check_offline(const char *keys, const struct eg_record *rec, const struct eg_admit_args *a,
		     struct eg_verdict_result *res, char *err, size_t err_size);

#endif
