// SPDX-License-Identifier: Apache-2.0
/* A loaded world handed from one kernel test to the next (world_pool.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
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

#define WORLD ".world"

static struct kh_world kh_world(void)
{
	return (struct kh_world){
	    .dir = kh.dir,
	    .cgroup = kh.cgroup,
	    .pin_dir = kh.pin_dir,
	    .state_dir = kh.state_dir,
	    .dir_size = sizeof(kh.dir),
	    .cgroup_size = sizeof(kh.cgroup),
	    .pin_size = sizeof(kh.pin_dir),
	    .state_size = sizeof(kh.state_dir),
	    .keys_sub = "issuer",
	};
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

static bool is_array(__u32 type)
{
	return type == BPF_MAP_TYPE_ARRAY || type == BPF_MAP_TYPE_PERCPU_ARRAY;
}

/* Every value of an array, index order, into vals (max_entries * vb): one
 * batch call where the kernel has it (5.6+), else one lookup an index. */
static int array_values(int fd, const struct bpf_map_info *mi, size_t vb, char *vals)
{
	__u32 n = mi->max_entries, count = n, out = 0;
	__u32 *keys = calloc(n, sizeof(*keys));
	int rc;

	if (!keys)
		return -ENOMEM;
	rc = bpf_map_lookup_batch(fd, NULL, &out, keys, vals, &count, NULL);
	free(keys);
	if ((rc == 0 || errno == ENOENT) && count == n)
		return 0;
	for (__u32 i = 0; i < n; i++)
		if (bpf_map_lookup_elem(fd, &i, vals + (size_t)i * vb))
			return -errno;
	return 0;
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
	if (is_array(mi->type)) {
		char *all = calloc(mi->max_entries, vb);

		rc = all ? array_values(fd, mi, vb, all) : -ENOMEM;
		for (__u32 i = 0; !rc && i < mi->max_entries; i++, h.count++)
			if (fwrite(&i, sizeof(i), 1, f) != 1 ||
			    fwrite(all + (size_t)i * vb, vb, 1, f) != 1)
				rc = -EIO;
		free(all);
		if (rc)
			goto out;
		first = false;
	}
	while (!is_array(mi->type) && !bpf_map_get_next_key(fd, first ? NULL : key, next)) {
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
 * array's entries cannot be deleted: each index that differs from the dump
 * is written over (most do not: thousands of hint and generation words,
 * a syscall each, made every reset cost a load's worth under TCG). */
static int restore_map(int fd, const struct bpf_map_info *mi, FILE *f)
{
	bool array = is_array(mi->type);
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
	if (array) {
		char *now = calloc(mi->max_entries, vb);

		rc = now ? array_values(fd, mi, vb, now) : -ENOMEM;
		for (__u32 i = 0; !rc && i < h.count; i++) {
			__u32 idx;

			if (fread(key, mi->key_size, 1, f) != 1 || fread(val, vb, 1, f) != 1) {
				rc = -EINVAL;
				break;
			}
			memcpy(&idx, key, sizeof(idx));
			if (idx >= mi->max_entries) {
				rc = -EINVAL;
				break;
			}
			if (memcmp(now + (size_t)idx * vb, val, vb) &&
			    bpf_map_update_elem(fd, key, val, BPF_ANY))
				rc = -errno;
		}
		free(now);
		goto out;
	}
	{
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
static bool same_pins(const struct kh_world *w)
{
	char path[300], *now = NULL, *then = NULL;
	FILE *f = tmpfile(), *g;
	bool same = false;

	if (!f)
		return false;
	snprintf(path, sizeof(path), "%s/" WORLD "/pins", w->dir);
	g = fopen(path, "re");
	if (g && list_pins(w->pin_dir, f) > 0 && !fseek(f, 0, SEEK_SET)) {
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

static int each_map(const struct kh_world *w, bool save)
{
	char dir[400];
	struct dirent *de;
	DIR *d = opendir(w->pin_dir);
	int rc = 0;

	if (!d)
		return -errno;
	snprintf(dir, sizeof(dir), "%s/" WORLD "/maps", w->dir);
	while (!rc && (de = readdir(d))) {
		char pin[400], file[700];
		struct bpf_map_info mi;
		FILE *f;
		int fd;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "links"))
			continue;
		snprintf(pin, sizeof(pin), "%s/%s", w->pin_dir, de->d_name);
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

/* cp -a from to, in this process: directories, regular files and symbolic
 * links with their mode, owner and times. An exec of cp for each record
 * and each reset cost a process start per test, which under TCG is a
 * good part of a second. 0 or a negative errno. */
static int copy_tree(const char *from, const char *to)
{
	struct timespec times[2];
	struct stat st;
	int rc = 0;

	if (lstat(from, &st))
		return -errno;
	times[0] = st.st_atim;
	times[1] = st.st_mtim;
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlink(from, target, sizeof(target) - 1);

		if (n < 0)
			return -errno;
		target[n] = '\0';
		if (symlink(target, to))
			return -errno;
	} else if (S_ISDIR(st.st_mode)) {
		struct dirent *de;
		DIR *d;

		if (mkdir(to, 0700))
			return -errno;
		d = opendir(from);
		if (!d)
			return -errno;
		while (!rc && (de = readdir(d))) {
			char a[PATH_MAX], b[PATH_MAX];

			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if ((size_t)snprintf(a, sizeof(a), "%s/%s", from, de->d_name) >=
				sizeof(a) ||
			    (size_t)snprintf(b, sizeof(b), "%s/%s", to, de->d_name) >= sizeof(b))
				rc = -ENAMETOOLONG;
			else
				rc = copy_tree(a, b);
		}
		closedir(d);
	} else if (S_ISREG(st.st_mode)) {
		char buf[65536];
		ssize_t n = 0;
		int in = open(from, O_RDONLY | O_CLOEXEC), out;

		if (in < 0)
			return -errno;
		out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (out < 0) {
			rc = -errno;
			close(in);
			return rc;
		}
		while (!rc && (n = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, (size_t)n) != n)
				rc = -EIO;
		if (n < 0)
			rc = -errno;
		close(in);
		if (close(out) && !rc)
			rc = -errno;
	} else {
		return -EINVAL; /* no fifo, socket or device in a state dir */
	}
	if (!rc && fchownat(AT_FDCWD, to, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW))
		rc = -errno;
	if (!rc && !S_ISLNK(st.st_mode) && chmod(to, st.st_mode & 07777))
		rc = -errno;
	if (!rc && utimensat(AT_FDCWD, to, times, AT_SYMLINK_NOFOLLOW))
		rc = -errno;
	return rc;
}

void kh_world_record(const char *slot_name, const struct kh_world *w)
{
	char path[300];
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/" WORLD, w->dir);
	cr_assert_eq(mkdir(path, 0700), 0, "mkdir %s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/" WORLD "/maps", w->dir);
	cr_assert_eq(mkdir(path, 0700), 0, "mkdir %s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/" WORLD "/pins", w->dir);
	f = fopen(path, "we");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	rc = list_pins(w->pin_dir, f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_gt(rc, 0, "listing the pins of %s: %s", w->pin_dir, strerror(-rc));
	rc = each_map(w, true);
	cr_assert_eq(rc, 0, "recording the maps of %s: %s", w->pin_dir, strerror(-rc));
	snprintf(path, sizeof(path), "%s/" WORLD "/state", w->dir);
	if (access(w->state_dir, F_OK) == 0) {
		rc = copy_tree(w->state_dir, path);
		cr_assert_eq(rc, 0, "copying %s to %s: %s", w->state_dir, path, strerror(-rc));
	}
	snprintf(path, sizeof(path), "%s/" WORLD "/slot", w->dir);
	f = fopen(path, "we");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fprintf(f, "%s\n", slot_name);
	cr_assert_eq(fclose(f), 0);
}

void kh_pool_record(const char *tier)
{
	struct kh_world w = kh_world();

	kh_world_record(tier ? tier : "none", &w);
}

static bool cgroup_idle(const char *cgroup)
{
	char path[600], buf[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
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
	d = opendir(cgroup);
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

/* The pool's name: the Criterion run's (its runner's pid, which is the
 * test's parent), or EXECGATE_POOL_ID's, which several runs one after the
 * other share (scripts/vm-suites.sh: one run a suite, one pool a guest).
 * Only letters, digits, '-' and '_': it is part of a path. */
void kh_pool_id(char *out, size_t size, bool in_runner)
{
	pid_t runner = in_runner ? getpid() : getppid();
	const char *id = getenv("EXECGATE_POOL_ID");

	if (id && *id && strlen(id) <= 32 &&
	    strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") ==
		strlen(id))
		snprintf(out, size, "%s", id);
	else
		snprintf(out, size, "%d", (int)runner);
}

bool kh_pool_kept(void)
{
	const char *keep = getenv("EXECGATE_POOL_KEEP");

	return keep && !strcmp(keep, "1") && getenv("EXECGATE_POOL_ID");
}

/* The slot a world goes to: "egk-pool-<pool>-<name>" under /tmp. */
static void slot_of(char *out, size_t size, bool in_runner, const char *name)
{
	char id[40];

	kh_pool_id(id, sizeof(id), in_runner);
	snprintf(out, size, "/tmp/egk-pool-%s-%s", id, name);
}

bool kh_world_give(const struct kh_world *w)
{
	char path[300], slot[200], tmp[220], name[32] = "";
	FILE *f;

	if (fresh_only() || !w->dir[0])
		return false;
	snprintf(path, sizeof(path), "%s/" WORLD "/slot", w->dir);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(name, sizeof(name), f))
		name[0] = '\0';
	fclose(f);
	name[strcspn(name, "\n")] = '\0';
	if (!name[0])
		return false;
	if (!cgroup_idle(w->cgroup)) {
		kh_exec_note("pool-refused busy-cgroup", name);
		return false;
	}
	if (!same_pins(w)) {
		kh_exec_note("pool-refused other-pins", name);
		return false;
	}
	slot_of(slot, sizeof(slot), false, name);
	if (!access(slot, F_OK)) {
		kh_exec_note("pool-refused slot-taken", name);
		return false; /* one world a slot: this one goes */
	}
	snprintf(tmp, sizeof(tmp), "%s.%d", slot, (int)getpid());
	f = fopen(tmp, "we");
	if (!f)
		return false;
	fprintf(f, "%s\n%s\n%s\n%s\n", w->dir, w->cgroup, w->pin_dir, w->state_dir);
	if (fclose(f) || rename(tmp, slot)) {
		unlink(tmp);
		return false;
	}
	return true;
}

bool kh_pool_give(void)
{
	struct kh_world w = kh_world();

	if (!kh.loaded || !kh.cgroup_made)
		return false;
	return kh_world_give(&w);
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

/* Empties the scratch dir but for the record, then puts the state dir back
 * as the load left it and the issuer dir, empty. */
static int reset_dir(const struct kh_world *w)
{
	char path[300];
	struct dirent *de;
	DIR *d = opendir(w->dir);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char p[400];

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, WORLD))
			continue;
		snprintf(p, sizeof(p), "%s/%s", w->dir, de->d_name);
		nftw(p, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	}
	closedir(d);
	nftw(w->state_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	snprintf(path, sizeof(path), "%s/" WORLD "/state", w->dir);
	if (access(path, F_OK) == 0 && copy_tree(path, w->state_dir))
		return -EIO;
	if (w->keys_sub) {
		snprintf(path, sizeof(path), "%s/%s", w->dir, w->keys_sub);
		if (mkdir(path, 0700))
			return -errno;
	}
	return 0;
}

/* Fills w's paths from the slot name's world; false when there is none or
 * it cannot be reset (then w names it, for the caller to destroy). */
bool kh_world_take(const char *name, struct kh_world *w)
{
	char slot[200], claimed[220], line[4][512];
	FILE *f;
	bool ok = false;

	if (fresh_only())
		return false;
	slot_of(slot, sizeof(slot), false, name);
	snprintf(claimed, sizeof(claimed), "%s.taken-%d", slot, (int)getpid());
	if (rename(slot, claimed))
		return false;
	f = fopen(claimed, "re");
	if (f) {
		ok = true;
		for (int i = 0; i < 4; i++) {
			if (!fgets(line[i], sizeof(line[i]), f))
				ok = false;
			else
				line[i][strcspn(line[i], "\n")] = '\0';
		}
		fclose(f);
	}
	unlink(claimed);
	if (!ok)
		return false;
	snprintf(w->dir, w->dir_size, "%s", line[0]);
	snprintf(w->cgroup, w->cgroup_size, "%s", line[1]);
	snprintf(w->pin_dir, w->pin_size, "%s", line[2]);
	snprintf(w->state_dir, w->state_size, "%s", line[3]);
	if (!same_pins(w) || each_map(w, false) || reset_dir(w)) {
		kh_exec_note("pool-reset-failed", name);
		return false;
	}
	return true;
}

bool kh_pool_take(const char *tier)
{
	struct kh_world w = kh_world();
	char err[512];
	bool ok;

	ok = kh_world_take(tier ? tier : "none", &w);
	if (!kh.dir[0]) {
		kh_exec_note("pool-empty", tier ? tier : "none");
		return false;
	}
	/* From here kh names the world: one that cannot be reset is destroyed
	 * by the caller and replaced by a fresh load. */
	snprintf(kh.keys_dir, sizeof(kh.keys_dir), "%s/issuer", kh.dir);
	kh.cgroup_made = kh.loaded = true;
	if (!ok || eg_maps_open(&kh.maps, kh.pin_dir, err, sizeof(err)))
		return false;
	kh.maps_open = true;
	return true;
}

/* The end of the run: whatever is pooled is unloaded and removed. In the
 * runner, where no Criterion assertion may run. */
static void destroy_slot(const char *slot)
{
	char dir[128] = "", cgroup[512] = "", pin[128] = "", state[160] = "";
	const char *bin = getenv("EXECGATE_BIN");
	FILE *f = fopen(slot, "re");
	pid_t pid;

	if (!f)
		return;
	if (!fgets(dir, sizeof(dir), f) || !fgets(cgroup, sizeof(cgroup), f) ||
	    !fgets(pin, sizeof(pin), f) || !fgets(state, sizeof(state), f))
		dir[0] = '\0';
	fclose(f);
	unlink(slot);
	dir[strcspn(dir, "\n")] = '\0';
	cgroup[strcspn(cgroup, "\n")] = '\0';
	pin[strcspn(pin, "\n")] = '\0';
	state[strcspn(state, "\n")] = '\0';
	/* Only what the harness names: a scratch dir under /tmp. */
	if (!dir[0] || (strncmp(dir, "/tmp/egk-", 9) && strncmp(dir, "/tmp/egt-lsm-", 13)))
		return;
	if (bin && (pid = fork()) == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execl(bin, bin, "unload", "--pin-dir", pin, "--state-dir", state, (char *)NULL);
		_exit(127);
	} else if (bin && pid > 0) {
		waitpid(pid, NULL, 0);
	}
	if (kh_cgroup_remove(cgroup))
		fprintf(stderr, "world pool: scratch cgroup %s left behind: %s\n", cgroup,
			strerror(errno));
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	if (strcmp(state, dir) && !strncmp(state, "/tmp/egt-lsm-state-", 19))
		nftw(state, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* EXECGATE_POOL_KEEP=1 keeps them for the next run of the same
 * EXECGATE_POOL_ID; its last run (without it) removes them. */
ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
	char prefix[64], id[40];
	struct dirent *de;
	DIR *d;

	(void)stats;
	if (kh_pool_kept())
		return;
	d = opendir("/tmp");
	if (!d)
		return;
	kh_pool_id(id, sizeof(id), true);
	snprintf(prefix, sizeof(prefix), "egk-pool-%s-", id);
	while ((de = readdir(d))) {
		char slot[400];

		if (strncmp(de->d_name, prefix, strlen(prefix)) || strchr(de->d_name, '.'))
			continue;
		snprintf(slot, sizeof(slot), "/tmp/%s", de->d_name);
		destroy_slot(slot);
	}
	closedir(d);
}
