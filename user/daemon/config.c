// SPDX-License-Identifier: Apache-2.0
/* The keys of execgated.conf (daemon/config_keys.h): one row each, with
 * its value's parser and printer, and what --help-config and
 * --check-config print from the rows. Reading the file is config_load.c. */
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

static int set_path(const struct key *k, struct egd_config *c, const char *v, char *why,
		    size_t why_size)
{
	if (v[0] != '/') {
		snprintf(why, why_size, "not an absolute path");
		return -EINVAL;
	}
	if (strlen(v) >= k->size) {
		snprintf(why, why_size, "longer than %zu bytes", k->size - 1);
		return -EINVAL;
	}
	snprintf(FIELD(c, k), k->size, "%s", v);
	return 0;
}

static void show_text(const struct key *k, const struct egd_config *c, FILE *f)
{
	const char *v = FIELD(c, k);

	if (*v)
		fprintf(f, "%s = %s\n", k->name, v);
	else
		fprintf(f, "%s = (%s)\n", k->name, k->unset);
}

/* A tier word, as `execgate load --require` takes it. */
static int set_tier(const struct key *k, struct egd_config *c, const char *v, char *why,
		    size_t why_size)
{
	if (strcmp(v, "cgroup") && strcmp(v, "lsm") && strcmp(v, "tcp") && strcmp(v, "full")) {
		snprintf(why, why_size, "not one of cgroup, lsm, tcp, full");
		return -EINVAL;
	}
	snprintf(FIELD(c, k), k->size, "%s", v);
	return 0;
}

const char *const egd_endpoint_kinds[EGD_ENDPOINT_KINDS] = {"unix", "vsock", "tcp"};

int egd_endpoint_kind_find(const char *s, size_t len)
{
	for (int i = 0; i < EGD_ENDPOINT_KINDS; i++)
		if (strlen(egd_endpoint_kinds[i]) == len && !strncmp(s, egd_endpoint_kinds[i], len))
			return i;
	return -1;
}

/* KIND[,KIND...] of egd_endpoint_kinds[], each once. */
static int set_kinds(const struct key *k, struct egd_config *c, const char *v, char *why,
		     size_t why_size)
{
	unsigned seen = 0;

	for (const char *p = v; *p;) {
		size_t len = strcspn(p, ",");
		int i = egd_endpoint_kind_find(p, len);

		if (i < 0) {
			snprintf(why, why_size, "%.*s: not one of unix, vsock, tcp", (int)len, p);
			return -EINVAL;
		}
		if (seen & (1u << i)) {
			snprintf(why, why_size, "%s: given twice", egd_endpoint_kinds[i]);
			return -EINVAL;
		}
		seen |= 1u << i;
		p += len;
		if (*p == ',' && !*++p) {
			snprintf(why, why_size, "empty kind after a comma");
			return -EINVAL;
		}
	}
	if (!seen || strlen(v) >= k->size) {
		snprintf(why, why_size, "not a list of unix, vsock, tcp");
		return -EINVAL;
	}
	snprintf(FIELD(c, k), k->size, "%s", v);
	return 0;
}

/* The global mode the daemon sets at start, as `execgate load --mode`. */
static int set_mode(const struct key *k, struct egd_config *c, const char *v, char *why,
		    size_t why_size)
{
	if (strcmp(v, "enforce") && strcmp(v, "audit")) {
		snprintf(why, why_size, "not enforce or audit");
		return -EINVAL;
	}
	snprintf(FIELD(c, k), k->size, "%s", v);
	return 0;
}

/* A group name, or a numeric gid. Resolved once, at start-up. The field
 * is a struct egd_group. */
static int set_group(const struct key *k, struct egd_config *c, const char *v, char *why,
		     size_t why_size)
{
	struct egd_group *g = (struct egd_group *)FIELD(c, k);
	struct group *gr;
	uint64_t n;

	if (!eg_parse_u64(v, 0xfffffffeu, &n)) {
		g->gid = (gid_t)n;
		g->set = true;
		return 0;
	}
	errno = 0;
	gr = getgrnam(v);
	if (!gr) {
		snprintf(why, why_size, "no such group");
		return -EINVAL;
	}
	g->gid = gr->gr_gid;
	g->set = true;
	return 0;
}

static void show_group(const struct key *k, const struct egd_config *c, FILE *f)
{
	const struct egd_group *g = (const struct egd_group *)FIELD(c, k);

	if (g->set)
		fprintf(f, "%s = %u\n", k->name, (unsigned)g->gid);
	else
		fprintf(f, "%s = (%s)\n", k->name, k->unset);
}

