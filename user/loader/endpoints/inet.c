// SPDX-License-Identifier: Apache-2.0
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include "loader/endpoints/inet.h"
#include "loader/maps/view.h"

static const __u8 v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

int eg_inet_key_check(const struct eg_inet_key *k, struct eg_inet_key *out)
{
	struct eg_inet_key c;

	memset(&c, 0, sizeof(c));
	if (k->family == AF_INET6 && !memcmp(k->addr, v4_mapped, sizeof(v4_mapped))) {
		c.family = AF_INET;
		memcpy(c.addr, k->addr + 12, 4);
	} else if (k->family == AF_INET) {
		c.family = AF_INET;
		memcpy(c.addr, k->addr, 4);
	} else if (k->family == AF_INET6) {
		static const __u8 zero[16];

		c.family = AF_INET6;
		memcpy(c.addr, k->addr, 16);
		if (!memcmp(c.addr, zero, 16) || c.addr[0] == 0xff)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (c.family == AF_INET) {
		__u32 a = ntohl(*(const __u32 *)c.addr);

		if (a == 0 || a == 0xffffffffu || (a >> 28) == 0xe)
			return -EINVAL;
	}
	*out = c;
	return 0;
}

int eg_inet_key_parse(const char *text, struct eg_inet_key *out)
{
	struct eg_inet_key k;

	memset(&k, 0, sizeof(k));
	if (inet_pton(AF_INET, text, k.addr) == 1)
		k.family = AF_INET;
	else if (inet_pton(AF_INET6, text, k.addr) == 1)
		k.family = AF_INET6;
	else
		return -EINVAL;
	return eg_inet_key_check(&k, out);
}

const char *eg_inet_key_format(const struct eg_inet_key *k, char *buf)
{
	if ((k->family != AF_INET && k->family != AF_INET6) ||
	    !inet_ntop((int)k->family, k->addr, buf, EG_INET_TEXT_MAX))
		snprintf(buf, EG_INET_TEXT_MAX, "family %u", k->family);
	return buf;
}

int eg_inet_addr_parse(const char *text, struct eg_inet_addr *out)
{
	struct eg_inet_key k;
	int rc = eg_inet_key_parse(text, &k);

	if (!rc)
		eg_inet_addr_of(&k, out);
	return rc;
}

const char *eg_inet_addr_format(const struct eg_inet_addr *a, char *buf)
{
	struct eg_inet_key k;

	eg_inet_key_of(a, &k);
	return eg_inet_key_format(&k, buf);
}

int eg_inet_hint_set(int hint_fd, const struct eg_inet_key *k)
{
	__u32 bit = eg_inet_hint_bit(k), idx = bit >> 6;
	__u64 w = 0;

	if (bpf_map_lookup_elem(hint_fd, &idx, &w))
		return -errno;
	if (w & (1ULL << (bit & 63)))
		return 0;
	w |= 1ULL << (bit & 63);
	/* Single writer (the state dir lock); a concurrent BPF reader sees
	 * the old or the new word, both safe. */
	return bpf_map_update_elem(hint_fd, &idx, &w, BPF_ANY) ? -errno : 0;
}

int eg_service_grant_read(const struct eg_maps *m, const struct eg_service_grant_key *key,
			  struct eg_service_grant *out)
{
	return bpf_map_lookup_elem_flags(m->fd[EG_MAP_SERVICE_GRANTS], key, out, BPF_F_LOCK)
		   ? -errno
		   : 0;
}

int eg_service_grant_write(const struct eg_maps *m, const struct eg_service_grant *g)
{
	return bpf_map_update_elem(m->fd[EG_MAP_SERVICE_GRANTS], &g->key, g, BPF_F_LOCK) ? -errno
											 : 0;
}

int eg_service_grants_gc(const struct eg_maps *m, const __u8 *sandbox, uint64_t boot_ns,
			 unsigned *removed)
{
	int fd = m->fd[EG_MAP_SERVICE_GRANTS];
	struct eg_service_grant_key key, next;
	struct eg_exec_record rec;
	struct eg_service_grant g;
	bool have = false;
	int rc = 0, del;

	while (!bpf_map_get_next_key(fd, have ? &key : NULL, &next)) {
		have = true;
		key = next;
		if (eg_service_grant_read(m, &key, &g))
			continue;
		if (sandbox && memcmp(key.sandbox, sandbox, EG_ID_BYTES))
			continue;
		if (g.expiry_ns > boot_ns && !eg_record_read(m, key.sandbox, &rec) &&
		    rec.state == EG_RECORD_ACTIVE && rec.epoch == g.epoch &&
		    rec.generation == g.generation)
			continue;
		/* Tombstone first, as eg_grants_gc does (loader/records/admit.c): a
		 * reader that raced the delete and a re-use sees zeros. */
		g.generation = g.epoch = g.expiry_ns = 0;
		if (eg_service_grant_write(m, &g) && errno != ENOENT)
			continue;
		del = eg_map_delete_counted(fd, &key, removed);
		rc = del ? del : rc;
	}
	return rc;
}

int eg_service_grants_revoke(const struct eg_maps *m, __u32 tgid, const __u8 *sandbox,
			     unsigned *removed)
{
	static __thread struct eg_service_grant_key keys[EG_INET_REVOKE_MAX];
	int fd = m->fd[EG_MAP_SERVICE_GRANTS];
	struct eg_service_grant_key key, next;
	struct eg_service_grant g;
	bool have = false;
	size_t n = 0;
	int rc = 0, del;

	if (fd < 0)
		return 0;
	/* Collected first: deleting under the cursor would restart the walk. */
	while (n < EG_INET_REVOKE_MAX && !bpf_map_get_next_key(fd, have ? &key : NULL, &next)) {
		have = true;
		key = next;
		if (key.proc.tgid == tgid && !memcmp(key.sandbox, sandbox, EG_ID_BYTES))
			keys[n++] = key;
	}
	for (size_t i = 0; i < n; i++) {
		if (eg_service_grant_read(m, &keys[i], &g))
			continue;
		/* Tombstone first, as eg_service_grants_gc does. */
		g.generation = g.epoch = g.expiry_ns = 0;
		if (eg_service_grant_write(m, &g) && errno != ENOENT)
			continue;
		del = eg_map_delete_counted(fd, &keys[i], removed);
		rc = rc ? rc : del;
	}
	return rc;
}
