// SPDX-License-Identifier: Apache-2.0
/* The worker's own Ed25519 node key, separate from the control-plane keys:
 * it signs this worker's refresh-route and deny verdicts so that a front
 * end can tell them from forged ones (docs/design.md §5). Files in the state dir,
 * typed key-file form (core/key_file.h):
 *   node.seed    execgate-ed25519-secret-v1, 0600: never leaves the worker
 *   node.pub     execgate-ed25519-public-v1, 0644: exported to front ends
 *   node.worker  the worker's id (UUID text), bound into every verdict */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sodium.h>
#include <execgate/admin.h>
#include "core/fd_io.h"
#include "core/key_file.h"
#include "lib/json.h"
#include "core/signed_verdict.h"
#include "lib/worker.h"
#include "loader/records/state_dir.h"

static int path_in(char *out, size_t size, const char *dir, const char *name)
{
	return (size_t)snprintf(out, size, "%s/%s", dir, name) >= size ? -ENAMETOOLONG : 0;
}

/* Writes content to dir/name.tmp.XXXXXX, then links it into place: link()
 * fails with EEXIST rather than replacing, so two concurrent inits cannot
 * both create a key, and no reader ever sees a partial file. */
static int publish(const char *dir, const char *name, const char *content, mode_t mode)
{
	char tmp[4200], dst[4200];
	size_t len = strlen(content);
	int fd, rc = 0;

	if (path_in(dst, sizeof(dst), dir, name) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, name) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, mode))
		rc = -errno;
	else
		rc = eg_write_all(fd, content, len);
	if (!rc && fsync(fd))
		rc = -errno;
	close(fd);
	if (!rc && link(tmp, dst))
		rc = -errno;
	unlink(tmp);
	return rc;
}

static int read_worker_id(const char *state_dir, __u8 out[EG_ID_BYTES])
{
	char path[4200], text[64];
	size_t n;
	FILE *f;

	if (path_in(path, sizeof(path), state_dir, "node.worker"))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	if (n && text[n - 1] == '\n')
		text[n - 1] = '\0';
	return eg_uuid_parse(text, out) ? -EINVAL : 0;
}

int eg_node_worker_id_text(const char *state_dir, char out[EG_UUID_TEXT_LEN])
{
	__u8 id[EG_ID_BYTES];
	int rc = read_worker_id(state_dir, id);

	if (!rc)
		eg_uuid_format(id, out);
	return rc;
}

