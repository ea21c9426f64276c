// SPDX-License-Identifier: Apache-2.0
/* The selections in force (fleetd/worker_impl.h): the table by sandbox,
 * each selection verified against the worker's key set, and its copy on
 * disk that a restart reads back. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "core/fd_io.h"
#include "core/fleet_apply.h"
#include "core/ids.h"
#include "execgate/text.h"
#include "fleetd/worker_impl.h"

void eg_fw_sel_dir(const struct eg_fleet_worker *d, char *out, size_t size)
{
	snprintf(out, size, "%s/fleet/selections", d->state_dir);
}

static size_t slot_of(const uint8_t sandbox[EG_ID_BYTES], size_t cap)
{
	uint64_t h;

	memcpy(&h, sandbox + 8, sizeof(h));
	h ^= h >> 29;
	h *= 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 17) & (cap - 1);
}

static void index_put(uint32_t *idx, size_t cap, const uint8_t sandbox[EG_ID_BYTES], size_t i)
{
	size_t j = slot_of(sandbox, cap);

	while (idx[j])
		j = (j + 1) & (cap - 1);
	idx[j] = (uint32_t)(i + 1);
}

/* The index again over sels (cap: its new size, a power of two). */
static int reindex(struct eg_fleet_worker *d, size_t cap)
{
	uint32_t *idx = cap == d->idx_cap ? d->idx : calloc(cap, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	memset(idx, 0, cap * sizeof(*idx));
	for (size_t i = 0; i < d->n_sels; i++)
		index_put(idx, cap, d->sels[i].sandbox, i);
	if (idx != d->idx)
		free(d->idx);
	d->idx = idx;
	d->idx_cap = cap;
	return 0;
}

struct eg_fw_sel *eg_fw_find(struct eg_fleet_worker *d, const uint8_t sandbox[EG_ID_BYTES])
{
	if (!d->idx_cap)
		return NULL;
	for (size_t j = slot_of(sandbox, d->idx_cap); d->idx[j]; j = (j + 1) & (d->idx_cap - 1))
		if (!memcmp(d->sels[d->idx[j] - 1].sandbox, sandbox, EG_ID_BYTES))
			return &d->sels[d->idx[j] - 1];
	return NULL;
}

/* A new entry for a selection that has just verified (never for a refused
 * document: those cost no memory). NULL when out of memory. */
struct eg_fw_sel *eg_fw_insert(struct eg_fleet_worker *d, const uint8_t sandbox[EG_ID_BYTES])
{
	struct eg_fw_sel *s;

	if (d->n_sels == d->cap_sels) {
		size_t cap = d->cap_sels ? d->cap_sels * 2 : 64;
		struct eg_fw_sel *n = realloc(d->sels, cap * sizeof(*n));

		if (!n)
			return NULL;
		d->sels = n;
		d->cap_sels = cap;
	}
	if ((d->n_sels + 1) * 2 > d->idx_cap && reindex(d, d->idx_cap ? d->idx_cap * 2 : 128))
		return NULL;
	s = &d->sels[d->n_sels];
	memset(s, 0, sizeof(*s));
	memcpy(s->sandbox, sandbox, EG_ID_BYTES);
	index_put(d->idx, d->idx_cap, sandbox, d->n_sels);
	d->n_sels++;
	return s;
}

/* Forgets the selection in force s (its key was withdrawn), on disk too. */
void eg_fw_drop(struct eg_fleet_worker *d, struct eg_fw_sel *s)
{
	char dir[512 + 32], path[512 + 80], u[EG_UUID_TEXT_LEN];
	size_t i = (size_t)(s - d->sels);

	eg_fw_sel_dir(d, dir, sizeof(dir));
	eg_uuid_to_text(s->sandbox, u);
	snprintf(path, sizeof(path), "%s/%s", dir, u);
	if (unlink(path) && errno != ENOENT)
		eg_fw_log(d, 3, "fleet: sandbox %s: removing %s failed: %s", u, path,
			  strerror(errno));
	d->sels[i] = d->sels[--d->n_sels];
	reindex(d, d->idx_cap); /* in place: cannot fail */
	d->dropped++;
}

struct key_find {
	char kid[EG_KID_TEXT_LEN];
	uint8_t pk[32];
	bool found;
};

static int key_find_cb(const char *kid, const uint8_t pk[32], void *ctx)
{
	struct key_find *k = ctx;

	if (strcmp(kid, k->kid))
		return 0;
	memcpy(k->pk, pk, 32);
	k->found = true;
	return 1;
}

/* The key key_id among the worker's keys: k->found, k->pk. */
static void find_key(struct eg_fleet_worker *d, const uint8_t key_id[EG_KEY_ID_LEN],
		     struct key_find *k)
{
	k->found = false;
	eg_key_id_format(key_id, k->kid);
	d->be->keys_list(d->be_ctx, key_find_cb, k);
}

/* Decode, then verify against the worker's key set: only the key the
 * selection names is looked up (no copy of the set, no point checks), so
 * a refused document costs a decode and a scan of at most 64 key ids. */
enum eg_sel_err eg_fw_verify_sel(struct eg_fleet_worker *d, const uint8_t *raw, size_t len,
				 struct eg_selection *out)
{
	struct eg_selection sel;
	struct key_find k;
	enum eg_sel_err e = eg_sel_decode(raw, len, &sel);

	if (e != EG_SEL_OK)
		return e;
	find_key(d, sel.key_id, &k);
	if (!k.found)
		return EG_SEL_UNKNOWN_KEY;
	return eg_sel_verify(raw, len, k.pk, out);
}

bool eg_fw_sel_key_unknown(struct eg_fleet_worker *d, const char *text, size_t len)
{
	uint8_t raw[EG_SEL_MAX_LEN];
	struct eg_selection sel;
	struct key_find k;
	size_t raw_len = 0;

	if (eg_sel_text_to_bin(text, len, raw, &raw_len) != EG_SEL_OK ||
	    eg_sel_decode(raw, raw_len, &sel) != EG_SEL_OK)
		return false;
	find_key(d, sel.key_id, &k);
	return !k.found;
}

/* <state_dir>/fleet/selections/<uuid>: "<mod_revision> <text>\n", written
 * crash-safe, so that a restart knows the selection in force and refuses
 * an older replay. */
int eg_fw_store_selection(struct eg_fleet_worker *d, const struct eg_fw_sel *s)
{
	char dir[512 + 32], path[512 + 80], u[EG_UUID_TEXT_LEN], line[400], text[EG_SEL_TEXT_MAX];
	int n;

	eg_fw_sel_dir(d, dir, sizeof(dir));
	eg_uuid_to_text(s->sandbox, u);
	snprintf(path, sizeof(path), "%s/%s", dir, u);
	eg_sel_to_text(s->raw, s->raw_len, text);
	n = snprintf(line, sizeof(line), "%lld %s\n", (long long)s->sel_rev, text);
	return eg_write_file_atomic(path, line, (size_t)n, 0600);
}

/* The stored selections are this daemon's own state (0600 under
 * state_dir, like the keys): decoded strictly and verified again against
 * the keys in force. One whose key is no longer in the set (withdrawn
 * while the daemon was down, or before a crash let it drop the file) is
 * dropped, its record left as it is (docs/fleet.md, "Withdrawal"); any
 * other failure stops the start: a restart must not accept an older
 * replay because its record of the newer one is unreadable. */
int eg_fw_load_selections(struct eg_fleet_worker *d, char *err, size_t err_size)
{
	char dir[512 + 32], path[512 + 300];
	struct dirent *de;
	DIR *dh;

	eg_fw_sel_dir(d, dir, sizeof(dir));
	dh = opendir(dir);
	if (!dh) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, err_size, "fleet: %s: %s", dir, strerror(errno));
		return -errno;
	}
	while ((de = readdir(dh))) {
		uint8_t id[EG_ID_BYTES], raw[EG_SEL_MAX_LEN];
		char line[400], text[EG_SEL_TEXT_MAX];
		enum eg_sel_err serr = EG_SEL_BAD_TEXT;
		struct eg_fw_sel *s;
		struct eg_selection sel;
		size_t raw_len = 0;
		long long rev;
		FILE *fp;
		bool ok;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		ok = !eg_uuid_from_text(de->d_name, id);
		fp = ok ? fopen(path, "re") : NULL;
		ok = fp && fgets(line, sizeof(line), fp) &&
		     sscanf(line, "%lld %255s", &rev, text) == 2 && rev > 0 &&
		     eg_sel_text_to_bin(text, strlen(text), raw, &raw_len) == EG_SEL_OK &&
		     eg_sel_decode(raw, raw_len, &sel) == EG_SEL_OK &&
		     !memcmp(sel.id.sandbox, id, EG_ID_BYTES);
		if (fp)
			fclose(fp);
		if (ok)
			serr = eg_fw_verify_sel(d, raw, raw_len, &sel);
		if (ok && serr == EG_SEL_UNKNOWN_KEY) {
			char kid[EG_KID_TEXT_LEN];

			eg_key_id_format(sel.key_id, kid);
			if (unlink(path)) {
				snprintf(err, err_size, "fleet: %s: %s", path, strerror(errno));
				closedir(dh);
				return -EIO;
			}
			d->dropped++;
			eg_fw_log(d, 4,
				  "fleet: sandbox %s: stored selection dropped: its key %s is not "
				  "in the key set any more (its record stays as it is)",
				  de->d_name, kid);
			continue;
		}
		if (!ok || serr != EG_SEL_OK) {
			/* Not trusted, and not silently dropped. */
			snprintf(err, err_size,
				 "fleet: %s: not a stored selection%s%s (remove it only if the "
				 "sandbox's selection is known)",
				 path, ok ? ": " : "", ok ? eg_sel_err_name(serr) : "");
			closedir(dh);
			return -EINVAL;
		}
		s = eg_fw_find(d, id);
		if (!s)
			s = eg_fw_insert(d, id);
		if (!s) {
			closedir(dh);
			snprintf(err, err_size, "fleet: %s", strerror(ENOMEM));
			return -ENOMEM;
		}
		s->has_sel = true;
		s->sel = sel;
		memcpy(s->raw, raw, raw_len);
		s->raw_len = raw_len;
		s->sel_rev = rev;
	}
	closedir(dh);
	return 0;
}
