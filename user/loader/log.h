/* SPDX-License-Identifier: Apache-2.0 */
/* The library's one logger. It also receives libbpf's output
 * (libbpf_set_print), so every message of the library goes one way: to
 * stderr (as libbpf's own default did) or to the sink a program set
 * (eg_log_set_sink), up to a level (EG_LOG_INFO unless a
 * front end's -v/--verbose raised it to EG_LOG_DEBUG, eg_log_set_level in
 * include/execgate/execgate.h).
 *
 * A probe whose refusal is an expected answer wraps its load in
 * eg_log_libbpf_quiet: libbpf's verifier dump then goes out at debug level
 * only. The switch is per thread, so one thread's probe never hides
 * another thread's warnings. */
#ifndef EXECGATE_LOADER_LOG_H
#define EXECGATE_LOADER_LOG_H

#include <stdbool.h>
#include <execgate/execgate.h>

void eg_log(enum eg_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Nests: libbpf is quiet on this thread until as many offs as ons. */
void eg_log_libbpf_quiet(bool on);

#endif
