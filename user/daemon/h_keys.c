// SPDX-License-Identifier: Apache-2.0
/* /v1/keys: the worker's verification key set. PUT takes a key file's
 * text as the body (a secret key file is refused by the handle). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "daemon/http.h"
#include "daemon/log.h"

static int add_key(const char *kid, const uint8_t pk[32], void *ctx)
{
	char hex[65];

	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", pk[i]);
	return json_array_append_new(ctx, json_pack("{s:s,s:s}", "kid", kid, "public_key", hex))
		   ? -ENOMEM
		   : 0;
}

enum MHD_Result egd_h_keys_list(struct egd_call *c)
{
	json_t *arr = json_array();

	eg_worker_keys_list(c->d->worker, add_key, arr);
	return egd_reply_json(c, MHD_HTTP_OK,
			      json_pack("{s:i,s:o}", "schema_version", 1, "keys", arr));
}

static bool kid_ok(const char *kid)
{
	size_t n = strlen(kid);

	if (n != EG_KID_TEXT_LEN - 1)
		return false;
	return strspn(kid, "0123456789abcdef") == n;
}

enum MHD_Result egd_h_key_put(struct egd_call *c)
{
	char kid[EG_KID_TEXT_LEN] = "", err[EG_ERR_MAX] = "";
	int rc;

	if (!kid_ok(c->arg))
		return egd_reply_error(c, MHD_HTTP_BAD_REQUEST, "bad request",
				       "%.64s: not a key id (16 lowercase hex digits)", c->arg);
	rc = eg_worker_keys_add_text(c->d->worker, c->body ? c->body : "", c->body_len, c->arg, kid,
				     err, sizeof(err));
	if (rc < 0)
		return egd_reply_error(
		    c, rc == -EINVAL ? MHD_HTTP_BAD_REQUEST : MHD_HTTP_INTERNAL_SERVER_ERROR,
		    rc == -EINVAL ? "bad key" : "internal error", "%s",
		    err[0] ? err : strerror(-rc));
	egd_log(EGD_LOG_INFO, "keys: %s %s", rc == 0 ? "added" : "already present", kid);
	return egd_reply_json(
	    c, rc == 0 ? MHD_HTTP_CREATED : MHD_HTTP_OK,
	    json_pack("{s:i,s:s,s:b}", "schema_version", 1, "kid", kid, "added", rc == 0));
}

enum MHD_Result egd_h_key_delete(struct egd_call *c)
{
	char err[EG_ERR_MAX] = "";
	int rc;

	if (!kid_ok(c->arg))
		return egd_reply_error(c, MHD_HTTP_BAD_REQUEST, "bad request",
				       "%.64s: not a key id (16 lowercase hex digits)", c->arg);
	rc = eg_worker_keys_remove(c->d->worker, c->arg, err, sizeof(err));
	if (rc == -ENOENT)
		return egd_reply_error(c, MHD_HTTP_NOT_FOUND, "not found", "key %s: not held",
				       c->arg);
	if (rc)
		return egd_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error", "%s",
				       err[0] ? err : strerror(-rc));
	egd_log(EGD_LOG_INFO, "keys: removed %s", c->arg);
	return egd_reply_json(
	    c, MHD_HTTP_OK,
	    json_pack("{s:i,s:s,s:b}", "schema_version", 1, "kid", c->arg, "removed", 1));
}

/* GET /v1/node-key: the public half of the node key that signs verdicts
 * (what `execgate node-key init` prints the path of), for front ends that
 * verify them, and the worker id it signs for. */
enum MHD_Result egd_h_node_key(struct egd_call *c)
{
	char path[EGD_PATH_MAX + 16], text[4096];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/node.pub", c->d->cfg.state_dir);
	f = fopen(path, "re");
	if (!f)
		return egd_reply_error(c, MHD_HTTP_NOT_FOUND, "not found", "%s: %s", path,
				       strerror(errno));
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	return egd_reply_json(c, MHD_HTTP_OK,
			      json_pack("{s:i,s:s,s:s}", "schema_version", 1, "worker_id",
					c->d->cfg.worker_id_text, "public_key_file", text));
}
