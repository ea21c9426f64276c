/* SPDX-License-Identifier: Apache-2.0 */
/* Journal-style log lines on stderr: "<N>execgated: ..." where N is the
 * syslog priority, which journald reads from a service's stderr
 * (SyslogLevelPrefix=yes, the default). Lines never carry token bytes, key
 * material or request bodies.
 *
 * Every line is escaped whole, whatever its source (our messages and
 * libmicrohttpd's, http_conns.c): a byte below 0x20, 0x7f to 0xff, and the
 * backslash itself are written as \xNN, so one call is exactly one line of
 * printable ASCII whatever a client sent. */
#ifndef EXECGATE_DAEMON_LOG_H
#define EXECGATE_DAEMON_LOG_H

#include <stdarg.h>
#include <stddef.h>

#define EGD_LOG_ERR	3
#define EGD_LOG_WARNING 4
#define EGD_LOG_NOTICE	5
#define EGD_LOG_INFO	6
#define EGD_LOG_DEBUG	7

void egd_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void egd_log_va(int prio, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* len bytes of in as printable ASCII (\xNN for the rest, and for '\\')
 * into out, NUL-terminated and cut at a whole escape; returns its length. */
size_t egd_log_escape(const char *in, size_t len, char *out, size_t size);
/* The library's log sink (eg_log_set_sink, include/execgate/execgate.h):
 * each line of msg becomes one of our lines at the library's level (its
 * levels are syslog priorities), so libexecgate's and libbpf's messages
 * reach the journal with our prefix, escaped like every other line. */
void egd_log_library(int level, const char *msg, void *ctx);

#endif
