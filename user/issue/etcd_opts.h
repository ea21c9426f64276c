/* SPDX-License-Identifier: Apache-2.0 */
/* How every execgate-issue command that talks to etcd reaches it: the
 * options --etcd-cacert, --etcd-cert, --etcd-key, --etcd-user and
 * --etcd-password-file (user/fleet/etcd.h, struct eg_etcd_auth), one table
 * shared by those commands, beside their own --etcd URL[,URL]. */
#ifndef EXECGATE_ISSUE_ETCD_OPTS_H
#define EXECGATE_ISSUE_ETCD_OPTS_H

#include "fleet/etcd.h"
#include "frontend/opts.h"

/* Adds the options' table to p (after issue_opts_init) and clears a. */
void issue_etcd_opts_init(struct eg_opts *p, struct eg_etcd_auth *a);
/* true when o is one of them: its value is taken into a. */
bool issue_etcd_opt(struct eg_etcd_auth *a, const struct eg_opt *o, const char *value);
/* Opens endpoints with a: 0 and *e, or the exit code after one line on
 * stderr (a usage error for a refused endpoint or file). */
int issue_etcd_open(struct eg_opts *p, const char *endpoints, const struct eg_etcd_auth *a,
		    unsigned timeout_ms, struct eg_etcd **e);

#endif
