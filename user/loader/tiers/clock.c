// SPDX-License-Identifier: Apache-2.0
/* Keeping the grant clock's boot offset (loader/tiers/clock.h; abi.h, struct
 * eg_clock_word; docs/design.md §15).
 *
 * The word may say "kept" only while a program on the suspend_resume
 * tracepoint writes it: a kept word with nothing behind it goes stale at the
 * next resume, and grants then outlive their expiry by the time asleep. So
 * the link is attached and pinned before the program first writes the word
 * (by BPF_PROG_TEST_RUN, the same code the tracepoint runs), and every
 * failure clears the word, after which the hooks read CLOCK_BOOTTIME. An
 * unpinned link dies with this process, so a link that cannot be pinned is
 * a failure too. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "loader/tiers/clock.h"
#include "loader/log.h"
#include "loader/maps/pins.h"
#include "loader/tiers/tier_link.h"
#include "clock_resume.skel.h"

#define EG_CLOCK_TRACEPOINT "suspend_resume"

int eg_clock_word_read(const struct eg_maps *m, __u64 *word)
{
	struct eg_clock_word w = {0};
	__u32 zero = 0;

	if (m->fd[EG_MAP_CLOCK] < 0)
		return -EBADF;
	if (bpf_map_lookup_elem(m->fd[EG_MAP_CLOCK], &zero, &w))
		return -errno;
	*word = w.word;
	return 0;
}

static int word_fd_write(int fd, __u64 word)
{
	struct eg_clock_word w = {.word = word};
	__u32 zero = 0;

	return bpf_map_update_elem(fd, &zero, &w, BPF_ANY) ? -errno : 0;
}

int eg_clock_word_write(const struct eg_maps *m, __u64 word)
{
	return m->fd[EG_MAP_CLOCK] < 0 ? -EBADF : word_fd_write(m->fd[EG_MAP_CLOCK], word);
}

/* Whether link lfd is a suspend_resume raw tracepoint link whose program
 * writes the map with id clock_id. 0 and *prog_fd (when prog_fd is not
 * NULL) if so; else a negative errno and why. */
static int link_keeps(int lfd, __u32 clock_id, int *prog_fd, char *why, size_t why_size)
{
	struct bpf_link_info info;
	struct bpf_prog_info pinfo;
	char tp[64] = "";
	__u32 ids[8], len = sizeof(info), plen = sizeof(pinfo);
	bool uses = false;
	int pfd;

	memset(&info, 0, sizeof(info));
	info.raw_tracepoint.tp_name = (__u64)(unsigned long)tp;
	info.raw_tracepoint.tp_name_len = sizeof(tp);
	if (bpf_obj_get_info_by_fd(lfd, &info, &len)) {
		snprintf(why, why_size, "link info: %s", strerror(errno));
		return -errno;
	}
	if (info.type != BPF_LINK_TYPE_RAW_TRACEPOINT || strcmp(tp, EG_CLOCK_TRACEPOINT)) {
		snprintf(why, why_size, "not a raw tracepoint link on %s", EG_CLOCK_TRACEPOINT);
		return -EINVAL;
	}
	pfd = bpf_prog_get_fd_by_id(info.prog_id);
	if (pfd < 0) {
		snprintf(why, why_size, "program %u: %s", info.prog_id, strerror(errno));
		return -errno;
	}
	memset(&pinfo, 0, sizeof(pinfo));
	pinfo.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
	pinfo.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(pfd, &pinfo, &plen)) {
		snprintf(why, why_size, "program %u: %s", info.prog_id, strerror(errno));
		close(pfd);
		return -errno;
	}
	for (__u32 i = 0; i < pinfo.nr_map_ids && i < sizeof(ids) / sizeof(ids[0]); i++)
		uses |= clock_id && ids[i] == clock_id;
	if (!uses) {
		snprintf(why, why_size, "it keeps another eg_clock (an earlier load's)");
		close(pfd);
		return -ESTALE;
	}
	if (prog_fd)
		*prog_fd = pfd;
	else
		close(pfd);
	return 0;
}

/* A new program and link, pinned at pin. The link's program fd, or a
 * negative errno and why. */
static int attach_new(const char *pin_dir, const char *pin, char *why, size_t why_size)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = pin_dir);
	struct clock_resume *skel;
	struct bpf_link *link = NULL;
	int rc, pfd = -1;

	eg_log_libbpf_quiet(true); /* a refusal is reported below */
	skel = clock_resume__open_opts(&opts);
	rc = skel ? clock_resume__load(skel) : -errno;
	if (rc) {
		snprintf(why, why_size, "loading bpf/clock_resume.bpf.c: %s", strerror(-rc));
		goto out;
	}
	link = bpf_program__attach(skel->progs.eg_clock_resume);
	if (!link) {
		rc = -errno;
		snprintf(why, why_size, "attaching to the %s tracepoint: %s", EG_CLOCK_TRACEPOINT,
			 strerror(-rc));
		goto out;
	}
	/* The new link runs before the old pin goes, so no suspend falls
	 * between two programs. */
	if (unlink(pin) && errno != ENOENT) {
		rc = -errno;
		snprintf(why, why_size, "link %s: %s", pin, strerror(-rc));
		goto out;
	}
	rc = bpf_link__pin(link, pin);
	if (rc) {
		snprintf(why, why_size, "pinning link %s: %s", pin, strerror(-rc));
		goto out;
	}
	pfd = dup(bpf_program__fd(skel->progs.eg_clock_resume));
	if (pfd < 0) {
		rc = -errno;
		snprintf(why, why_size, "program fd: %s", strerror(-rc));
	}
