// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include "loader/endpoints/path_filter.h"

int eg_path_key_make(const char *path, struct eg_path_key *key)
{
	size_t len = strlen(path);

	if (len == 0 || path[0] != '/' || len >= EG_UNIX_PATH_MAX)
		return -EINVAL;
	memset(key, 0, sizeof(*key));
	memcpy(key->path, path, len);
	return 0;
}

void eg_path_filter_key_make(const struct eg_path_key *key, struct eg_path_filter_key *fk)
{
	size_t len = strnlen(key->path, EG_UNIX_PATH_MAX), last;

	memset(fk, 0, sizeof(*fk));
	fk->len = (__u32)len;
	if (!len)
		return;
	/* key->path is NUL padded, so whole chunks already read as zero
	 * past the end. */
	memcpy(&fk->head, key->path, len < 8 ? len : 8);
	last = 8 * ((len - 1) / 8);
	memcpy(&fk->tail, key->path + last, len - last);
}

int eg_path_hint_set(int hint_fd, const struct eg_path_filter_key *fk)
{
	__u32 bit = eg_path_hint_bit(fk), word = bit >> 6;
	__u64 w;

	if (bpf_map_lookup_elem(hint_fd, &word, &w))
		return -errno;
	if (w & (1ULL << (bit & 63)))
		return 0;
	/* An aligned 8-byte value: BPF reads the old word or the new one. */
	w |= 1ULL << (bit & 63);
	return bpf_map_update_elem(hint_fd, &word, &w, BPF_EXIST) ? -errno : 0;
}
