// SPDX-License-Identifier: Apache-2.0
/* execgate/admin.h: the rollout report's aggregate, fed from the eg_events
 * ring (core/audit_agg.h holds the rows; this file reads the events, the
 * processes' executables and the ring). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <execgate/admin.h>
#include "core/audit_agg.h"
#include "core/duration.h"
#include "lib/audit.h"
#include "lib/events.h"
#include "loader/maps/kreason.h"
#include "loader/maps/maps.h"

struct eg_audit *eg_audit_new(size_t max_rows)
{
	struct eg_audit *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	if (eg_audit_agg_init(&a->agg, max_rows)) {
		free(a);
		return NULL;
	}
	pthread_mutex_init(&a->mu, NULL);
	return a;
}

void eg_audit_free(struct eg_audit *a)
{
	if (!a)
		return;
	eg_audit_agg_free(&a->agg);
	pthread_mutex_destroy(&a->mu);
	free(a);
}

/* The start of process pid in ns since boot (/proc/<pid>/stat, field 22,
 * in clock ticks), or -1. */
static int64_t start_boot_ns(__u32 pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ticks;
	long hz = sysconf(_SC_CLK_TCK);
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || hz <= 0)
		return -1;
	buf[n] = '\0';
	/* comm may hold ") ": the fields start after the last ')' */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1,
			 " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
			 "%*d %*d %llu",
			 &ticks) != 1)
		return -1;
	return (int64_t)(ticks * (1000000000ULL / (unsigned long long)hz));
}

/* /proc/<pid>/exe into out, or NULL: the process is gone, or its pid now
 * names a process that started after the event (a reuse). */
static const char *exe_of(const struct eg_denial *d, char *out, size_t size)
{
	char path[64];
	ssize_t n;
	int64_t start;

	snprintf(path, sizeof(path), "/proc/%u/exe", d->pid);
	n = readlink(path, out, size - 1);
	if (n < 0)
		return NULL;
	out[n] = '\0';
	start = start_boot_ns(d->pid);
	if (start < 0 || start > (int64_t)d->boottime_ns)
		return NULL;
	return out;
}

int eg_audit_add_denial(struct eg_audit *a, const struct eg_denial *d)
{
	static __thread char exe[EG_AUDIT_EXE_MAX];
	struct eg_audit_key k;

	if (!a || !d || !d->audit)
		return 0;
	memset(&k, 0, sizeof(k));
	snprintf(k.reason, sizeof(k.reason), "%s", eg_kreason_name(d->reason));
	snprintf(k.hook, sizeof(k.hook), "%s", eg_hook_name(d->hook));
	memcpy(k.sandbox, d->sandbox, sizeof(k.sandbox));
	_Static_assert(sizeof(k.comm) == EG_COMM_LEN, "comm: TASK_COMM_LEN");
	memcpy(k.comm, d->comm, sizeof(k.comm));
	k.exe = exe_of(d, exe, sizeof(exe));
	pthread_mutex_lock(&a->mu);
	eg_audit_agg_add(&a->agg, &k, d->realtime_ns);
	pthread_mutex_unlock(&a->mu);
	return 1;
}

int eg_audit_add(struct eg_audit *a, const void *record, size_t size)
{
	struct eg_denial d;

	if (!a || eg_denial_of(record, size, &d))
		return 0;
	return eg_audit_add_denial(a, &d);
}

static int on_record(void *ctx, void *data, size_t size)
{
	eg_audit_add(ctx, data, size);
	return 0;
}

int eg_audit_drain(struct eg_audit *a, const char *pin_dir, char *err, size_t err_size)
{
	struct ring_buffer *rb;
	struct eg_maps maps;
	int rc;

	rc = eg_maps_open(&maps, pin_dir, err, err_size);
	if (rc)
		return rc;
	rb = ring_buffer__new(maps.fd[EG_MAP_EVENTS], on_record, a, NULL);
	if (!rb) {
		rc = -errno;
		snprintf(err, err_size, "ring buffer eg_events: %s", strerror(-rc));
		eg_maps_close(&maps);
		return rc;
	}
	rc = ring_buffer__consume(rb);
	if (rc < 0)
		snprintf(err, err_size, "ring buffer eg_events: reading: %s", strerror(-rc));
	ring_buffer__free(rb);
	eg_maps_close(&maps);
	return rc;
}

int eg_audit_since_parse(const char *text, int64_t *ns)
{
	return eg_duration_parse(text, ns);
}
