// SPDX-License-Identifier: Apache-2.0
/* key=value, one per line; '#' starts a comment line; blanks around key and
 * value are ignored. Unknown keys, duplicates and bad values are errors: a
 * typo in a security service's config must not fall back to a default. */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/ids.h"
#include "daemon/config.h"

#define LINE_MAX_LEN 1024

enum key {
	K_PIN_DIR,
	K_STATE_DIR,
	K_CGROUP,
	K_REQUIRE,
	K_SOCKET,
	K_ADMIN_GROUP,
	K_ADMIT_GROUP,
	K_WORKER_ID,
	K_THREADS,
	K_MAX_CONNECTIONS,
	K_CONNECTION_TIMEOUT,
	K__COUNT,
};

static const char *const key_names[K__COUNT] = {
    [K_PIN_DIR] = "pin_dir",
    [K_STATE_DIR] = "state_dir",
    [K_CGROUP] = "cgroup",
    [K_REQUIRE] = "require",
    [K_SOCKET] = "socket",
    [K_ADMIN_GROUP] = "admin_group",
    [K_ADMIT_GROUP] = "admit_group",
    [K_WORKER_ID] = "worker_id",
    [K_THREADS] = "threads",
    [K_MAX_CONNECTIONS] = "max_connections",
    [K_CONNECTION_TIMEOUT] = "connection_timeout",
};

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n'))
		*--e = '\0';
	return s;
}

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

static int set_path(char *out, size_t size, const char *v, char *why, size_t why_size)
{
	if (v[0] != '/') {
		snprintf(why, why_size, "not an absolute path");
		return -EINVAL;
	}
	if (strlen(v) >= size) {
		snprintf(why, why_size, "longer than %zu bytes", size - 1);
		return -EINVAL;
	}
	snprintf(out, size, "%s", v);
	return 0;
}

/* A group name, or a numeric gid. Resolved once, at start-up. */
static int set_group(gid_t *out, bool *has, const char *v, char *why, size_t why_size)
{
	struct group *gr;
	uint64_t n;

	if (!eg_parse_u64(v, 0xfffffffeu, &n)) {
		*out = (gid_t)n;
		*has = true;
		return 0;
	}
	errno = 0;
	gr = getgrnam(v);
	if (!gr) {
		snprintf(why, why_size, "no such group");
		return -EINVAL;
	}
	*out = gr->gr_gid;
	*has = true;
	return 0;
}

static int set_uint(unsigned *out, const char *v, unsigned min, unsigned max, char *why,
		    size_t why_size)
{
	uint64_t n;

	if (eg_parse_u64(v, max, &n) || n < min) {
		snprintf(why, why_size, "not a number in %u..%u", min, max);
		return -EINVAL;
	}
	*out = (unsigned)n;
	return 0;
}

static int set_value(struct egd_config *c, enum key k, const char *v, char *why, size_t why_size)
{
	switch (k) {
	case K_PIN_DIR:
		return set_path(c->pin_dir, sizeof(c->pin_dir), v, why, why_size);
	case K_STATE_DIR:
		return set_path(c->state_dir, sizeof(c->state_dir), v, why, why_size);
	case K_CGROUP:
		return set_path(c->cgroup, sizeof(c->cgroup), v, why, why_size);
	case K_SOCKET:
		return set_path(c->socket, sizeof(c->socket), v, why, why_size);
	case K_REQUIRE:
		if (strcmp(v, "cgroup") && strcmp(v, "lsm") && strcmp(v, "full")) {
			snprintf(why, why_size, "not one of cgroup, lsm, full");
			return -EINVAL;
		}
		snprintf(c->require, sizeof(c->require), "%s", v);
		return 0;
	case K_ADMIN_GROUP:
		return set_group(&c->admin_gid, &c->has_admin_gid, v, why, why_size);
	case K_ADMIT_GROUP:
		return set_group(&c->admit_gid, &c->has_admit_gid, v, why, why_size);
	case K_WORKER_ID: {
		static const __u8 nil[EG_ID_BYTES];

		if (eg_uuid_parse(v, c->worker_id)) {
			snprintf(why, why_size, "not a UUID");
			return -EINVAL;
		}
		/* A placeholder, never a worker's id. */
		if (!memcmp(c->worker_id, nil, sizeof(nil))) {
			snprintf(why, why_size, "the nil UUID names no worker");
			return -EINVAL;
		}
		eg_uuid_format(c->worker_id, c->worker_id_text);
		return 0;
	}
	case K_THREADS:
		return set_uint(&c->threads, v, 1, 64, why, why_size);
	case K_MAX_CONNECTIONS:
		return set_uint(&c->max_connections, v, 1, 65536, why, why_size);
	case K_CONNECTION_TIMEOUT:
		return set_uint(&c->connection_timeout, v, 1, 3600, why, why_size);
	case K__COUNT:
		break;
	}
	return -EINVAL;
}

