/* SPDX-License-Identifier: Apache-2.0 */
/* The etcd connection options of execgate-issue (issue/etcd_opts.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "issue/etcd_opts.h"
#include "issue/issue.h"

static const struct eg_opt etcd_opts[] = {
    EG_OPT("etcd-cacert", "FILE",
	   "verify etcd's members against this PEM CA file alone (default: the system's CAs)"),
    EG_OPT("etcd-cert", "FILE",
	   "client certificate for etcd, PEM, without a CN (needs "
	   "--etcd-key)"),
    EG_OPT("etcd-key", "FILE", "the key of --etcd-cert, PEM"),
    EG_OPT("etcd-user", "NAME", "etcd user to authenticate as (needs --etcd-password-file)"),
    EG_OPT("etcd-password-file", "FILE",
	   "the etcd user's password: the file's first line; mode 0600 or 0400"),
    EG_OPT_END,
};

void issue_etcd_opts_init(struct eg_opts *p, struct eg_etcd_auth *a)
{
	memset(a, 0, sizeof(*a));
	for (size_t t = 1; t < EG_OPTS_TABLES; t++)
		if (!p->tables[t]) {
			p->tables[t] = etcd_opts;
			break;
		}
}

bool issue_etcd_opt(struct eg_etcd_auth *a, const struct eg_opt *o, const char *value)
{
	const char **slot = NULL;

	if (!strcmp(o->name, "etcd-cacert"))
		slot = &a->cacert;
	else if (!strcmp(o->name, "etcd-cert"))
		slot = &a->cert;
	else if (!strcmp(o->name, "etcd-key"))
		slot = &a->key;
	else if (!strcmp(o->name, "etcd-user"))
		slot = &a->user;
	else if (!strcmp(o->name, "etcd-password-file"))
		slot = &a->password_file;
	if (slot)
		*slot = value;
	return slot != NULL;
}

int issue_etcd_open(struct eg_opts *p, const char *endpoints, const struct eg_etcd_auth *a,
		    unsigned timeout_ms, struct eg_etcd **e)
{
	char err[512];
	int rc = eg_etcd_open_auth(endpoints, timeout_ms, a, e, err, sizeof(err));

	if (rc == 0)
		return 0;
	/* an endpoint, a missing pair: usage; a file that cannot be read
	 * or is not private: the operation failed */
	if (rc == -EINVAL && (!strncmp(err, "etcd endpoint", 13) || strstr(err, "given without")))
		return eg_opts_usage(p, "--etcd: %s", err);
	fprintf(stderr, "execgate-issue: %s: %s\n", p->cmd, err);
	return ISSUE_EXIT_ERROR;
}
