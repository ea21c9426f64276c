// SPDX-License-Identifier: Apache-2.0
/* POST /v1/admit and POST /v1/check: the verdict, from the worker handle.
 * The grant of an admit goes to the connecting process (its pidfd from
 * auth.c); only an admin may name another process with "pid". */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "execgate/text.h"
#include "daemon/http.h"
#include "daemon/json.h"
#include "daemon/log.h"

#define TOKEN_TEXT_MAX	 4096
#define VERDICT_TEXT_MAX 4096

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static const char *const admit_fields[] = {"token", "scope", "pid", "port", "proto", "open", NULL};

/* Fills a from the body; 0 or -EINVAL with why. */
static int parse_request(json_t *o, bool admit, struct eg_admit_args *a, uint64_t *pid,
			 bool *has_pid, char *why, size_t why_size)
{
	const char *key, *s;
	uint64_t port = 0;
	bool has_port;
	json_t *v;
	int rc;

	json_object_foreach(o, key, v)
	{
		size_t i = 0;

		while (admit_fields[i] && strcmp(admit_fields[i], key))
			i++;
		if (!admit_fields[i] || (!admit && !strcmp(key, "pid"))) {
			snprintf(why, why_size, "\"%.64s\": unknown field", key);
			return -EINVAL;
		}
	}
	memset(a, 0, sizeof(*a));
	a->req.open_kind = EG_OPEN_NEW;
	rc = egd_get_str(o, "token", true, &a->token_text, why, why_size);
	if (rc)
		return rc;
	if (strlen(a->token_text) >= TOKEN_TEXT_MAX) {
		snprintf(why, why_size, "\"token\": longer than %d bytes", TOKEN_TEXT_MAX - 1);
		return -EINVAL;
	}
	rc = egd_get_str(o, "scope", false, &s, why, why_size);
	if (rc)
		return rc;
	if (s && eg_scope_parse(s, &a->req.scope)) {
		snprintf(why, why_size, "\"scope\": %.64s: unknown scope", s);
		return -EINVAL;
	}
	rc = egd_get_u64(o, "port", false, 65535, &port, &has_port, why, why_size);
	if (rc)
		return rc;
	a->req.port = (uint16_t)port;
	rc = egd_get_str(o, "proto", false, &s, why, why_size);
	if (rc)
		return rc;
	if (s) {
		if (!strcmp(s, "tcp"))
			a->req.proto = EG_PROTO_TCP;
		else if (!strcmp(s, "udp"))
			a->req.proto = EG_PROTO_UDP;
		else {
			snprintf(why, why_size, "\"proto\": not tcp or udp");
			return -EINVAL;
		}
	}
	if (has_port != (s != NULL)) {
		snprintf(why, why_size, "\"port\" and \"proto\" go together");
		return -EINVAL;
	}
	rc = egd_get_str(o, "open", false, &s, why, why_size);
	if (rc)
		return rc;
	if (s && !strcmp(s, "established"))
		a->req.open_kind = EG_OPEN_ESTABLISHED;
	else if (s && strcmp(s, "new")) {
		snprintf(why, why_size, "\"open\": not new or established");
		return -EINVAL;
	}
	*has_pid = false;
	if (admit)
		return egd_get_u64(o, "pid", false, 0x3fffffff, pid, has_pid, why, why_size);
	return 0;
}

static void log_verdict(struct egd_call *c, bool admit, const struct eg_verdict_result *res,
			pid_t pid)
{
	char u[EG_UUID_TEXT_LEN] = "-";

	if (res->d.verdict == EG_ALLOW)
		return;
	if (res->decoded && res->d.reason != EG_REASON_MALFORMED &&
	    res->d.reason != EG_REASON_UNKNOWN_KEY && res->d.reason != EG_REASON_BAD_SIGNATURE)
		eg_uuid_to_text(res->cap_sandbox, u); /* only what a signature vouches for */
	egd_log(res->d.verdict == EG_DENY ? EGD_LOG_WARNING : EGD_LOG_NOTICE,
		"%s: sandbox=%s verdict=%s reason=%s%s%s pid=%d caller_uid=%u",
		admit ? "admit" : "check", u, eg_verdict_name(res->d.verdict),
		eg_reason_name(res->d.reason), res->d.reason == EG_REASON_MALFORMED ? "/" : "",
		res->d.reason == EG_REASON_MALFORMED ? eg_decode_err_text(res->d.decode_err) : "",
		(int)pid, (unsigned)c->peer->uid);
}