static int set_uuid(const struct key *k, struct egd_config *c, const char *v, char *why,
		    size_t why_size)
{
	static const uint8_t nil[EG_ID_BYTES];

	(void)k;
	if (eg_uuid_from_text(v, c->worker_id)) {
		snprintf(why, why_size, "not a UUID");
		return -EINVAL;
	}
	/* A placeholder, never a worker's id. */
	if (!memcmp(c->worker_id, nil, sizeof(nil))) {
		snprintf(why, why_size, "the nil UUID names no worker");
		return -EINVAL;
	}
	eg_uuid_to_text(c->worker_id, c->worker_id_text);
	return 0;
}

static void show_uuid(const struct key *k, const struct egd_config *c, FILE *f)
{
	fprintf(f, "%s = %s\n", k->name, c->worker_id_text);
}

static int set_uint(const struct key *k, struct egd_config *c, const char *v, char *why,
		    size_t why_size)
{
	uint64_t n;

	if (eg_parse_u64(v, k->max, &n) || n < k->min) {
		snprintf(why, why_size, "not a number in %u..%u", k->min, k->max);
		return -EINVAL;
	}
	*(unsigned *)FIELD(c, k) = (unsigned)n;
	return 0;
}

static void show_uint(const struct key *k, const struct egd_config *c, FILE *f)
{
	fprintf(f, "%s = %u\n", k->name, *(const unsigned *)FIELD(c, k));
}

/* A number whose 0 means unset (k->unset says what that means). */
static void show_uint_or_unset(const struct key *k, const struct egd_config *c, FILE *f)
{
	unsigned v = *(const unsigned *)FIELD(c, k);

	if (v)
		show_uint(k, c, f);
	else
		fprintf(f, "%s = (%s)\n", k->name, k->unset);
}

/* URL[,URL...]: http:// or https://, a host, an optional port, no path,
 * no user info, at most 8 (user/fleet/etcd.h opens them again and says
 * which one it refuses; this is the config's own one-line error). */
static int set_endpoints(const struct key *k, struct egd_config *c, const char *v, char *why,
			 size_t why_size)
{
	const char *p = v;
	unsigned n = 0;

	if (strlen(v) >= k->size) {
		snprintf(why, why_size, "longer than %zu bytes", k->size - 1);
		return -EINVAL;
	}
	while (*p) {
		size_t len = strcspn(p, ","), scheme;
		const char *host;

		if (!strncmp(p, "http://", 7))
			scheme = 7;
		else if (!strncmp(p, "https://", 8))
			scheme = 8;
		else {
			snprintf(why, why_size, "endpoint %u: not http://HOST[:PORT] or https://",
				 n + 1);
			return -EINVAL;
		}
		host = p + scheme;
		if (len <= scheme || memchr(host, '/', len - scheme) ||
		    memchr(host, '@', len - scheme) || memchr(host, ' ', len - scheme)) {
			snprintf(why, why_size,
				 "endpoint %u: not http://HOST[:PORT] (no path, no user, no blank)",
				 n + 1);
			return -EINVAL;
		}
		/* the etcd client's own rule (user/fleet/etcd.h) */
		if (scheme == 7 && !eg_etcd_is_loopback_url(p, len)) {
			snprintf(why, why_size,
				 "endpoint %u: plain http:// to a host that is not loopback "
				 "(127.0.0.0/8, [::1], localhost): use https://",
				 n + 1);
			return -EINVAL;
		}
		if (++n > 8) {
			snprintf(why, why_size, "more than 8 endpoints");
			return -EINVAL;
		}
		p += len;
		if (*p == ',' && !*++p) {
			snprintf(why, why_size, "empty endpoint after a comma");
			return -EINVAL;
		}
	}
	snprintf(FIELD(c, k), k->size, "%s", v);
	return 0;
}

/* An etcd user name: what etcdctl user add takes, without blanks. */
static int set_etcd_user(const struct key *k, struct egd_config *c, const char *v, char *why,
			 size_t why_size)
{
	if (strlen(v) >= k->size || strpbrk(v, " \t")) {
		snprintf(why, why_size, "a blank, or longer than %zu bytes", k->size - 1);
		return -EINVAL;
	}
	snprintf(FIELD(c, k), k->size, "%s", v);
	return 0;
}

/* An etcd key prefix: absolute, no trailing '/', printable ASCII without
 * blanks (it is part of every key the worker reads and writes). */
static int set_prefix(const struct key *k, struct egd_config *c, const char *v, char *why,
		      size_t why_size)
{
	size_t n = strlen(v);

	if (v[0] != '/' || n < 2 || v[n - 1] == '/') {
		snprintf(why, why_size, "not /NAME[/NAME...] without a trailing /");
		return -EINVAL;
	}
	if (n >= k->size) {
		snprintf(why, why_size, "longer than %zu bytes", k->size - 1);
		return -EINVAL;
	}
	for (const char *p = v; *p; p++)
		if (*p <= ' ' || *p >= 0x7f || (p[0] == '/' && p[1] == '/')) {
			snprintf(why, why_size, "blank, non-ASCII or empty segment");
			return -EINVAL;
		}
	snprintf(FIELD(c, k), k->size, "%s", v);
	return 0;
}

