/* SPDX-License-Identifier: Apache-2.0 */
/* One HTTP/1.0 GET over a Unix socket, as the CLI asks execgated
 * (`execgate audit-report`): the status and the whole body, nothing more
 * of HTTP than an answer of that daemon needs. */
#ifndef EXECGATE_FRONTEND_UNIX_GET_H
#define EXECGATE_FRONTEND_UNIX_GET_H

#include <stddef.h>

/* execgated's API socket unless its config says otherwise. */
#define EG_DAEMON_DEFAULT_SOCKET "/run/execgate/api.sock"

#define EG_UNIX_GET_MAX (128U << 20) /* a body beyond is refused (-EFBIG) */

/* GET target (path and query) from the socket at path, within timeout_ms
 * for the connect and for each read. 0 with *status and *body (to free(),
 * NUL-terminated); -ENOENT or -ECONNREFUSED when nobody listens there;
 * -EPROTO for an answer that is not HTTP; another negative errno. */
int eg_unix_get(const char *path, const char *target, int timeout_ms, int *status, char **body);

#endif