/* Straight into the answer's buffer (json.h says why); the jansson form
 * only if that ever does not fit. */
static enum MHD_Result reply_verdict(struct egd_call *c, const struct eg_verdict_result *res,
				     const struct eg_request *req)
{
	char *buf = malloc(VERDICT_TEXT_MAX);
	int n = buf ? egd_verdict_text(res, req, buf, VERDICT_TEXT_MAX - 1) : -ENOMEM;

	if (n < 0) {
		free(buf);
		return egd_reply_json(c, MHD_HTTP_OK, eg_json_verdict(res, req));
	}
	buf[n++] = '\n';
	return egd_reply_buf(c, MHD_HTTP_OK, "application/json", buf, (size_t)n);
}

static enum MHD_Result verdict(struct egd_call *c, bool admit)
{
	struct eg_verdict_result res;
	struct eg_admit_args a;
	struct eg_subject who = {.pid = c->peer->pid, .pidfd = c->peer->pidfd};
	enum MHD_Result replied;
	char why[256], err[EG_ERR_MAX];
	uint64_t pid = 0, t0;
	bool has_pid;
	json_t *o;
	int rc;

	o = egd_body_object(c, &replied);
	if (!o)
		return replied;
	rc = parse_request(o, admit, &a, &pid, &has_pid, why, sizeof(why));
	if (rc) {
		json_decref(o);
		return egd_reply_error(c, MHD_HTTP_BAD_REQUEST, "bad request", "%s", why);
	}
	if (has_pid) {
		if (c->peer->role < EGD_ROLE_ADMIN) {
			json_decref(o);
			return egd_reply_error(c, MHD_HTTP_FORBIDDEN, "forbidden",
					       "\"pid\": only root or admin_group may admit "
					       "another process");
		}
		who.pid = (pid_t)pid;
		who.pidfd = -1;
	}
	memset(&res, 0, sizeof(res));
	err[0] = '\0';
	t0 = mono_ns();
	if (admit && !has_pid && who.pidfd >= 0) {
		/* A failure here is left to the admit below, which reads again
		 * and answers with the reason. */
		if (!c->peer->id_known && !eg_worker_identify(&who, &c->peer->id, err, sizeof(err)))
			c->peer->id_known = true;
		if (c->peer->id_known)
			who.known = &c->peer->id;
	}
	rc = admit ? eg_worker_admit(c->d->worker, &who, &a, &res, err, sizeof(err))
		   : eg_worker_check(c->d->worker, &a, &res, err, sizeof(err));
	if (!rc)
		egd_metrics_verdict(&c->d->metrics, admit ? EGD_OP_ADMIT : EGD_OP_CHECK, &res.d,
				    mono_ns() - t0);
	json_decref(o); /* a.token_text pointed into it */
	if (rc == -ESRCH)
		return egd_reply_error(c, MHD_HTTP_NOT_FOUND, "no such process", "%s", err);
	if (rc == -EINVAL)
		return egd_reply_error(c, MHD_HTTP_BAD_REQUEST, "bad request", "%s", err);
	if (rc == -ENOSPC)
		return egd_reply_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "overloaded", "%s", err);
	if (rc)
		return egd_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error", "%s",
				       err[0] ? err : strerror(-rc));
	log_verdict(c, admit, &res, admit ? who.pid : 0);
	return reply_verdict(c, &res, &a.req);
}

enum MHD_Result egd_h_admit(struct egd_call *c)
{
	return verdict(c, true);
}

enum MHD_Result egd_h_check(struct egd_call *c)
{
	return verdict(c, false);
}
