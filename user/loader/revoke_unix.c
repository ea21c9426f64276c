// SPDX-License-Identifier: Apache-2.0
/* Unix stream revocation: placeholder row until the cut lands (revoke.h). */
#include <errno.h>
#include "loader/revoke.h"

static int revoke_unix(struct eg_runtime *rt, const struct eg_revoke_target *t,
		       struct eg_revoke_count *out, char *err, size_t err_size)
{
	(void)rt, (void)t, (void)out, (void)err, (void)err_size;
	return 0;
}

const struct eg_revoker eg_revoker_unix = {"unix", EG_REVOKE_UNIX, revoke_unix};