int eg_node_key_init(const char *state_dir, const char *worker_id, char *pub_path,
		     size_t pub_path_size, bool *created, char *err, size_t err_size)
{
	uint8_t seed[crypto_sign_SEEDBYTES], pk[crypto_sign_PUBLICKEYBYTES];
	uint8_t sk[crypto_sign_SECRETKEYBYTES];
	char seed_path[4200], line[EG_KEY_FILE_LINE_MAX], text[EG_UUID_TEXT_LEN + 1];
	__u8 want[EG_ID_BYTES], have[EG_ID_BYTES];
	enum eg_key_err kerr;
	int rc;

	EG_WK_ERRBUF(err, err_size);
	*created = false;
	if (worker_id && eg_uuid_parse(worker_id, want)) {
		snprintf(err, err_size, "worker id %s: not a UUID", worker_id);
		return -EINVAL;
	}
	if (mkdir(state_dir, EG_STATE_DIR_MODE) && errno != EEXIST) {
		rc = -errno;
		snprintf(err, err_size, "state dir %s: %s", state_dir, strerror(-rc));
		return rc;
	}
	if (path_in(seed_path, sizeof(seed_path), state_dir, "node.seed") ||
	    path_in(pub_path, pub_path_size, state_dir, "node.pub")) {
		snprintf(err, err_size, "state dir %s: path too long", state_dir);
		return -ENAMETOOLONG;
	}

	kerr = eg_key_file_load(seed_path, EG_KEY_ALG_ED25519, EG_KEY_KIND_SECRET, seed,
				sizeof(seed), NULL);
	if (kerr == EG_KEY_FILE_MISSING) {
		randombytes_buf(seed, sizeof(seed));
		eg_key_file_encode(EG_KEY_ALG_ED25519, EG_KEY_KIND_SECRET, seed, sizeof(seed), line,
				   sizeof(line));
		rc = publish(state_dir, "node.seed", line, 0600);
		sodium_memzero(line, sizeof(line));
		if (rc == -EEXIST) /* another init won: use its key */
			kerr = eg_key_file_load(seed_path, EG_KEY_ALG_ED25519, EG_KEY_KIND_SECRET,
						seed, sizeof(seed), NULL);
		else if (rc) {
			snprintf(err, err_size, "node key %s: %s", seed_path, strerror(-rc));
			goto out;
		} else {
			kerr = EG_KEY_OK;
			*created = true;
		}
	}
	if (kerr != EG_KEY_OK) {
		snprintf(err, err_size, "node key %s: %s", seed_path, eg_key_err_name(kerr));
		rc = -EINVAL;
		goto out;
	}
	crypto_sign_seed_keypair(pk, sk, seed);
	eg_key_file_encode(EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC, pk, sizeof(pk), line,
			   sizeof(line));
	/* The public half is derived, so rewriting it is always safe; a
	 * missing or stale node.pub is repaired by rename. */
	unlink(pub_path);
	rc = publish(state_dir, "node.pub", line, 0644);
	if (rc == -EEXIST)
		rc = 0;
	if (rc) {
		snprintf(err, err_size, "node key %s: %s", pub_path, strerror(-rc));
		goto out;
	}
	if (worker_id) {
		rc = read_worker_id(state_dir, have);
		if (rc == -ENOENT) {
			eg_uuid_format(want, text);
			strcat(text, "\n");
			rc = publish(state_dir, "node.worker", text, 0644);
		} else if (!rc && memcmp(have, want, EG_ID_BYTES)) {
			eg_uuid_format(have, text);
			/* The way out is named here, where an operator who
			 * corrected worker_id first meets it. */
			snprintf(err, err_size,
				 "state dir %s: node key belongs to worker %s, not %s (if %s is "
				 "right: execgate node-key reset --state-dir %s --worker-id %s; "
				 "front ends then need the new node.pub)",
				 state_dir, text, worker_id, worker_id, state_dir, worker_id);
			rc = -EEXIST;
			goto out;
		}
		if (rc) {
			snprintf(err, err_size, "state dir %s: node.worker: %s", state_dir,
				 strerror(-rc));
			goto out;
		}
	}
	rc = 0;
out:
	sodium_memzero(seed, sizeof(seed));
	sodium_memzero(sk, sizeof(sk));
	return rc;
}

int eg_node_key_reset(const char *state_dir, const char *worker_id, char *pub_path,
		      size_t pub_path_size, char *err, size_t err_size)
{
	static const char *const files[] = {"node.worker", "node.seed", "node.pub"};
	__u8 id[EG_ID_BYTES];
	char path[4200];
	bool created;
	size_t i;

	EG_WK_ERRBUF(err, err_size);
	if (!worker_id || eg_uuid_parse(worker_id, id)) {
		snprintf(err, err_size, "worker id %s: not a UUID", worker_id ? worker_id : "");
		return -EINVAL;
	}
	/* The id goes first: a reset cut short leaves either the old key
	 * with no id (the next init binds the new one) or no key at all
	 * (the next init creates one), never the old key under the new id. */
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (path_in(path, sizeof(path), state_dir, files[i])) {
			snprintf(err, err_size, "state dir %s: path too long", state_dir);
			return -ENAMETOOLONG;
		}
		if (unlink(path) && errno != ENOENT) {
			int rc = -errno;

			snprintf(err, err_size, "node key %s: %s", path, strerror(-rc));
			return rc;
		}
	}
	return eg_node_key_init(state_dir, worker_id, pub_path, pub_path_size, &created, err,
				err_size);
}

