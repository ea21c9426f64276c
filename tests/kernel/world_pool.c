// SPDX-License-Identifier: Apache-2.0
/* A loaded world handed from one kernel test to the next (world_pool.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <criterion/criterion.h>
#include "harness.h"
#include "world_pool.h"

#define WORLD	  ".world"
#define MAX_PINS  64
#define MAX_ENTRY (1u << 20) /* a dump line's key or value, bytes */

/* The slot of this Criterion run for tier: a file naming the pooled world.
 * Each test is a child of the runner, which drains the slots at its end. */
static void slot_path(char *out, size_t size, pid_t runner, const char *tier)
{
	snprintf(out, size, "/tmp/egk-pool-%d-%s", (int)runner, tier ? tier : "none");
}

static bool fresh_only(void)
{
	const char *v = getenv("EXECGATE_TEST_FRESH_WORLD");

	return v && !strcmp(v, "1");
}

/* --- map dumps ------------------------------------------------------------------ */

struct dump_head {
	__u32 type, key_size, value_size, count;
};

/* The value size the syscalls move for a map: per-CPU maps hold one
 * 8-byte-aligned value per possible CPU. */
static size_t value_bytes(const struct bpf_map_info *mi)
{
	bool percpu = mi->type == BPF_MAP_TYPE_PERCPU_ARRAY ||
		      mi->type == BPF_MAP_TYPE_PERCPU_HASH ||
		      mi->type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
	int ncpu = libbpf_num_possible_cpus();

	return percpu ? (size_t)((mi->value_size + 7) & ~7u) * (size_t)(ncpu > 0 ? ncpu : 1)
		      : mi->value_size;
}

/* Maps whose entries are not kept: the event ring (drained instead) and
 * socket storage (its entries belong to sockets, which die with the test's
 * processes; the kernel offers no walk of its keys). */
static bool kept(__u32 type)
{
	return type != BPF_MAP_TYPE_RINGBUF && type != BPF_MAP_TYPE_SK_STORAGE;
}

static int map_info(int fd, struct bpf_map_info *mi)
{
	__u32 len = sizeof(*mi);

	memset(mi, 0, sizeof(*mi));
	return bpf_obj_get_info_by_fd(fd, mi, &len) ? -errno : 0;
}

/* Every entry of a map, written to f: key then value, count in the head. */
static int dump_map(int fd, const struct bpf_map_info *mi, FILE *f)
{
	size_t vb = value_bytes(mi);
	struct dump_head h = {mi->type, mi->key_size, (__u32)vb, 0};
	char *key = calloc(1, mi->key_size), *next = calloc(1, mi->key_size), *val = calloc(1, vb);
	int rc = 0;
	bool first = true;

	if (!key || !next || !val) {
		rc = -ENOMEM;
		goto out;
	}
	if (fwrite(&h, sizeof(h), 1, f) != 1) {
		rc = -EIO;
		goto out;
	}
	while (!bpf_map_get_next_key(fd, first ? NULL : key, next)) {
		first = false;
		memcpy(key, next, mi->key_size);
		if (bpf_map_lookup_elem(fd, key, val))
			continue; /* deleted meanwhile: nothing runs in the world now */
		if (fwrite(key, mi->key_size, 1, f) != 1 || fwrite(val, vb, 1, f) != 1) {
			rc = -EIO;
			goto out;
		}
		h.count++;
	}
	if (fseek(f, 0, SEEK_SET) || fwrite(&h, sizeof(h), 1, f) != 1)
		rc = -EIO;
out:
	free(key);
	free(next);
	free(val);
	return rc;
}

/* Deletes every entry of a hash-like map, then writes the dump back. An
 * array's entries cannot be deleted: each index is written over. */
