// SPDX-License-Identifier: Apache-2.0
/* The replies every handler uses (daemon/http.h): exactly one response
 * queued per call, JSON or an error document, and the body read as a JSON
 * object. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "daemon/http.h"
#include "daemon/log.h"
#include "daemon/pins_gate.h"
#include "daemon/routes.h"
#include "lib/json.h"

/* --- replies ------------------------------------------------------------------ */

enum MHD_Result egd_reply_buf(struct egd_call *c, unsigned status, const char *content_type,
			      char *buf, size_t len)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	if (c->allow)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, c->allow);
	ret = MHD_queue_response(c->conn, status, resp);
	MHD_destroy_response(resp);
	egd_metrics_http(&c->d->metrics, status);
	return ret;
}

enum MHD_Result egd_reply_json(struct egd_call *c, unsigned status, json_t *o)
{
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	size_t len;

	json_decref(o);
	if (!text)
		return MHD_NO;
	len = strlen(text);
	text[len] = '\n'; /* json_dumps' NUL becomes the line end */
	return egd_reply_buf(c, status, "application/json", text, len + 1);
}

/* A reason quotes the client (a path segment, a field name) and the kernel
 * (socket paths): bytes outside printable ASCII become \xNN, so that text
 * that is not UTF-8, or a UTF-8 sequence cut by a %.64s, still makes a JSON
 * answer (jansson refuses such strings, and the client would get none). */
void egd_printable(const char *in, char *out, size_t size)
{
	size_t o = 0;

	for (; *in && o + 5 < size; in++) {
		unsigned char ch = (unsigned char)*in;

		if (ch >= 0x20 && ch < 0x7f && ch != '\\')
			out[o++] = (char)ch;
		else
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", ch);
	}
	out[o] = '\0';
}

enum MHD_Result egd_reply_error(struct egd_call *c, unsigned status, const char *error,
				const char *reason_fmt, ...)
{
	char reason[EG_ERR_MAX], text[EG_ERR_MAX];
	va_list ap;

	va_start(ap, reason_fmt);
	vsnprintf(reason, sizeof(reason), reason_fmt, ap);
	va_end(ap);
	egd_printable(reason, text, sizeof(text));
	return egd_reply_json(c, status, eg_json_error(error, text));
}

json_t *egd_body_object(struct egd_call *c, enum MHD_Result *replied)
{
	json_error_t jerr;
	json_t *o;

	o = json_loadb(c->body ? c->body : "", c->body_len, JSON_REJECT_DUPLICATES, &jerr);
	if (!o) {
		*replied =
		    egd_reply_error(c, MHD_HTTP_BAD_REQUEST, "bad request",
				    "body: not JSON: %s (offset %d)", jerr.text, jerr.position);
		return NULL;
	}
	if (!json_is_object(o)) {
		json_decref(o);
		*replied = egd_reply_error(c, MHD_HTTP_BAD_REQUEST, "bad request",
					   "body: not a JSON object");
		return NULL;
	}
	return o;
}
