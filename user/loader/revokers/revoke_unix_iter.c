// SPDX-License-Identifier: Apache-2.0
/* The Unix revoker's iterator (loader/revokers/revoke_unix.h): bpf/revoke_unix_iter.bpf.c
 * on iter/task_file walks every open file of every process (all namespaces)
 * and yields (tgid, fd, socket, peer) of each stale-tagged Unix socket that
 * is not shut down both ways.
 *
 * It is loaded once per pin dir and its link pinned there
 * (links/revoke_unix_iter, removed by unload with the maps): loading it
 * costs 70-80 ms of verifier time, which would otherwise fall on every
 * install and retire, each its own process. A process adopts the pin (link,
 * program, the program's .bss mapped) and keeps it for the eg_sk_tags map it
 * names; a pin left by a build with another ABI, or for another map, is
 * replaced. The target lives in the pinned program's .bss, shared by every
 * process: install and retire write it under the writer lock. The mutex
 * only guards the per-process cache. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "loader/log.h"
#include "loader/maps/maps.h"
#include "loader/maps/pins.h"
#include "loader/revokers/revoke_unix.h"
#include "loader/records/runtime.h"
#include "revoke_unix_iter.skel.h"

static pthread_mutex_t iter_lock = PTHREAD_MUTEX_INITIALIZER;
static int iter_link_fd = -1, iter_prog_fd = -1;
static struct revoke_unix_iter__bss *iter_bss;
static __u32 iter_map_id;
static int self_link_fd = -1; /* the same program, this process only */
static pid_t self_link_pid;
static bool self_link_refused;

void eg_unix_iter_lock(void)
{
	pthread_mutex_lock(&iter_lock);
}

void eg_unix_iter_unlock(void)
{
	pthread_mutex_unlock(&iter_lock);
}

static int map_info_of(int fd, struct bpf_map_info *info)
{
	__u32 len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	return bpf_obj_get_info_by_fd(fd, info, &len) ? -errno : 0;
}

