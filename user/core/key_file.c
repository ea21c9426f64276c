// SPDX-License-Identifier: Apache-2.0
/* The typed key-file codec (core/key_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sodium.h>
#include "core/key_file.h"

struct key_type {
	const char *name;
	enum eg_key_alg alg;
	enum eg_key_kind kind;
	size_t bytes;
};

/* One row per type. A new algorithm or kind (the node key, user/lib/node_key.c) is a new
 * row; a new encoding of an existing one is a new version. */
static const struct key_type key_types[] = {
    {EG_KEY_TYPE_ED25519_PUBLIC, EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC,
     crypto_sign_PUBLICKEYBYTES},
    {EG_KEY_TYPE_ED25519_SECRET, EG_KEY_ALG_ED25519, EG_KEY_KIND_SECRET, crypto_sign_SEEDBYTES},
};

#define N_TYPES (sizeof(key_types) / sizeof(key_types[0]))

_Static_assert(crypto_sign_PUBLICKEYBYTES <= EG_KEY_FILE_MAX_KEY, "key fits");
_Static_assert(crypto_sign_SEEDBYTES <= EG_KEY_FILE_MAX_KEY, "seed fits");
_Static_assert(sizeof(EG_KEY_TYPE_ED25519_PUBLIC) <= 48, "type name fits");
_Static_assert(EG_KEY_FILE_LINE_MAX - 1 < EG_KEY_FILE_MAX, "a valid file is shorter than a read");

static const struct key_type *find_type(enum eg_key_alg alg, enum eg_key_kind kind)
{
	for (size_t i = 0; i < N_TYPES; i++)
		if (key_types[i].alg == alg && key_types[i].kind == kind)
			return &key_types[i];
	return NULL;
}

static const struct key_type *find_type_name(const char *name, size_t len)
{
	for (size_t i = 0; i < N_TYPES; i++)
		if (strlen(key_types[i].name) == len && !memcmp(key_types[i].name, name, len))
			return &key_types[i];
	return NULL;
}

const char *eg_key_type_name(enum eg_key_alg alg, enum eg_key_kind kind)
{
	const struct key_type *t = find_type(alg, kind);

	return t ? t->name : NULL;
}

/* Lowercase only: one key, one encoding, so files compare byte for byte. */
static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static bool is_any_hex(char c)
{
	return is_hex(c) || (c >= 'A' && c <= 'F');
}

static int hex_val(char c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

enum eg_key_err eg_key_file_decode(const char *text, size_t len, enum eg_key_alg alg,
				   enum eg_key_kind kind, uint8_t *out, size_t out_len)
{
	const struct key_type *want = find_type(alg, kind), *got;
	size_t type_len = 0, line_len, hex_len = 0, i;
	const char *nl, *hex;

	if (!want || want->bytes != out_len)
		return EG_KEY_FILE_UNKNOWN_TYPE;
	if (len == 0 || (len == 1 && text[0] == '\n'))
		return EG_KEY_FILE_EMPTY;
	while (type_len < len && text[type_len] != ' ' && text[type_len] != '\n' &&
	       text[type_len] != '\r')
		type_len++;
	/* The kind first: a secret is refused as a secret whatever follows,
	 * and its bytes are never decoded. */
	got = find_type_name(text, type_len);
	if (got && got->alg == want->alg && got->kind != want->kind)
		return got->kind == EG_KEY_KIND_SECRET ? EG_KEY_FILE_SECRET : EG_KEY_FILE_PUBLIC;
	if (memchr(text, '\r', len))
		return EG_KEY_FILE_CRLF;
	nl = memchr(text, '\n', len);
	line_len = nl ? (size_t)(nl - text) : len;
	if (line_len + 1 < len)
		return EG_KEY_FILE_TRAILING;
	if (got != want) {
		if (type_len == line_len) {
			/* The old reader took either case. */
			for (i = 0; i < line_len && is_any_hex(text[i]); i++)
				;
			if (i == line_len)
				return EG_KEY_FILE_UNTYPED;
		}
		return EG_KEY_FILE_UNKNOWN_TYPE;
	}
	/* "<type>" alone, or "<type> " with nothing after: no key. */
	if (type_len == line_len)
		return EG_KEY_FILE_WRONG_LENGTH;
	hex = text + type_len + 1;
	while (type_len + 1 + hex_len < line_len && is_hex(hex[hex_len]))
		hex_len++;
	if (type_len + 1 + hex_len < line_len)
		/* A whole key and then more (" comment", a second space) is
		 * trailing data; a bad byte inside the key is not hex. */
		return hex_len == 2 * want->bytes ? EG_KEY_FILE_TRAILING : EG_KEY_FILE_NOT_HEX;
	if (hex_len != 2 * want->bytes)
		return EG_KEY_FILE_WRONG_LENGTH;
	for (i = 0; i < want->bytes; i++)
		out[i] = (uint8_t)(hex_val(hex[2 * i]) << 4 | hex_val(hex[2 * i + 1]));
	return EG_KEY_OK;
}

int eg_key_file_encode(enum eg_key_alg alg, enum eg_key_kind kind, const uint8_t *key,
		       size_t key_len, char *out, size_t size)
{
	static const char digits[] = "0123456789abcdef";
	const struct key_type *t = find_type(alg, kind);
	size_t n, need;

	if (!t || t->bytes != key_len)
		return -EINVAL;
	n = strlen(t->name);
	need = n + 1 + 2 * key_len + 2;
	if (size < need)
		return -ENOSPC;
	memcpy(out, t->name, n);
	out[n++] = ' ';
	for (size_t i = 0; i < key_len; i++) {
		out[n++] = digits[key[i] >> 4];
		out[n++] = digits[key[i] & 0xf];
	}
	out[n++] = '\n';
	out[n] = '\0';
	return (int)n;
}

enum eg_key_err eg_key_file_read(const char *path, char *buf, size_t size, size_t *len,
				 mode_t *mode_out)
{
	enum eg_key_err err = EG_KEY_OK;
	struct stat st;
	size_t got = 0;
	int fd;

	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? EG_KEY_FILE_MISSING : EG_KEY_FILE_UNREADABLE;
	if (fstat(fd, &st) != 0) {
		err = EG_KEY_FILE_UNREADABLE;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		err = EG_KEY_FILE_NOT_REGULAR;
		goto cleanup;
	}
	if (mode_out)
		*mode_out = st.st_mode;
	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = EG_KEY_FILE_UNREADABLE;
			goto cleanup;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	*len = got;

cleanup:
	close(fd);
	return err;
}

enum eg_key_err eg_key_file_load(const char *path, enum eg_key_alg alg, enum eg_key_kind kind,
				 uint8_t *out, size_t out_len, mode_t *mode_out)
{
	char buf[EG_KEY_FILE_MAX];
	enum eg_key_err err;
	size_t len;

	err = eg_key_file_read(path, buf, sizeof(buf), &len, mode_out);
	if (err == EG_KEY_OK)
		err = eg_key_file_decode(buf, len, alg, kind, out, out_len);
	sodium_memzero(buf, sizeof(buf));
	return err;
}
