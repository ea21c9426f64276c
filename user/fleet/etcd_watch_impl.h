/* SPDX-License-Identifier: Apache-2.0 */
/* Inside the etcd watch (user/fleet/etcd_watch.c drives the streams,
 * user/fleet/etcd_watch_read.c reads what they carry): a watch and its
 * streams, one per spec. */
#ifndef EXECGATE_FLEET_ETCD_WATCH_IMPL_H
#define EXECGATE_FLEET_ETCD_WATCH_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <curl/curl.h>
#include "fleet/etcd.h"

struct watch;

struct stream {
	struct watch *w;
	const struct eg_etcd_watch_spec *spec;
	CURL *h;
	char *body;
	char *buf;
	size_t len, cap;
	/* scanner state over buf[0..len): where the current object began,
	 * how far it was scanned, and the lexical state there */
	size_t start, scan;
	int depth;
	bool in_obj, in_str, esc;
	bool got_data, created, done;
	int64_t last_rev;     /* newest event revision delivered */
	int64_t progress_rev; /* newest progress notification, 0: none */
	CURLcode cc;
};

struct watch {
	struct eg_etcd *e;
	size_t ep;
	struct stream *s;
	size_t n;
	int64_t start_revision;
	int (*fn)(const struct eg_etcd_event *ev, size_t n, int64_t revision, void *ctx);
	void *ctx;
	int64_t *compact_revision;
	char *err;
	size_t err_size;
	bool delivered; /* fn was called: no silent restart any more */
	int rc;		/* set: stop with this */
	bool rc_set;
	int64_t progress_out;	/* last progress revision given to fn */
	struct curl_slist *hdr; /* the Authorization header, NULL: none */
};

/* The streams' curl write callback (CURLOPT_WRITEFUNCTION, ud: the
 * stream): appends to the stream's buffer and hands every complete object
 * to the watch's callback; 0 (curl stops the transfer) once the watch
 * stops. */
size_t eg_etcd_watch_on_data(char *data, size_t size, size_t nmemb, void *ud);

#endif
