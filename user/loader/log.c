// SPDX-License-Identifier: Apache-2.0
/* The library's logger (loader/log.h). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <bpf/libbpf.h>
#include "loader/log.h"

static int max_level = EG_LOG_INFO; /* atomic */
static __thread int quiet_depth;
static pthread_once_t hooked = PTHREAD_ONCE_INIT;

static void vlog(enum eg_log_level level, const char *fmt, va_list ap)
{
	if ((int)level > __atomic_load_n(&max_level, __ATOMIC_RELAXED))
		return;
	vfprintf(stderr, fmt, ap);
}

static int from_libbpf(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	enum eg_log_level level = lvl == LIBBPF_WARN   ? EG_LOG_WARN
				  : lvl == LIBBPF_INFO ? EG_LOG_INFO
						       : EG_LOG_DEBUG;

	vlog(quiet_depth ? EG_LOG_DEBUG : level, fmt, ap);
	return 0;
}

static void hook_libbpf(void)
{
	libbpf_set_print(from_libbpf);
}

void eg_log_set_level(enum eg_log_level level)
{
	pthread_once(&hooked, hook_libbpf);
	__atomic_store_n(&max_level, (int)level, __ATOMIC_RELAXED);
}

void eg_log(enum eg_log_level level, const char *fmt, ...)
{
	va_list ap;

	pthread_once(&hooked, hook_libbpf);
	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}

void eg_log_libbpf_quiet(bool on)
{
	pthread_once(&hooked, hook_libbpf);
	quiet_depth += on ? 1 : -1;
}
