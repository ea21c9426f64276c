// SPDX-License-Identifier: Apache-2.0
/* The library's logger (loader/log.h). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <bpf/libbpf.h>
#include "loader/log.h"

static int max_level = EG_LOG_INFO; /* atomic */
static __thread int quiet_depth;
static pthread_once_t hooked = PTHREAD_ONCE_INIT;
/* The sink and its context change together: a logging thread never sees
 * one's fn with another's ctx. */
static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static eg_log_sink_fn sink_fn;
static void *sink_ctx;

static void vlog(enum eg_log_level level, const char *fmt, va_list ap)
{
	char buf[1024], *msg = buf;
	eg_log_sink_fn fn;
	va_list again;
	void *ctx;
	int n;

	if ((int)level > __atomic_load_n(&max_level, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&sink_lock);
	fn = sink_fn;
	ctx = sink_ctx;
	pthread_mutex_unlock(&sink_lock);
	if (!fn) {
		vfprintf(stderr, fmt, ap);
		return;
	}
	/* A verifier log is longer than any line: format it whole. */
	va_copy(again, ap);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n >= (int)sizeof(buf)) {
		msg = malloc((size_t)n + 1);
		if (msg)
			vsnprintf(msg, (size_t)n + 1, fmt, again);
		else
			msg = buf; /* cut, not lost */
	}
	va_end(again);
	if (n >= 0)
		fn(level, msg, ctx);
	if (msg != buf)
		free(msg);
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

void eg_log_set_sink(eg_log_sink_fn fn, void *ctx)
{
	pthread_once(&hooked, hook_libbpf);
	pthread_mutex_lock(&sink_lock);
	sink_fn = fn;
	sink_ctx = ctx;
	pthread_mutex_unlock(&sink_lock);
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
