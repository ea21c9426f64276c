/* SPDX-License-Identifier: Apache-2.0 */
/* A tiny HTTP/1.1 server on 127.0.0.1 for the etcd client's refusal tests:
 * every request gets the same canned answer, either with a Content-Length
 * or as chunked transfer in the given pieces (which need not align with
 * JSON objects), then the connection closes. One thread, stopped by
 * eg_fake_http_stop(). */
#ifndef EXECGATE_TESTS_FLEET_FAKE_HTTP_H
#define EXECGATE_TESTS_FLEET_FAKE_HTTP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct eg_fake_http {
	int fd;
	unsigned short port;
	char url[64];
	pthread_t thread;
	bool chunked;
	const char *const *pieces; /* chunked: NULL-terminated */
	const char *body;	   /* not chunked */
	size_t body_len;	   /* 0: strlen(body) */
	int status;		   /* 0: 200 */
	bool hold_open;		   /* chunked: keep the stream open after the pieces */
	unsigned delay_ms;	   /* answers this long after the request */
	volatile int stop;
	int requests;
};

int eg_fake_http_start(struct eg_fake_http *f);
void eg_fake_http_stop(struct eg_fake_http *f);

#endif
