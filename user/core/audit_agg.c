// SPDX-License-Identifier: Apache-2.0
/* The rollout report's bounded aggregate (core/audit_agg.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include "core/audit_agg.h"

int eg_audit_agg_init(struct eg_audit_agg *a, size_t max_rows)
{
	memset(a, 0, sizeof(*a));
	if (!max_rows)
		max_rows = EG_AUDIT_ROWS_DEFAULT;
	if (max_rows > EG_AUDIT_ROWS_LIMIT)
		return -EINVAL;
	a->max_rows = max_rows;
	if (sodium_init() < 0)
		return -EIO;
	randombytes_buf(a->hash_key, sizeof(a->hash_key));
	a->nslots = 16;
	while (a->nslots < 2 * max_rows)
		a->nslots <<= 1;
	a->rows = calloc(max_rows, sizeof(*a->rows));
	a->slots = calloc(a->nslots, sizeof(*a->slots));
	if (!a->rows || !a->slots) {
		eg_audit_agg_free(a);
		return -ENOMEM;
	}
	return 0;
}

void eg_audit_agg_free(struct eg_audit_agg *a)
{
	for (size_t i = 0; i < a->nrows; i++)
		free((char *)a->rows[i].key.exe);
	free(a->rows);
	free(a->slots);
	memset(a, 0, sizeof(*a));
}

/* SipHash under a key of this aggregate's own: the keys are the callers'
 * bytes, and a table whose slots they could choose would turn every
 * event's lookup into a walk of all the rows. */
_Static_assert(sizeof(((struct eg_audit_agg *)0)->hash_key) == crypto_shorthash_KEYBYTES,
	       "a SipHash key");

static uint64_t key_hash(const struct eg_audit_agg *a, const struct eg_audit_key *k)
{
	static __thread unsigned char
	    buf[2 * EG_AUDIT_NAME_MAX + EG_ID_BYTES + EG_AUDIT_COMM_LEN + 1 + EG_AUDIT_EXE_MAX];
	unsigned char h[crypto_shorthash_BYTES];
	size_t n = 0, len;
	uint64_t v;

	len = strnlen(k->reason, sizeof(k->reason));
	memcpy(buf + n, k->reason, len);
	n += len;
	buf[n++] = '\0';
	len = strnlen(k->hook, sizeof(k->hook));
	memcpy(buf + n, k->hook, len);
	n += len;
	buf[n++] = '\0';
	memcpy(buf + n, k->sandbox, sizeof(k->sandbox));
	n += sizeof(k->sandbox);
	memcpy(buf + n, k->comm, sizeof(k->comm));
	n += sizeof(k->comm);
	/* unknown and "" differ: the marker byte is outside the path */
	buf[n++] = k->exe ? 'e' : 'u';
	if (k->exe) {
		len = strnlen(k->exe, EG_AUDIT_EXE_MAX - 1);
		memcpy(buf + n, k->exe, len);
		n += len;
	}
	crypto_shorthash(h, buf, n, a->hash_key);
	memcpy(&v, h, sizeof(v));
	return v;
}

static bool key_eq(const struct eg_audit_key *a, const struct eg_audit_key *b)
{
	return !strncmp(a->reason, b->reason, sizeof(a->reason)) &&
	       !strncmp(a->hook, b->hook, sizeof(a->hook)) &&
	       !memcmp(a->sandbox, b->sandbox, sizeof(a->sandbox)) &&
	       !memcmp(a->comm, b->comm, sizeof(a->comm)) && !a->exe == !b->exe &&
	       (!a->exe || !strncmp(a->exe, b->exe, EG_AUDIT_EXE_MAX - 1));
}

static void seen(uint64_t *count, int64_t *first, int64_t *last, int64_t wall_ns)
{
	if (!*count || wall_ns < *first)
		*first = wall_ns;
	if (!*count || wall_ns > *last)
		*last = wall_ns;
	(*count)++;
}

/* The row for k, made when there is room; NULL when the table is full or
 * the executable's copy cannot be made. */
static struct eg_audit_row *row_of(struct eg_audit_agg *a, const struct eg_audit_key *k)
{
	size_t mask = a->nslots - 1, i = (size_t)key_hash(a, k) & mask;
	struct eg_audit_row *r;
	char *exe = NULL;

	for (; a->slots[i]; i = (i + 1) & mask) {
		r = &a->rows[a->slots[i] - 1];
		if (key_eq(&r->key, k))
			return r;
	}
	if (a->nrows == a->max_rows)
		return NULL;
	if (k->exe) {
		exe = strndup(k->exe, EG_AUDIT_EXE_MAX - 1);
		if (!exe)
			return NULL;
	}
	r = &a->rows[a->nrows];
	memset(r, 0, sizeof(*r));
	memcpy(r->key.reason, k->reason, sizeof(r->key.reason));
	r->key.reason[sizeof(r->key.reason) - 1] = '\0';
	memcpy(r->key.hook, k->hook, sizeof(r->key.hook));
	r->key.hook[sizeof(r->key.hook) - 1] = '\0';
	memcpy(r->key.sandbox, k->sandbox, sizeof(r->key.sandbox));
	memcpy(r->key.comm, k->comm, sizeof(r->key.comm));
	r->key.exe = exe;
	a->slots[i] = (uint32_t)++a->nrows;
	return r;
}

void eg_audit_agg_add(struct eg_audit_agg *a, const struct eg_audit_key *k, int64_t wall_ns)
{
	struct eg_audit_row *r = row_of(a, k);

	a->events++;
	if (r)
		seen(&r->count, &r->first_ns, &r->last_ns, wall_ns);
	else
		seen(&a->other.count, &a->other.first_ns, &a->other.last_ns, wall_ns);
}

char *eg_audit_escape(const char *s, size_t max, char *out, size_t out_size)
{
	size_t n = strnlen(s, max), o = 0;

	if (!out_size)
		return out;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c > 0x20 && c < 0x7f) {
			if (o + 1 >= out_size)
				break;
			out[o++] = (char)c;
		} else {
			if (o + 4 >= out_size)
				break;
			o += (size_t)snprintf(out + o, 5, "\\x%02x", c);
		}
	}
	out[o] = '\0';
	return out;
}