static int restore_map(int fd, const struct bpf_map_info *mi, FILE *f)
{
	bool array = mi->type == BPF_MAP_TYPE_ARRAY || mi->type == BPF_MAP_TYPE_PERCPU_ARRAY;
	size_t vb = value_bytes(mi);
	struct dump_head h;
	char *key = calloc(1, mi->key_size), *next = calloc(1, mi->key_size), *val = calloc(1, vb);
	int rc = 0;

	if (!key || !next || !val) {
		rc = -ENOMEM;
		goto out;
	}
	if (fread(&h, sizeof(h), 1, f) != 1 || h.type != mi->type || h.key_size != mi->key_size ||
	    h.value_size != vb) {
		rc = -EINVAL;
		goto out;
	}
	if (!array) {
		/* Always restart from the first key: the one just deleted has
		 * no successor to ask for. */
		while (!bpf_map_get_next_key(fd, NULL, next))
			if (bpf_map_delete_elem(fd, next)) {
				rc = -errno;
				goto out;
			}
	}
	for (__u32 i = 0; i < h.count; i++) {
		if (fread(key, mi->key_size, 1, f) != 1 || fread(val, vb, 1, f) != 1) {
			rc = -EINVAL;
			goto out;
		}
		if (bpf_map_update_elem(fd, key, val, BPF_ANY)) {
			rc = -errno;
			goto out;
		}
	}
out:
	free(key);
	free(next);
	free(val);
	return rc;
}

static int drain_cb(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	return 0;
}

static int drain_ring(int fd)
{
	struct ring_buffer *rb = ring_buffer__new(fd, drain_cb, NULL, NULL);
	int rc;

	if (!rb)
		return -errno;
	rc = ring_buffer__consume(rb);
	ring_buffer__free(rb);
	return rc < 0 ? rc : 0;
}

/* --- the pins' identity -------------------------------------------------------- */

/* The id of the BPF object pinned at path (map, link or program: each info
 * struct starts with type and id). */
static int pin_id(const char *path, __u32 *id)
{
	struct bpf_prog_info info; /* the largest of the three */
	__u32 len = sizeof(info);
	int fd = bpf_obj_get(path), rc = 0;

	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		rc = -errno;
	else
		*id = info.id;
	close(fd);
	return rc;
}

/* Every pin under pin_dir and pin_dir/links, as "name id" lines in f;
 * returns how many, or a negative errno. */
static int list_pins(const char *pin_dir, FILE *f)
{
	const char *sub[] = {"", "/links"};
	int n = 0;

	for (size_t s = 0; s < 2; s++) {
		char dir[400];
		struct dirent *de;
		DIR *d;

		snprintf(dir, sizeof(dir), "%s%s", pin_dir, sub[s]);
		d = opendir(dir);
		if (!d)
			return s ? n : -errno; /* no links/: none pinned */
		while ((de = readdir(d))) {
			char path[700];
			__u32 id = 0;

			if (de->d_name[0] == '.' || (!s && !strcmp(de->d_name, "links")))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			if (pin_id(path, &id)) {
				closedir(d);
				return -EINVAL;
			}
			fprintf(f, "%s%s %u\n", sub[s][0] ? "links/" : "", de->d_name, id);
			n++;
		}
		closedir(d);
	}
	return n;
}

static char *read_all(FILE *f)
{
	char *buf = NULL;
	size_t cap = 0, len = 0, r;

	do {
		if (len + 4096 + 1 > cap) {
			char *nb = realloc(buf, cap = len + 8192);

			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
		}
		r = fread(buf + len, 1, cap - len - 1, f);
		len += r;
	} while (r);
	buf[len] = '\0';
	return buf;
}

/* Whether the pins are the objects recorded after load: same names, same
 * ids, in the same order of the directory walk of the same directories. */
static bool same_pins(void)
{
	char path[300], *now = NULL, *then = NULL;
	FILE *f = tmpfile(), *g;
	bool same = false;

	if (!f)
		return false;
	snprintf(path, sizeof(path), "%s/" WORLD "/pins", kh.dir);
	g = fopen(path, "re");
	if (g && list_pins(kh.pin_dir, f) > 0 && !fseek(f, 0, SEEK_SET)) {
		now = read_all(f);
		then = read_all(g);
		same = now && then && !strcmp(now, then);
	}
	if (g)
		fclose(g);
	fclose(f);
	free(now);
	free(then);
	return same;
}

/* --- record, give, take ---------------------------------------------------------- */

