// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "core/identity.h"
#include "loader/records/runtime.h"
#include "loader/records/state_dir.h"

uint64_t eg_boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int lock_state_dir(const char *state_dir, char *err, size_t err_size)
{
	char path[4096];
	int fd, rc;

	if (mkdir(state_dir, EG_STATE_DIR_MODE) && errno != EEXIST) {
		rc = -errno;
		snprintf(err, err_size, "state dir %s: %s", state_dir, strerror(errno));
		return rc;
	}
	snprintf(path, sizeof(path), "%s/lock", state_dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, err_size, "state dir %s: lock: %s", state_dir, strerror(errno));
		return rc;
	}
	if (flock(fd, LOCK_EX)) {
		rc = -errno;
		snprintf(err, err_size, "state dir %s: lock: %s", state_dir, strerror(errno));
		close(fd);
		return rc;
	}
	return fd;
}

int eg_runtime_open(struct eg_runtime *rt, const char *pin_dir, const char *state_dir, bool lock,
		    char *err, size_t err_size)
{
	int rc;

	rt->pin_dir = pin_dir;
	rt->state_dir = state_dir;
	rt->lock_fd = -1;
	for (int i = 0; i < EG_MAP__COUNT; i++)
		rt->maps.fd[i] = -1;
	rt->maps.admit_gen = NULL;
	if (lock) {
		rc = lock_state_dir(state_dir, err, err_size);
		if (rc < 0)
			return rc;
		rt->lock_fd = rc;
	}
	rc = eg_maps_open(&rt->maps, pin_dir, err, err_size);
	if (rc) {
		eg_runtime_close(rt);
		return rc;
	}
	return 0;
}

void eg_runtime_close(struct eg_runtime *rt)
{
	eg_maps_close(&rt->maps);
	if (rt->lock_fd >= 0)
		close(rt->lock_fd); /* drops the flock */
	rt->lock_fd = -1;
}

/* The core's record holds exactly the ports of the kernel's. */
_Static_assert(sizeof(((struct eg_record *)0)->ports) / sizeof(struct eg_port_rule) ==
		   sizeof(((struct eg_exec_record *)0)->ports) / sizeof(struct eg_port),
	       "eg_record and eg_exec_record ports");

int eg_record_from_kernel(const struct eg_exec_record *k, struct eg_record *out, char *err,
			  size_t err_size)
{
	int rc;

	memset(out, 0, sizeof(*out));
	rc = eg_identity_from_exec(&out->id, k, err, err_size);
	if (rc)
		return rc;
	out->retired_below = k->state == EG_RECORD_RETIRED ? k->generation + 1 : k->generation;
	EG_PORTS_COPY(out->ports, out->nports, k->ports, k->nports);
	return 0;
}

const char *eg_install_outcome_name(enum eg_install_outcome o)
{
	static const char *const names[] = {
	    [EG_INSTALLED_NEW] = "new",
	    [EG_INSTALLED_REPLACED] = "replaced",
	    [EG_INSTALLED_REACTIVATED] = "reactivated",
	    [EG_INSTALLED_ACTIVATION] = "activation",
	    [EG_INSTALLED_UNCHANGED] = "unchanged",
	};

	return (unsigned)o < sizeof(names) / sizeof(names[0]) ? names[o] : "unknown";
}