int egd_config_load(const char *file, struct egd_config *cfg, char *err, size_t err_size)
{
	bool seen[K__COUNT] = {0};
	char line[LINE_MAX_LEN + 2], why[256];
	unsigned lineno = 0;
	FILE *f;
	int rc = 0;

	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->file, sizeof(cfg->file), "%s", file);
	snprintf(cfg->pin_dir, sizeof(cfg->pin_dir), "%s", EG_WORKER_DEFAULT_PIN_DIR);
	snprintf(cfg->state_dir, sizeof(cfg->state_dir), "%s", EG_WORKER_DEFAULT_STATE_DIR);
	snprintf(cfg->socket, sizeof(cfg->socket), "%s", EGD_DEFAULT_SOCKET);
	cfg->threads = 4;
	cfg->max_connections = 1024;
	cfg->connection_timeout = 10;

	f = fopen(file, "re");
	if (!f) {
		rc = -errno;
		snprintf(err, err_size, "config %s: %s", file, strerror(-rc));
		return rc;
	}
	while (fgets(line, sizeof(line), f)) {
		char *p, *eq, *k, *v;
		int i;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, err_size, "config %s:%u: line longer than %d bytes", file,
				 lineno, LINE_MAX_LEN);
			rc = -EINVAL;
			break;
		}
		p = trim(line);
		if (!*p || *p == '#')
			continue;
		eq = strchr(p, '=');
		if (!eq) {
			snprintf(err, err_size, "config %s:%u: expected key = value", file, lineno);
			rc = -EINVAL;
			break;
		}
		*eq = '\0';
		k = trim(p);
		v = trim(eq + 1);
		for (i = 0; i < K__COUNT; i++)
			if (!strcmp(k, key_names[i]))
				break;
		if (i == K__COUNT) {
			snprintf(err, err_size, "config %s:%u: %.64s: unknown key", file, lineno,
				 k);
			rc = -EINVAL;
			break;
		}
		if (seen[i]) {
			snprintf(err, err_size, "config %s:%u: %s: given twice", file, lineno, k);
			rc = -EINVAL;
			break;
		}
		seen[i] = true;
		if (!*v || has_control(v)) {
			snprintf(err, err_size, "config %s:%u: %s: %s", file, lineno, k,
				 *v ? "control character in value" : "empty value");
			rc = -EINVAL;
			break;
		}
		if (set_value(cfg, (enum key)i, v, why, sizeof(why))) {
			snprintf(err, err_size, "config %s:%u: %s = %.128s: %s", file, lineno, k, v,
				 why);
			rc = -EINVAL;
			break;
		}
	}
	if (!rc && ferror(f)) {
		snprintf(err, err_size, "config %s: read error", file);
		rc = -EIO;
	}
	fclose(f);
	if (!rc && !seen[K_WORKER_ID]) {
		/* Events and metrics name the worker: no silent default. The
		 * shipped config leaves it unset, so this is an operator's
		 * first start: say how to set it. */
		snprintf(err, err_size,
			 "config %s: worker_id: not set: add \"worker_id = UUID\" to it, this "
			 "worker's id from the control plane or a new one (uuidgen, or cat "
			 "/proc/sys/kernel/random/uuid)",
			 file);
		rc = -EINVAL;
	}
	return rc;
}