int eg_wk_node_key_load(struct eg_worker *w, const char *worker_id, char *err, size_t err_size)
{
	uint8_t seed[crypto_sign_SEEDBYTES], pk[crypto_sign_PUBLICKEYBYTES];
	char seed_path[4200];
	enum eg_key_err kerr;
	int rc;

	w->have_node_key = false;
	if (path_in(seed_path, sizeof(seed_path), w->state_dir, "node.seed"))
		return -ENAMETOOLONG;
	if (worker_id) {
		if (eg_uuid_parse(worker_id, w->worker_id)) {
			snprintf(err, err_size, "worker id %s: not a UUID", worker_id);
			return -EINVAL;
		}
	} else {
		rc = read_worker_id(w->state_dir, w->worker_id);
		if (rc == -ENOENT)
			return 0; /* no worker id: verdicts stay unsigned */
		if (rc) {
			snprintf(err, err_size, "state dir %s: node.worker: %s", w->state_dir,
				 rc == -EINVAL ? "not a UUID" : strerror(-rc));
			return rc;
		}
	}
	w->have_worker_id = true;
	kerr = eg_key_file_load(seed_path, EG_KEY_ALG_ED25519, EG_KEY_KIND_SECRET, seed,
				sizeof(seed), NULL);
	if (kerr == EG_KEY_FILE_MISSING)
		return 0;
	if (kerr != EG_KEY_OK) {
		snprintf(err, err_size, "node key %s: %s", seed_path, eg_key_err_name(kerr));
		return -EINVAL;
	}
	crypto_sign_seed_keypair(pk, w->node_sk, seed);
	sodium_memzero(seed, sizeof(seed));
	eg_key_id(pk, w->node_kid);
	w->have_node_key = true;
	return 0;
}

void eg_wk_sign_verdict(struct eg_worker *w, struct eg_verdict_result *res, uint64_t now)
{
	struct eg_signed_verdict v;
	uint8_t raw[EG_SV_LEN];

	res->signed_verdict[0] = '\0';
	if (!w->have_node_key || !res->decoded || res->d.verdict == EG_ALLOW)
		return;
	memset(&v, 0, sizeof(v));
	v.version = EG_SV_VERSION;
	v.verdict = (uint8_t)res->d.verdict;
	v.reason = (uint8_t)res->d.reason;
	v.has_record = res->had_record;
	memcpy(v.node_key_id, w->node_kid, EG_KEY_ID_LEN);
	memcpy(v.token_id, res->cap_token_id, EG_ID_BYTES);
	memcpy(v.sandbox, res->cap_sandbox, EG_ID_BYTES);
	memcpy(v.worker, w->worker_id, EG_ID_BYTES);
	if (res->had_record) {
		v.generation = res->record.generation;
		v.activation = res->record.activation;
	}
	v.issued_at = now;
	eg_sv_sign(&v, w->node_sk, raw);
	eg_sv_to_text(raw, res->signed_verdict);
}

int eg_verdict_verify(const char *node_pub_file, const char *text, struct eg_verdict_claim *out,
		      char *err, size_t err_size)
{
	uint8_t pk[crypto_sign_PUBLICKEYBYTES];
	struct eg_signed_verdict v;
	enum eg_key_err kerr;
	enum eg_sv_err serr;

	EG_WK_ERRBUF(err, err_size);
	if (sodium_init() < 0) {
		snprintf(err, err_size, "libsodium: initialisation failed");
		return -EIO;
	}
	kerr = eg_key_file_load(node_pub_file, EG_KEY_ALG_ED25519, EG_KEY_KIND_PUBLIC, pk,
				sizeof(pk), NULL);
	if (kerr == EG_KEY_OK)
		kerr = eg_key_check(pk);
	if (kerr != EG_KEY_OK) {
		snprintf(err, err_size, "node key %s: %s", node_pub_file, eg_key_err_name(kerr));
		return -EINVAL;
	}
	serr = eg_sv_verify_text(text, strlen(text), pk, &v);
	if (serr != EG_SV_OK) {
		snprintf(err, err_size, "verdict: %s", eg_sv_err_name(serr));
		return -EBADMSG;
	}
	memset(out, 0, sizeof(*out));
	out->verdict = (enum eg_verdict)v.verdict;
	out->reason = (enum eg_reason)v.reason;
	out->has_record = v.has_record;
	eg_key_id_format(v.node_key_id, out->node_key_id);
	memcpy(out->token_id, v.token_id, EG_ID_BYTES);
	memcpy(out->sandbox, v.sandbox, EG_ID_BYTES);
	memcpy(out->worker, v.worker, EG_ID_BYTES);
	out->generation = v.generation;
	out->activation = v.activation;
	out->issued_at = v.issued_at;
	return 0;
}