#define F(field) offsetof(struct egd_config, field), sizeof(((struct egd_config *)0)->field)
/* clang-format off */
#define PATH(name, def, unset, doc) \
	{#name, set_path, show_text, F(name), 0, 0, "absolute path", def, unset, doc}
#define UINT(name, def, min, max, doc) \
	{#name, set_uint, show_uint, F(name), min, max, NULL, #def, NULL, doc}
#define GROUP(name, unset, doc) \
	{#name, set_group, show_group, F(name), 0, 0, "group name or numeric gid", NULL, unset, doc}

const struct key egd_config_keys[] = {
    {"worker_id", set_uuid, show_uuid, F(worker_id), 0, 0, "UUID", NULL, "required",
     "the worker's UUID. Events, the execgate_info metric and signed verdicts carry it; "
     "capabilities name it as their worker"},
    PATH(pin_dir, EG_WORKER_DEFAULT_PIN_DIR, NULL, "where the programs and maps are pinned"),
    PATH(state_dir, EG_WORKER_DEFAULT_STATE_DIR, NULL,
	 "keys (<state_dir>/keys, reloaded on change and on SIGHUP), the node key, the probe "
	 "record and the writer lock"),
    PATH(cgroup, NULL, "the cgroup v2 root",
	 "the cgroup v2 directory the cgroup tier is attached to. The root is what "
	 "production wants: below it, sockets created outside it are not checked "
	 "(docs/operators.md), and the daemon logs cgroup-not-root at start-up and in "
	 "GET /v1/status"),
    {"require", set_tier, show_text, F(require), 0, 0, "cgroup, lsm, tcp or full", NULL,
     "none: load what the kernel offers",
     "refuse to start (exit 5, nothing loaded) unless the kernel offers that tier; full "
     "is every tier (cgroup, lsm and tcp), as execgate load --require"},
    {"endpoint_kinds", set_kinds, show_text, F(endpoint_kinds), 0, 0,
     "KIND[,KIND...] of unix, vsock, tcp", "unix,vsock", NULL,
     "the endpoint kinds this node's sandboxes use: GET /v1/ready answers 200 only while "
     "the loaded tiers enforce every one of them (unix: the cgroup tier, or the lsm tier "
     "on kernels without connect_unix; vsock: the lsm tier; tcp: the tcp tier), else 503 "
     "naming the kinds left unenforced and why. The default fails on a node without BPF "
     "LSM, which cannot enforce VSOCK (docs/kubernetes.md)"},
    {"mode", set_mode, show_text, F(mode), 0, 0, "enforce or audit", "enforce", NULL,
     "the global mode set at every start, as execgate load --mode: a mode switched at run "
     "time (PUT /v1/mode, execgate mode) lasts until the next start, which logs the reset "
     "as a warning. A sandbox's own mode is its record's, and stays"},
    {"inet_tags", set_uint, show_uint_or_unset, F(inet_tags), EG_INET_TAGS_MIN, EG_INET_TAGS_MAX,
     NULL, NULL, "the pinned map's, else " EG_SIZE_TEXT(EG_INET_TAGS_DEFAULT),
     "capacity of eg_inet_tags, the tcp tier's socket tags: admitted TCP/UDP sockets open "
     "at once. A larger map costs every admitted connect more; a full one denies "
     "(deny-no-tag). Changes only after execgate unload, as execgate load --inet-tags"},
    PATH(socket, EGD_DEFAULT_SOCKET, NULL,
	 "the API socket. Anyone may connect; every request is authorized by the caller's "
	 "SO_PEERCRED credentials"),
    GROUP(admin_group, "none: only root is admin",
	  "members may install, retire, forget and manage keys, as root"),
    GROUP(admit_group, "none: only root and admin_group",
	  "members may admit (a grant for the calling process only) and check, and read "
	  "records, keys, status, events and metrics"),
    UINT(threads, 4, 1, 64, "HTTP worker threads"),
    UINT(max_connections, 1024, 1, 65536,
	 "concurrent connections of callers with a role; beyond it requests get 503. "
	 "Callers without a role get an eighth of it on top (docs/api.md, Limits)"),
    UINT(connection_timeout, 10, 1, 3600,
	 "seconds a request may take to arrive, and an idle keep-alive connection may "
	 "stay"),
    {"admin_reserve", set_uint, show_uint, F(admin_reserve), 1, 65535, NULL, NULL,
     "an eighth of max_connections",
     "connections of max_connections kept for root and admin_group: admit_group "
     "callers hold at most max_connections - admin_reserve, and their connections "
     "beyond it are closed as they are accepted. Must be below max_connections"},
    UINT(max_event_streams, 64, 1, 65536,
	 "GET /v1/events streams that callers other than root and admin_group may hold "
	 "together; beyond it they get 503"),
    UINT(max_event_streams_per_uid, 8, 1, 65536,
	 "GET /v1/events streams one uid may hold (root and admin_group included); "
	 "beyond it 503"),
    {"etcd_endpoints", set_endpoints, show_text, F(etcd_endpoints), 0, 0,
     "URL[,URL...], https:// (http:// only to loopback), at most 8", NULL, "none: no fleet",
     "etcd client URLs. When set, the daemon watches its selections and the key set "
     "under etcd_prefix, writes acks, and answers a PUT /v1/sandboxes/{uuid} that no "
     "signed selection names with 409 not-selected (docs/fleet.md, Worker side); "
     "root_keys is then required"},
    {"etcd_prefix", set_prefix, show_text, F(etcd_prefix), 0, 0, "/NAME[/NAME...]",
     "/execgate/v1", NULL, "the key prefix of the fleet's layout in etcd (docs/fleet.md)"},
    PATH(etcd_cacert, NULL, "none: the system's CAs",
	 "a PEM file of the CA(s) that signed the etcd members' certificates: the members of "
	 "an https:// endpoint are verified against it alone, not the system's CAs"),
    PATH(etcd_cert, NULL, "none: no client certificate",
	 "a PEM client certificate for etcd (mutual TLS, etcd's --client-cert-auth); needs "
	 "etcd_key. With etcd's auth on, etcd's JSON gateway refuses a certificate whose "
	 "subject has a CN: make it without one (docs/fleet.md, etcd roles)"),
    PATH(etcd_key, NULL, "none", "the key of etcd_cert (PEM); needs etcd_cert"),
    {"etcd_user", set_etcd_user, show_text, F(etcd_user), 0, 0, "NAME", NULL,
     "none: no etcd authentication",
     "the etcd user the worker authenticates as (etcd's auth); needs etcd_password_file. "
     "Its role reads <prefix>/workers/<worker_id>/selections/ and <prefix>/keyset and "
     "writes <prefix>/acks/<worker_id>/ (docs/fleet.md, etcd roles)"},
    PATH(etcd_password_file, NULL, "none",
	 "a file whose first line is etcd_user's password (a trailing newline is dropped); "
	 "mode 0600 or 0400, neither group nor others may read it, and not empty. Read at "
	 "start-up; never logged"),
    PATH(root_keys, NULL, "none",
	 "a directory of pinned root public keys (*.pub, typed key files). A key set read "
	 "from etcd is applied only when one of them signed it"),
    UINT(etcd_reconcile_interval, 60, 1, 86400,
	 "seconds between two full reads of this worker's selections and the key set, on "
	 "top of the watch"),
    {"keyset_min_version", set_uint, show_uint_or_unset, F(keyset_min_version), 0, 4294967295u,
     NULL, NULL, "none",
     "the lowest key-set version this worker may apply from etcd: an older key set never "
     "applies, also on a state dir that remembers nothing (docs/fleet.md, Freshness)"},
};
const size_t egd_config_nkeys = sizeof(egd_config_keys) / sizeof(egd_config_keys[0]);
#define NKEYS egd_config_nkeys

/* The doc text, folded at 72 columns under a 4-space indent (the man
 * page indents it 7 more). */
static void print_folded(FILE *f, const char *text)
{
	const char *p = text;

	while (*p) {
		size_t n = strlen(p);

		if (n > 68) {
			n = 68;
			while (n && p[n] != ' ')
				n--;
			if (!n)
				n = strcspn(p, " ");
		}
		fprintf(f, "    %.*s\n", (int)n, p);
		p += n;
		while (*p == ' ')
			p++;
	}
}

void egd_config_help(FILE *f)
{
	for (size_t i = 0; i < NKEYS; i++) {
		const struct key *k = &egd_config_keys[i];
		char value[64];

		if (k->set == set_path)
			snprintf(value, sizeof(value), "%s, at most %zu bytes", k->value,
				 k->size - 1);
		else if (k->value)
			snprintf(value, sizeof(value), "%s", k->value);
		else
			snprintf(value, sizeof(value), "%u..%u", k->min, k->max);
		if (k->def)
			fprintf(f, "%s = %s (default %s)\n", k->name, value, k->def);
		else
			fprintf(f, "%s = %s (%s)\n", k->name, value, k->unset);
		print_folded(f, k->doc);
	}
}

void egd_config_print(const struct egd_config *c, FILE *f)
{
	fprintf(f, "config = %s\n", c->file);
	for (size_t i = 0; i < NKEYS; i++)
		egd_config_keys[i].show(&egd_config_keys[i], c, f);
}