static int each_map(bool save)
{
	char dir[400];
	struct dirent *de;
	DIR *d = opendir(kh.pin_dir);
	int rc = 0;

	if (!d)
		return -errno;
	snprintf(dir, sizeof(dir), "%s/" WORLD "/maps", kh.dir);
	while (!rc && (de = readdir(d))) {
		char pin[400], file[700];
		struct bpf_map_info mi;
		FILE *f;
		int fd;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "links"))
			continue;
		snprintf(pin, sizeof(pin), "%s/%s", kh.pin_dir, de->d_name);
		fd = bpf_obj_get(pin);
		if (fd < 0) {
			rc = -errno;
			break;
		}
		rc = map_info(fd, &mi);
		if (!rc && mi.type == BPF_MAP_TYPE_RINGBUF && !save)
			rc = drain_ring(fd);
		if (!rc && kept(mi.type)) {
			snprintf(file, sizeof(file), "%s/%s", dir, de->d_name);
			f = fopen(file, save ? "we" : "re");
			if (!f)
				rc = -errno;
			else {
				rc = save ? dump_map(fd, &mi, f) : restore_map(fd, &mi, f);
				if (fclose(f) && !rc)
					rc = -EIO;
			}
		}
		close(fd);
	}
	closedir(d);
	return rc;
}

void kh_pool_record(const char *tier)
{
	char path[300], out[2048];
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/" WORLD, kh.dir);
	cr_assert_eq(mkdir(path, 0700), 0, "mkdir %s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/" WORLD "/maps", kh.dir);
	cr_assert_eq(mkdir(path, 0700), 0, "mkdir %s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/" WORLD "/pins", kh.dir);
	f = fopen(path, "we");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	rc = list_pins(kh.pin_dir, f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_gt(rc, 0, "listing the pins of %s: %s", kh.pin_dir, strerror(-rc));
	rc = each_map(true);
	cr_assert_eq(rc, 0, "recording the maps of %s: %s", kh.pin_dir, strerror(-rc));
	snprintf(path, sizeof(path), "%s/" WORLD "/state", kh.dir);
	rc = kh_run(out, sizeof(out), "cp", "-a", kh.state_dir, path, NULL);
	cr_assert_eq(rc, 0, "cp -a %s %s: %s", kh.state_dir, path, out);
	snprintf(path, sizeof(path), "%s/" WORLD "/tier", kh.dir);
	f = fopen(path, "we");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fprintf(f, "%s\n", tier ? tier : "none");
	cr_assert_eq(fclose(f), 0);
}

static bool cgroup_idle(void)
{
	char path[600], buf[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/cgroup.procs", kh.cgroup);
	/* The killed tasks leave the cgroup once the kernel has torn them
	 * down: a moment after waitpid. */
	for (int i = 0; i < 100; i++) {
		FILE *f = fopen(path, "re");
		bool empty;

		if (!f)
			return false;
		empty = !fgets(buf, sizeof(buf), f);
		fclose(f);
		if (empty)
			break;
		if (i == 99)
			return false;
		usleep(10000);
	}
	d = opendir(kh.cgroup);
	if (!d)
		return false;
	while ((de = readdir(d)))
		if (de->d_type == DT_DIR && de->d_name[0] != '.') {
			closedir(d);
			return false;
		}
	closedir(d);
	return true;
}

bool kh_pool_give(void)
{
	char path[300], slot[200], tmp[220], tier[32] = "";
	FILE *f;

	if (fresh_only() || !kh.loaded || !kh.cgroup_made || !kh.dir[0])
		return false;
	snprintf(path, sizeof(path), "%s/" WORLD "/tier", kh.dir);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(tier, sizeof(tier), f))
		tier[0] = '\0';
	fclose(f);
	tier[strcspn(tier, "\n")] = '\0';
	if (!tier[0] || !cgroup_idle() || !same_pins())
		return false;
	slot_path(slot, sizeof(slot), getppid(), !strcmp(tier, "none") ? NULL : tier);
	if (!access(slot, F_OK))
		return false; /* one world a slot: this one goes */
	snprintf(tmp, sizeof(tmp), "%s.%d", slot, (int)getpid());
	f = fopen(tmp, "we");
	if (!f)
		return false;
	fprintf(f, "%s\n%s\n%s\n", kh.dir, kh.cgroup, kh.pin_dir);
	if (fclose(f) || rename(tmp, slot)) {
		unlink(tmp);
		return false;
	}
	return true;
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

/* Empties the scratch dir but for the record, then puts the state dir back
 * as the load left it and the issuer dir, empty. */
static int reset_dir(void)
{
	char path[300], out[2048];
	struct dirent *de;
	DIR *d = opendir(kh.dir);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char p[400];

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, WORLD))
			continue;
		snprintf(p, sizeof(p), "%s/%s", kh.dir, de->d_name);
		nftw(p, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	}
	closedir(d);
	snprintf(path, sizeof(path), "%s/" WORLD "/state", kh.dir);
	if (kh_run(out, sizeof(out), "cp", "-a", path, kh.state_dir, NULL))
		return -EIO;
	return mkdir(kh.keys_dir, 0700) ? -errno : 0;
}

