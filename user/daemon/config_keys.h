/* SPDX-License-Identifier: Apache-2.0 */
/* Inside execgated's configuration (daemon/config.h): the table of keys
 * (config.c, each key's parser and printer) that reading the file
 * (config_load.c) goes through. */
#ifndef EXECGATE_DAEMON_CONFIG_KEYS_H
#define EXECGATE_DAEMON_CONFIG_KEYS_H

#include <stddef.h>
#include <stdio.h>
#include "daemon/config.h"

/* One row per key. Adding a key: its field in struct egd_config
 * (daemon/config.h) and one row in keys[] below; the parser, the defaults,
 * --check-config and --help-config (which docs/api.md and execgated(8)
 * carry, tests/ops/test-config-doc.sh) all follow from the row. */
struct key {
	const char *name;
	int (*set)(const struct key *k, struct egd_config *c, const char *v, char *why,
		   size_t why_size);
	void (*show)(const struct key *k, const struct egd_config *c, FILE *f);
	size_t off, size; /* the field in struct egd_config */
	unsigned min, max;
	const char *value; /* what it takes, for --help-config */
	const char *def;   /* the default, set through set(); NULL: none */
	const char *unset; /* what no value means, when def is NULL */
	const char *doc;
};

#define FIELD(c, k) ((char *)(c) + (k)->off)

extern const struct key egd_config_keys[];
extern const size_t egd_config_nkeys;

#endif
