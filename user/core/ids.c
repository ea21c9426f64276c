/* SPDX-License-Identifier: Apache-2.0 */
/* Text forms of identifiers. Every parser is strict: one spelling in, the
 * exact value out, anything else -EINVAL. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sodium.h>
#include "core/ids.h"

static int hex_nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int eg_uuid_parse(const char *text, uint8_t out[EG_ID_BYTES])
{
	uint8_t id[EG_ID_BYTES];
	size_t n = 0;

	if (!text || strlen(text) != EG_UUID_TEXT_LEN - 1)
		return -EINVAL;
	for (size_t i = 0; i < EG_UUID_TEXT_LEN - 1;) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (text[i] != '-')
				return -EINVAL;
			i++;
			continue;
		}
		int hi = hex_nibble(text[i]), lo = hex_nibble(text[i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		id[n++] = (uint8_t)(hi << 4 | lo);
		i += 2;
	}
	memcpy(out, id, EG_ID_BYTES);
	return 0;
}

void eg_uuid_format(const uint8_t id[EG_ID_BYTES], char out[EG_UUID_TEXT_LEN])
{
	static const char digits[] = "0123456789abcdef";
	size_t o = 0;

	for (size_t i = 0; i < EG_ID_BYTES; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = digits[id[i] >> 4];
		out[o++] = digits[id[i] & 0xf];
	}
	out[o] = '\0';
}

bool eg_id_is_zero(const uint8_t id[EG_ID_BYTES])
{
	return sodium_is_zero(id, EG_ID_BYTES) == 1;
}

void eg_key_id_format(const uint8_t kid[EG_KEY_ID_LEN], char out[EG_KID_TEXT_LEN])
{
	sodium_bin2hex(out, EG_KID_TEXT_LEN, kid, EG_KEY_ID_LEN);
}

int eg_key_id_parse(const char *text, uint8_t out[EG_KEY_ID_LEN])
{
	size_t bin_len;

	if (!text || strlen(text) != 2 * EG_KEY_ID_LEN)
		return -EINVAL;
	if (sodium_hex2bin(out, EG_KEY_ID_LEN, text, 2 * EG_KEY_ID_LEN, NULL, &bin_len, NULL) !=
		0 ||
	    bin_len != EG_KEY_ID_LEN)
		return -EINVAL;
	return 0;
}

static const struct {
	const char *name;
	uint32_t bit;
} scope_names[] = {
    {"file.read", EG_SCOPE_FILE_READ},
    {"file.write", EG_SCOPE_FILE_WRITE},
    {"exec", EG_SCOPE_EXEC},
    {"terminal", EG_SCOPE_TERMINAL},
    {"watch", EG_SCOPE_WATCH},
    {"control", EG_SCOPE_CONTROL},
    {"serviceport", EG_SCOPE_SERVICEPORT},
};
#define NSCOPES (sizeof(scope_names) / sizeof(scope_names[0]))

int eg_scope_parse(const char *list, uint32_t *out)
{
	uint32_t bits = 0;
	const char *p = list;

	if (!list || !*list)
		return -EINVAL;
	for (;;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		size_t i;

		for (i = 0; i < NSCOPES; i++)
			if (strlen(scope_names[i].name) == n && !strncmp(p, scope_names[i].name, n))
				break;
		if (i == NSCOPES)
			return -EINVAL; /* unknown name or empty item */
		bits |= scope_names[i].bit;
		if (!end)
			break;
		p = end + 1;
	}
	*out = bits;
	return 0;
}

int eg_scope_format(uint32_t scope, char *out, size_t size)
{
	size_t len = 0;
	int n;

	if (size)
		out[0] = '\0';
	for (size_t i = 0; i < NSCOPES; i++) {
		if (!(scope & scope_names[i].bit))
			continue;
		n = snprintf(out + (len < size ? len : size), len < size ? size - len : 0, "%s%s",
			     len ? "," : "", scope_names[i].name);
		len += (size_t)n;
	}
	if (scope & ~EG_SCOPE_ALL) {
		n = snprintf(out + (len < size ? len : size), len < size ? size - len : 0,
			     "%sreserved:0x%x", len ? "," : "", scope & ~EG_SCOPE_ALL);
		len += (size_t)n;
	}
	return (int)len;
}

int eg_substrate_parse(const char *name, uint8_t *out)
{
	if (!name)
		return -EINVAL;
	if (!strcmp(name, "firecracker-k8s"))
		*out = EG_SUBSTRATE_FC_K8S;
	else if (!strcmp(name, "firecracker-host"))
		*out = EG_SUBSTRATE_FC_HOST;
	else
		return -EINVAL;
	return 0;
}

const char *eg_substrate_name(uint8_t substrate)
{
	switch (substrate) {
	case EG_SUBSTRATE_FC_K8S:
		return "firecracker-k8s";
	case EG_SUBSTRATE_FC_HOST:
		return "firecracker-host";
	default:
		return "unknown";
	}
}

int eg_port_parse(const char *text, uint16_t *port, uint8_t *proto)
{
	char num[8];
	const char *slash;
	uint64_t v;
	uint8_t pr;

	if (!text || !(slash = strchr(text, '/')))
		return -EINVAL;
	if ((size_t)(slash - text) >= sizeof(num))
		return -EINVAL;
	memcpy(num, text, (size_t)(slash - text));
	num[slash - text] = '\0';
	if (eg_parse_u64(num, 65535, &v) != 0 || v == 0)
		return -EINVAL;
	if (!strcmp(slash + 1, "tcp"))
		pr = EG_PROTO_TCP;
	else if (!strcmp(slash + 1, "udp"))
		pr = EG_PROTO_UDP;
	else
		return -EINVAL;
	*port = (uint16_t)v;
	*proto = pr;
	return 0;
}

const char *eg_proto_name(uint8_t proto)
{
	switch (proto) {
	case EG_PROTO_NONE:
		return "none";
	case EG_PROTO_TCP:
		return "tcp";
	case EG_PROTO_UDP:
		return "udp";
	default:
		return "unknown";
	}
}

int eg_parse_u64(const char *text, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!text || !*text)
		return -EINVAL;
	for (const char *p = text; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		unsigned d = (unsigned)(*p - '0');

		if (d > max || v > (max - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}