bool kh_pool_take(const char *tier)
{
	char slot[200], claimed[220], dir[128] = "", cgroup[512] = "", pin[128] = "";
	char err[512];
	FILE *f;

	if (fresh_only())
		return false;
	slot_path(slot, sizeof(slot), getppid(), tier);
	snprintf(claimed, sizeof(claimed), "%s.taken-%d", slot, (int)getpid());
	if (rename(slot, claimed))
		return false;
	f = fopen(claimed, "re");
	if (f) {
		if (!fgets(dir, sizeof(dir), f) || !fgets(cgroup, sizeof(cgroup), f) ||
		    !fgets(pin, sizeof(pin), f))
			dir[0] = '\0';
		fclose(f);
	}
	unlink(claimed);
	dir[strcspn(dir, "\n")] = '\0';
	cgroup[strcspn(cgroup, "\n")] = '\0';
	pin[strcspn(pin, "\n")] = '\0';
	if (!dir[0] || !cgroup[0] || !pin[0])
		return false;
	snprintf(kh.dir, sizeof(kh.dir), "%s", dir);
	snprintf(kh.cgroup, sizeof(kh.cgroup), "%s", cgroup);
	snprintf(kh.pin_dir, sizeof(kh.pin_dir), "%s", pin);
	snprintf(kh.state_dir, sizeof(kh.state_dir), "%s/state", kh.dir);
	snprintf(kh.keys_dir, sizeof(kh.keys_dir), "%s/issuer", kh.dir);
	kh.cgroup_made = kh.loaded = true;
	/* From here, a world that cannot be reset is destroyed by the caller's
	 * teardown and replaced by a fresh load. */
	if (!same_pins() || each_map(false) || reset_dir() ||
	    eg_maps_open(&kh.maps, kh.pin_dir, err, sizeof(err)))
		return false;
	kh.maps_open = true;
	return true;
}

/* The end of the run: whatever is pooled is unloaded and removed. In the
 * runner, where no Criterion assertion may run. */
static void destroy_slot(const char *slot)
{
	char dir[128] = "", cgroup[512] = "", pin[128] = "", state[160];
	const char *bin = getenv("EXECGATE_BIN");
	FILE *f = fopen(slot, "re");
	pid_t pid;

	if (!f)
		return;
	if (!fgets(dir, sizeof(dir), f) || !fgets(cgroup, sizeof(cgroup), f) ||
	    !fgets(pin, sizeof(pin), f))
		dir[0] = '\0';
	fclose(f);
	unlink(slot);
	dir[strcspn(dir, "\n")] = '\0';
	cgroup[strcspn(cgroup, "\n")] = '\0';
	pin[strcspn(pin, "\n")] = '\0';
	if (!dir[0] || strncmp(dir, "/tmp/egk-", 9))
		return;
	snprintf(state, sizeof(state), "%s/state", dir);
	if (bin && (pid = fork()) == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execl(bin, bin, "unload", "--pin-dir", pin, "--state-dir", state, (char *)NULL);
		_exit(127);
	} else if (bin && pid > 0) {
		waitpid(pid, NULL, 0);
	}
	for (int i = 0; i < 100 && rmdir(cgroup) && errno == EBUSY; i++)
		usleep(10000);
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
	char prefix[64];
	struct dirent *de;
	DIR *d = opendir("/tmp");

	(void)stats;
	if (!d)
		return;
	snprintf(prefix, sizeof(prefix), "egk-pool-%d-", (int)getpid());
	while ((de = readdir(d))) {
		char slot[400];

		if (strncmp(de->d_name, prefix, strlen(prefix)) || strchr(de->d_name, '.'))
			continue;
		snprintf(slot, sizeof(slot), "/tmp/%s", de->d_name);
		destroy_slot(slot);
	}
	closedir(d);
}
