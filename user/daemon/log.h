/* SPDX-License-Identifier: Apache-2.0 */
/* Journal-style log lines on stderr: "<N>execgated: ..." where N is the
 * syslog priority, which journald reads from a service's stderr
 * (SyslogLevelPrefix=yes, the default). Lines never carry token bytes, key
 * material or request bodies. */
#ifndef EXECGATE_DAEMON_LOG_H
#define EXECGATE_DAEMON_LOG_H

#define EGD_LOG_ERR	3
#define EGD_LOG_WARNING 4
#define EGD_LOG_NOTICE	5
#define EGD_LOG_INFO	6

void egd_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