void eg_unix_iter_drop(void)
{
	if (self_link_fd >= 0)
		close(self_link_fd);
	if (iter_bss)
		munmap(iter_bss, sizeof(*iter_bss));
	if (iter_prog_fd >= 0)
		close(iter_prog_fd);
	if (iter_link_fd >= 0)
		close(iter_link_fd);
	self_link_fd = iter_link_fd = iter_prog_fd = -1;
	self_link_refused = false;
	iter_bss = NULL;
	iter_map_id = 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/* Takes the iterator behind link fd lfd (owned from here on) into the cache
 * if its program reads tags_id and speaks this build's ABI: -ESTALE if not.
 * A pinned program's global sections are found by the names libbpf gives
 * them (<object>.bss, <object>.data). */
static int iter_adopt(int lfd, __u32 tags_id)
{
	struct bpf_link_info li;
	struct bpf_prog_info pi;
	__u32 len = sizeof(li), ids[8], abi = 0, key = 0;
	int rc = 0, bss_fd = -1, data_fd = -1;
	bool tags = false;

	iter_link_fd = lfd;
	memset(&li, 0, sizeof(li));
	if (bpf_obj_get_info_by_fd(lfd, &li, &len))
		return -errno;
	iter_prog_fd = bpf_prog_get_fd_by_id(li.prog_id);
	if (iter_prog_fd < 0)
		return -errno;
	memset(&pi, 0, sizeof(pi));
	pi.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
	pi.map_ids = (__u64)(unsigned long)ids;
	len = sizeof(pi);
	if (bpf_obj_get_info_by_fd(iter_prog_fd, &pi, &len))
		return -errno;
	for (__u32 i = 0; i < pi.nr_map_ids && i < sizeof(ids) / sizeof(ids[0]); i++) {
		struct bpf_map_info mi;
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue;
		if (ids[i] == tags_id)
			tags = true;
		if (!map_info_of(fd, &mi) && ends_with(mi.name, ".bss") && bss_fd < 0 &&
		    mi.value_size == sizeof(*iter_bss)) {
			bss_fd = fd;
			continue;
		}
		if (!map_info_of(fd, &mi) && ends_with(mi.name, ".data") && data_fd < 0 &&
		    mi.value_size == sizeof(abi)) {
			data_fd = fd;
			continue;
		}
		close(fd);
	}
	if (!tags || bss_fd < 0 || data_fd < 0 || bpf_map_lookup_elem(data_fd, &key, &abi) ||
	    abi != EG_REVOKE_ITER_ABI)
		rc = -ESTALE;
	if (!rc) {
		iter_bss =
		    mmap(NULL, sizeof(*iter_bss), PROT_READ | PROT_WRITE, MAP_SHARED, bss_fd, 0);
		if (iter_bss == MAP_FAILED) {
			iter_bss = NULL;
			rc = -errno;
		}
	}
	if (bss_fd >= 0)
		close(bss_fd);
	if (data_fd >= 0)
		close(data_fd);
	if (!rc)
		iter_map_id = tags_id;
	return rc;
}

int eg_unix_iter_load(int tags_fd, const char *pin)
{
	struct revoke_unix_iter *skel;
	struct bpf_link *link = NULL;
	int rc, fd = -1;

	eg_log_libbpf_quiet(true); /* a refusal is a probe result */
	skel = revoke_unix_iter__open();
	rc = skel ? 0 : -errno;
	/* The map's one declaration (bpf/execgate_sk_tags.bpf.h) is pinned by
	 * name; without a pin root libbpf would adopt or pin it under
	 * /sys/fs/bpf. This object only borrows the tier's map, by fd. */
	if (!rc)
		rc = bpf_map__set_pin_path(skel->maps.eg_sk_tags, NULL);
	if (!rc)
		rc = bpf_map__reuse_fd(skel->maps.eg_sk_tags, tags_fd);
	if (!rc)
		rc = revoke_unix_iter__load(skel);
	if (!rc) {
		link = bpf_program__attach_iter(skel->progs.eg_revoke_unix_iter, NULL);
		rc = link ? 0 : -errno;
	}
	if (!rc) {
		fd = dup(bpf_link__fd(link));
		rc = fd < 0 ? -errno : 0;
	}
	if (!rc && pin) {
		/* Another ABI's, or another map's. A pin that cannot be made
		 * costs the next process a load, nothing more. */
		unlink(pin);
		bpf_link__pin(link, pin);
	}
	eg_log_libbpf_quiet(false);
	bpf_link__destroy(link);
	revoke_unix_iter__destroy(skel);
	return rc ? (rc < 0 ? rc : -EINVAL) : fd;
}

int eg_unix_iter_ensure(struct eg_runtime *rt, int tags_fd)
{
	char pin[EG_PIN_PATH_MAX];
	__u32 id = eg_map_kernel_id(tags_fd);
	bool have_pin = !eg_link_pin_path(pin, sizeof(pin), rt->pin_dir, EG_PIN_REVOKE_UNIX_ITER);
	int lfd, rc;

	if (iter_link_fd >= 0 && id && id == iter_map_id)
		return 0;
	eg_unix_iter_drop();
	lfd = have_pin ? bpf_obj_get(pin) : -1;
	if (lfd >= 0 && !iter_adopt(lfd, id))
		return 0;
	eg_unix_iter_drop();
	lfd = eg_unix_iter_load(tags_fd, have_pin ? pin : NULL);
	if (lfd < 0)
		return lfd;
	rc = iter_adopt(lfd, id);
	if (rc)
		eg_unix_iter_drop();
	return rc;
}

void eg_unix_iter_target(const struct eg_revoke_target *t)
{
	memcpy(iter_bss->target_sandbox, t->sandbox, EG_ID_BYTES);
	iter_bss->target_epoch = t->current_epoch;
	iter_bss->target_retired = t->retired;
	iter_bss->target_tgid = 0;
}

/* The re-check's link: the iterator limited to this process (kernel 6.1+
 * takes a task parameter), so it walks only the loader's own files. Older
 * kernels refuse it and the whole walk runs, filtered by target_tgid in the
 * program. */
static int self_iter_link(void)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts);
	union bpf_iter_link_info li;
	pid_t me = getpid();

	if (self_link_fd >= 0 && self_link_pid == me)
		return self_link_fd;
	if (self_link_fd >= 0)
		close(self_link_fd);
	self_link_fd = -1;
	if (!self_link_refused) {
		memset(&li, 0, sizeof(li));
		li.task.pid = (__u32)me;
		opts.iter_info = &li;
		opts.iter_info_len = sizeof(li);
		self_link_fd = bpf_link_create(iter_prog_fd, 0, BPF_TRACE_ITER, &opts);
		/* A kernel without task parameters says EINVAL: never ask again.
		 * Out of fds is not a refusal. */
		self_link_refused = self_link_fd < 0 && (errno == EINVAL || errno == EOPNOTSUPP);
		self_link_pid = me;
	}
	return self_link_fd >= 0 ? self_link_fd : iter_link_fd;
}

/* Runs the iterator behind link once and appends what it yields. Reads
 * ask for the room left (the kernel fills up to its 32 KiB seq buffer per
 * read), so 10 000 hits cost a few reads. */
static int read_link(int link_fd, struct eg_unix_hits *h, char *err, size_t err_size)
{
	int it = bpf_iter_create(link_fd), rc = 0;

	if (it < 0) {
		rc = -errno;
		snprintf(err, err_size, "iter/task_file: creating the iterator: %s",
			 strerror(errno));
		return rc;
	}
	for (;;) {
		ssize_t got;

		if (h->cap - h->n < 1024) {
			size_t ncap = h->cap ? h->cap * 2 : 2048;
			void *p = realloc(h->v, ncap * sizeof(*h->v));

			if (!p) {
				rc = -ENOMEM;
				snprintf(err, err_size, "iter/task_file: %s", strerror(ENOMEM));
				break;
			}
			h->v = p;
			h->cap = ncap;
		}
		got = read(it, h->v + h->n, (h->cap - h->n) * sizeof(*h->v));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = -errno;
			snprintf(err, err_size, "iter/task_file: reading: %s", strerror(errno));
			break;
		}
		if (got == 0)
			break;
		h->n += (size_t)got / sizeof(*h->v);
	}
	close(it);
	return rc;
}

int eg_unix_iter_read(bool all, struct eg_unix_hits *h, char *err, size_t err_size)
{
	int rc;

	if (all)
		return read_link(iter_link_fd, h, err, err_size);
	iter_bss->target_tgid = (__u32)getpid();
	rc = read_link(self_iter_link(), h, err, err_size);
	iter_bss->target_tgid = 0;
	return rc;
}
