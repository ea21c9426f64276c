// SPDX-License-Identifier: Apache-2.0
/* The probe record: what `load` found the kernel offers, kept for `status`.
 * Probing is not free (each probe loads a program, the cgroup one also
 * creates and removes a scratch cgroup: ~66 ms here), and a status command
 * must change nothing. The record names the boot it was made in: after a
 * reboot (another kernel, perhaps) it is not trusted. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "loader/revokers/serving.h"
#include "loader/tiers/tier.h"
#include "loader/records/state_dir.h"

#define PROBE_MAGIC   "execgate-probe-v1"
#define BOOT_ID_PATH  "/proc/sys/kernel/random/boot_id"
#define BOOT_ID_BYTES 64

static int boot_id(char out[BOOT_ID_BYTES])
{
	FILE *f = fopen(BOOT_ID_PATH, "re");

	if (!f)
		return -errno;
	if (!fgets(out, BOOT_ID_BYTES, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

_Static_assert(EG_STEP__COUNT <= EG_SERVING_MAX_STEPS, "serving steps");

/* "execgated pid 123": who probed, as status names it. */
static void who_am_i(char *out, size_t size)
{
	char comm[32] = "?";
	FILE *f = fopen("/proc/self/comm", "re");

	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	snprintf(out, size, "%s pid %d", comm, (int)getpid());
}

void eg_tiers_probe(const struct eg_tier_ctx *ctx, struct eg_probe_record *out)
{
	char who[64];

	memset(out, 0, sizeof(*out));
	who_am_i(who, sizeof(who));
	eg_serving_probe(out, who);
	out->present = true;
	for (size_t i = 0; i < eg_tier_count && i < EG_TIER_MAX; i++)
		out->offered[i] =
		    eg_tiers[i]->probe(ctx, out->why_not[i], sizeof(out->why_not[i])) == 0;
}

int eg_probe_record_write(const char *state_dir, const struct eg_probe_record *r, char *err,
			  size_t err_size)
{
	char path[512], tmp[560], boot[BOOT_ID_BYTES];
	FILE *f;
	int fd, rc;

	rc = boot_id(boot);
	if (rc) {
		snprintf(err, err_size, "%s: %s", BOOT_ID_PATH, strerror(-rc));
		return rc;
	}
	if (mkdir(state_dir, EG_STATE_DIR_MODE) && errno != EEXIST) {
		rc = -errno;
		snprintf(err, err_size, "state dir %s: %s", state_dir, strerror(errno));
		return rc;
	}
	snprintf(path, sizeof(path), "%s/probe", state_dir);
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		rc = -errno;
		snprintf(err, err_size, "%s: %s", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	fprintf(f, "%s\nboot %s\n", PROBE_MAGIC, boot);
	/* One line per tier; the reason never holds a newline (probes write
	 * one line), and is cut at one if it did. */
	for (size_t i = 0; i < eg_tier_count && i < EG_TIER_MAX; i++)
		fprintf(f, "tier %s %s %.*s\n", eg_tiers[i]->name,
			r->offered[i] ? "offered" : "not-offered",
			(int)strcspn(r->why_not[i], "\n"), r->offered[i] ? "" : r->why_not[i]);
	if (r->serving_probed) {
		fprintf(f, "serving-by %.*s\n", (int)strcspn(r->serving_by, "\n"), r->serving_by);
		for (int i = 0; i < EG_STEP__COUNT; i++)
			fprintf(f, "serving %s %s %.*s\n", eg_serving_step_names[i],
				r->step_ok[i] ? "allowed" : "refused",
				(int)strcspn(r->step_why[i], "\n"),
				r->step_ok[i] ? "" : r->step_why[i]);
	}
	if (fflush(f) || fsync(fd)) {
		rc = -errno;
		fclose(f);
		unlink(tmp);
		snprintf(err, err_size, "%s: %s", tmp, strerror(-rc));
		return rc;
	}
	fclose(f);
	if (rename(tmp, path)) {
		rc = -errno;
		unlink(tmp);
		snprintf(err, err_size, "%s: %s", path, strerror(-rc));
		return rc;
	}
	return 0;
}

static void absent(struct eg_probe_record *out, const char *why)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->missing, sizeof(out->missing), "%s", why);
}

void eg_probe_record_read(const char *state_dir, struct eg_probe_record *out)
{
	char path[512], line[512], boot[BOOT_ID_BYTES];
	bool boot_ok = false;
	FILE *f;

	absent(out, "not probed: no probe record (execgate load writes it)");
	snprintf(path, sizeof(path), "%s/probe", state_dir);
	f = fopen(path, "re");
	if (!f)
		return;
	if (!fgets(line, sizeof(line), f) || strcmp(line, PROBE_MAGIC "\n")) {
		absent(out, "not probed: the probe record is not in a known form");
		goto out;
	}
	if (boot_id(boot)) {
		absent(out, "not probed: cannot read " BOOT_ID_PATH);
		goto out;
	}
	while (fgets(line, sizeof(line), f)) {
		char name[32], state[16];
		int off = 0;

		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "boot ", 5)) {
			boot_ok = !strcmp(line + 5, boot);
			continue;
		}
		if (!strncmp(line, "serving-by ", 11)) {
			out->serving_probed = true;
			snprintf(out->serving_by, sizeof(out->serving_by), "%.63s", line + 11);
			continue;
		}
		if (sscanf(line, "serving %31s %15s %n", name, state, &off) >= 2) {
			for (int i = 0; i < EG_STEP__COUNT; i++) {
				if (strcmp(eg_serving_step_names[i], name))
					continue;
				out->step_ok[i] = !strcmp(state, "allowed");
				snprintf(out->step_why[i], sizeof(out->step_why[i]), "%.199s",
					 off ? line + off : "");
			}
			continue;
		}
		if (sscanf(line, "tier %31s %15s %n", name, state, &off) < 2)
			continue;
		for (size_t i = 0; i < eg_tier_count && i < EG_TIER_MAX; i++) {
			if (strcmp(eg_tiers[i]->name, name))
				continue;
			out->offered[i] = !strcmp(state, "offered");
			snprintf(out->why_not[i], sizeof(out->why_not[i]), "%s",
				 off ? line + off : "");
		}
	}
	if (!boot_ok) {
		absent(out, "not probed in this boot: the probe record is from an earlier one "
			    "(execgate load writes it)");
		goto out;
	}
	out->present = true;
out:
	fclose(f);
}

void eg_tier_status_offered(const struct eg_probe_record *r, size_t tier, struct eg_tier_status *st)
{
	if (!r->present || tier >= EG_TIER_MAX) {
		st->offered = false;
		snprintf(st->why_not, sizeof(st->why_not), "%s", r->missing);
		return;
	}
	st->offered = r->offered[tier];
	snprintf(st->why_not, sizeof(st->why_not), "%s", r->offered[tier] ? "" : r->why_not[tier]);
}
