// SPDX-License-Identifier: Apache-2.0
/* /v1/keys: the worker's verification key set. PUT takes a key file's
 * text as the body (a secret key file is refused by the handle). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "daemon/http.h"
#include "daemon/log.h"
#include "lib/json.h"

static int add_key(const char *kid, const uint8_t pk[32], void *ctx)
{
	return eg_json_key_add(ctx, kid, pk);
}

/* The key files the load skipped (one line each in text) as a JSON array
 * of printable strings (the one form `execgate keys list --json` prints
 * too), each also logged as a warning line of its own. */
static json_t *warnings(const char *text, bool log)
{
	json_t *arr = eg_json_lines(text), *line;
	size_t i;

	if (log)
		json_array_foreach(arr, i, line)
		    egd_log(EGD_LOG_WARNING, "keys: skipped: %s", json_string_value(line));
	return arr;
}

/* A key change's answer with the skipped files beside it (logged). */
static json_t *with_warnings(json_t *doc, const char *text)
{
	if (doc)
		json_object_set_new(doc, "warnings", warnings(text, true));
	return doc;
}

/* The set held, with its digest and the state dir it follows: `execgate
 * keys add/remove` compares the digest with its own after a change to
 * know that this daemon took it (docs/api.md, "Key-set digest"). The
 * list and the digest are read under separate locks: a change between
 * the two shows as a digest that does not match the list, and the next
 * GET agrees again. */
enum MHD_Result egd_h_keys_list(struct egd_call *c)
{
	char warn[EG_ERR_MAX] = "", digest[EG_KEYS_DIGEST_TEXT_LEN];
	json_t *keys, *doc = eg_json_keys(&keys);

	eg_worker_keys_digest(c->d->worker, digest);
	if (!doc || eg_worker_keys_list(c->d->worker, add_key, keys) < 0) {
		json_decref(doc);
		return egd_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error",
				       "keys: out of memory");
	}
	eg_worker_keys_warnings(c->d->worker, warn, sizeof(warn));
	json_object_set_new(doc, "warnings", warnings(warn, false));
	json_object_set_new(doc, "digest", json_string(digest));
	json_object_set_new(doc, "state_dir", json_string(c->d->cfg.state_dir));
	return egd_reply_json(c, MHD_HTTP_OK, doc);
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
	return egd_reply_json(c, rc == 0 ? MHD_HTTP_CREATED : MHD_HTTP_OK,
			      with_warnings(eg_json_key_change(kid, "added", rc == 0), err));
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
	if (rc) {
		/* The key has left memory all the same (eg_worker_keys_remove):
		 * what failed is on disk, and the reason says so. */
		egd_log(EGD_LOG_ERR, "keys: remove %s: %s", c->arg, err[0] ? err : strerror(-rc));
		return egd_reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error", "%s",
				       err[0] ? err : strerror(-rc));
	}
	egd_log(EGD_LOG_INFO, "keys: removed %s", c->arg);
	return egd_reply_json(c, MHD_HTTP_OK,
			      with_warnings(eg_json_key_change(c->arg, "removed", true), err));
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
			      json_pack("{s:i,s:s,s:s}", "schema_version", EG_JSON_SCHEMA_VERSION,
					"worker_id", c->d->cfg.worker_id_text, "public_key_file",
					text));
}