out:
	eg_log_libbpf_quiet(false);
	bpf_link__destroy(link); /* the pin holds it */
	clock_resume__destroy(skel);
	return rc ? rc : pfd;
}

int eg_clock_keep(const char *pin_dir, char *err, size_t err_size)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);
	char pin[EG_PIN_PATH_MAX], map_pin[EG_PIN_PATH_MAX], why[EG_PIN_PATH_MAX + 256] = "";
	struct eg_clock_word w = {0};
	__u32 zero = 0, id;
	int cfd, lfd, pfd = -1, rc;

	rc = eg_pin_path(map_pin, sizeof(map_pin), pin_dir, "eg_clock");
	if (!rc)
		rc = eg_link_pin_path(pin, sizeof(pin), pin_dir, EG_PIN_CLOCK_RESUME);
	if (rc) {
		snprintf(err, err_size, "pin dir %s: %s", pin_dir, strerror(-rc));
		return rc;
	}
	cfd = bpf_obj_get(map_pin);
	if (cfd < 0) {
		rc = -errno;
		snprintf(err, err_size, "map %s: %s", map_pin, strerror(-rc));
		return rc;
	}
	id = eg_map_kernel_id(cfd);
	lfd = bpf_obj_get(pin);
	if (lfd >= 0) {
		rc = link_keeps(lfd, id, &pfd, why, sizeof(why));
		close(lfd);
		if (rc)
			eg_log(EG_LOG_INFO, "link %s: %s: replacing it", pin, why);
	}
	if (pfd < 0) {
		pfd = attach_new(pin_dir, pin, why, sizeof(why));
		if (pfd < 0) {
			rc = pfd;
			goto fail;
		}
	}
	if (bpf_prog_test_run_opts(pfd, &run)) {
		rc = -errno;
		snprintf(why, sizeof(why), "running bpf/clock_resume.bpf.c once: %s",
			 strerror(-rc));
		goto fail;
	}
	if (bpf_map_lookup_elem(cfd, &zero, &w)) {
		rc = -errno;
		snprintf(why, sizeof(why), "reading eg_clock: %s", strerror(-rc));
		goto fail;
	}
	if (!(w.word & EG_CLOCK_KEPT)) {
		rc = -EIO;
		snprintf(why, sizeof(why), "the program ran but left eg_clock unset");
		goto fail;
	}
	close(pfd);
	close(cfd);
	return 0;
fail:
	if (pfd >= 0)
		close(pfd);
	/* Whatever failed, a kept word must not outlive its keeper. */
	if (word_fd_write(cfd, 0))
		snprintf(err, err_size,
			 "grant clock: %s; and clearing eg_clock failed: %s (hooks may use a "
			 "stale boot offset after a suspend: run execgate unload)",
			 why, strerror(errno));
	else
		snprintf(err, err_size, "grant clock: %s; the hooks read CLOCK_BOOTTIME instead",
			 why);
	close(cfd);
	return rc;
}

void eg_clock_state_read(const struct eg_maps *m, const char *pin_dir, struct eg_clock_state *st)
{
	char pin[EG_PIN_PATH_MAX];
	__u64 word = 0;
	int lfd;

	memset(st, 0, sizeof(*st));
	if (eg_clock_word_read(m, &word)) {
		snprintf(st->why, sizeof(st->why), "eg_clock cannot be read");
		return;
	}
	st->read = true;
	st->kept = word & EG_CLOCK_KEPT;
	st->offset_ns = st->kept ? word & ~EG_CLOCK_KEPT : 0;
	if (eg_link_pin_path(pin, sizeof(pin), pin_dir, EG_PIN_CLOCK_RESUME)) {
		snprintf(st->why, sizeof(st->why), "pin dir path too long");
		return;
	}
	lfd = bpf_obj_get(pin);
	if (lfd < 0) {
		snprintf(st->why, sizeof(st->why), "no link %s", pin);
	} else {
		st->attached = !link_keeps(lfd, eg_map_kernel_id(m->fd[EG_MAP_CLOCK]), NULL,
					   st->why, sizeof(st->why));
		close(lfd);
	}
	if (!st->kept && st->attached)
		snprintf(st->why, sizeof(st->why), "eg_clock is unset (a load failed midway)");
}
