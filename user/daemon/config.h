/* SPDX-License-Identifier: Apache-2.0 */
/* execgated's key=value configuration (docs/api.md, deploy/execgated.conf). */
#ifndef EXECGATE_DAEMON_CONFIG_H
#define EXECGATE_DAEMON_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>
#include <execgate/execgate.h>
#include "frontend/unix_get.h"

#define EGD_DEFAULT_CONFIG     "/etc/execgate/execgated.conf"
#define EGD_DEFAULT_SOCKET     EG_DAEMON_DEFAULT_SOCKET /* the CLI asks there too */
#define EGD_PATH_MAX	       512
#define EGD_SOCKET_MAX	       108 /* sizeof(sockaddr_un.sun_path) */
#define EGD_ETCD_ENDPOINTS_MAX 1024
#define EGD_ETCD_PREFIX_MAX    128

struct egd_group {
	bool set;
	gid_t gid;
};

/* The fields are named as the keys (daemon/config.c's table). */
struct egd_config {
	char file[EGD_PATH_MAX];
	char pin_dir[EGD_PATH_MAX];
	char state_dir[EGD_PATH_MAX];
	char cgroup[EGD_PATH_MAX]; /* "" : the cgroup v2 root, as `execgate load` */
	char require[16];	   /* "" : load what the kernel offers */
	char mode[8];		   /* the global mode set at start: enforce, audit */
	/* GET /v1/ready: the endpoint kinds the tiers must cover, as
	 * written ("unix,vsock", of egd_endpoint_kinds[]). */
	char endpoint_kinds[32];
	unsigned inet_tags; /* 0: the pinned map's, else the default */
	char socket[EGD_SOCKET_MAX];
	struct egd_group admin_group, admit_group;
	uint8_t worker_id[EG_ID_BYTES];
	char worker_id_text[EG_UUID_TEXT_LEN];
	/* Tuning, all optional. */
	unsigned threads;	     /* HTTP worker threads */
	unsigned max_connections;    /* beyond it: 503, then refused */
	unsigned connection_timeout; /* seconds without progress before a close */
	/* Of max_connections, held for root and admin_group: admit_group
	 * may hold at most max_connections - admin_reserve (http_conns.c). */
	unsigned admin_reserve;
	/* GET /v1/events streams: of callers other than root and
	 * admin_group in all, and of any one uid (events.c). */
	unsigned max_event_streams;
	unsigned max_event_streams_per_uid;
	/* The fleet (docs/fleet.md, "Worker side"): on when etcd_endpoints
	 * is set, and then root_keys is required. */
	char etcd_endpoints[EGD_ETCD_ENDPOINTS_MAX]; /* "" : off */
	char etcd_prefix[EGD_ETCD_PREFIX_MAX];
	/* How the worker proves itself to etcd and checks it (user/fleet/
	 * etcd.h, struct eg_etcd_auth); "" : not given. */
	char etcd_cacert[EGD_PATH_MAX];
	char etcd_cert[EGD_PATH_MAX], etcd_key[EGD_PATH_MAX];
	char etcd_user[256];
	char etcd_password_file[EGD_PATH_MAX];
	char root_keys[EGD_PATH_MAX];	  /* "" : none */
	unsigned etcd_reconcile_interval; /* seconds between full reconciles */
	unsigned keyset_min_version;	  /* 0: none (docs/fleet.md, "Freshness") */
};

/* The endpoint kinds endpoint_kinds may name (h_health.c: which
 * guarantees enforce each). */
#define EGD_ENDPOINT_KINDS 3
extern const char *const egd_endpoint_kinds[EGD_ENDPOINT_KINDS];
/* The index of the kind s[0..len), or -1. */
int egd_endpoint_kind_find(const char *s, size_t len);

/* Reads file into cfg (defaults first). On error err holds the one-line
 * message "config FILE:LINE: ..." and -EINVAL (or -errno when the file
 * cannot be read) is returned. */
int egd_config_load(const char *file, struct egd_config *cfg, char *err, size_t err_size);
/* --check-config: "key = value" for every key, resolved. */
void egd_config_print(const struct egd_config *cfg, FILE *f);
/* --help-config: every key, what it takes, its default and what it does. */
void egd_config_help(FILE *f);

#endif
