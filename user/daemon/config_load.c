// SPDX-License-Identifier: Apache-2.0
/* Reading execgated.conf (daemon/config.h): key=value, one per line; '#'
 * starts a comment line; blanks around key and value are ignored. Unknown
 * keys, duplicates and bad values are errors: a typo in a security
 * service's config must not fall back to a default. Each key's parser is
 * its row of config.c's table. */
#include <errno.h>
#include <grp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "execgate/sizes.h"
#include "execgate/text.h"
#include "daemon/config.h"
#include "fleet/etcd.h"
#include "daemon/config_keys.h"

#define LINE_MAX_LEN 1024

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
#define NKEYS egd_config_nkeys

static size_t key_index(const char *name)
{
	size_t i = 0;

	while (i < NKEYS - 1 && strcmp(egd_config_keys[i].name, name))
		i++;
	return i;
}

/* The etcd_* keys of the fleet's TLS and authentication go together: each
 * needs etcd_endpoints, a certificate its key, a user a password file, and
 * TLS files an https:// endpoint. The files are read at start-up
 * (eg_etcd_auth_check, execgated's main.c). */
static int check_etcd_auth(const struct egd_config *cfg, const char *file, char *err,
			   size_t err_size)
{
	static const char *const names[] = {"etcd_cacert", "etcd_cert", "etcd_key", "etcd_user",
					    "etcd_password_file"};
	const char *vals[] = {cfg->etcd_cacert, cfg->etcd_cert, cfg->etcd_key, cfg->etcd_user,
			      cfg->etcd_password_file};
	const char *pair = NULL;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (vals[i][0] && !cfg->etcd_endpoints[0]) {
			snprintf(err, err_size, "config %s: %s is set but etcd_endpoints is not",
				 file, names[i]);
			return -EINVAL;
		}
	if (!cfg->etcd_cert[0] != !cfg->etcd_key[0])
		pair = cfg->etcd_cert[0] ? "etcd_cert is set but etcd_key is not"
					 : "etcd_key is set but etcd_cert is not";
	else if (!cfg->etcd_user[0] != !cfg->etcd_password_file[0])
		pair = cfg->etcd_user[0] ? "etcd_user is set but etcd_password_file is not"
					 : "etcd_password_file is set but etcd_user is not";
	else if ((cfg->etcd_cacert[0] || cfg->etcd_cert[0]) &&
		 !strstr(cfg->etcd_endpoints, "https://"))
		pair = "etcd_cacert or etcd_cert is set but no etcd endpoint is https://";
	if (pair) {
		snprintf(err, err_size, "config %s: %s", file, pair);
		return -EINVAL;
	}
	return 0;
}

int egd_config_load(const char *file, struct egd_config *cfg, char *err, size_t err_size)
{
	bool seen[NKEYS];
	char line[LINE_MAX_LEN + 2], why[256];
	unsigned lineno = 0;
	FILE *f;
	int rc = 0;

	memset(seen, 0, sizeof(seen));
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->file, sizeof(cfg->file), "%s", file);
	for (size_t i = 0; i < NKEYS; i++)
		if (egd_config_keys[i].def &&
		    egd_config_keys[i].set(&egd_config_keys[i], cfg, egd_config_keys[i].def, why,
					   sizeof(why))) {
			snprintf(err, err_size, "config: %s: bad built-in default %s: %s",
				 egd_config_keys[i].name, egd_config_keys[i].def, why);
			return -EINVAL;
		}

	f = fopen(file, "re");
	if (!f) {
		rc = -errno;
		snprintf(err, err_size, "config %s: %s", file, strerror(-rc));
		return rc;
	}
	while (fgets(line, sizeof(line), f)) {
		char *p, *eq, *k, *v;
		size_t i;

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
		for (i = 0; i < NKEYS; i++)
			if (!strcmp(k, egd_config_keys[i].name))
				break;
		if (i == NKEYS) {
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
		if (egd_config_keys[i].set(&egd_config_keys[i], cfg, v, why, sizeof(why))) {
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
	if (!rc && !seen[key_index("admin_reserve")])
		cfg->admin_reserve = cfg->max_connections / 8 ? cfg->max_connections / 8 : 1;
	if (!rc && cfg->admin_reserve >= cfg->max_connections) {
		/* admit_group would get no connection at all. */
		snprintf(err, err_size,
			 "config %s: admin_reserve = %u: not less than max_connections (%u)", file,
			 cfg->admin_reserve, cfg->max_connections);
		rc = -EINVAL;
	}
	if (!rc && cfg->etcd_endpoints[0] && !cfg->root_keys[0]) {
		/* Without pinned roots no key set can be applied, and a
		 * worker would verify selections with keys nobody vouched
		 * for over the bus. */
		snprintf(err, err_size, "config %s: etcd_endpoints is set but root_keys is not",
			 file);
		rc = -EINVAL;
	}
	if (!rc)
		rc = check_etcd_auth(cfg, file, err, err_size);
	if (!rc && !seen[key_index("worker_id")]) {
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
