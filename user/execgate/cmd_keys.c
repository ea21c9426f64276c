// SPDX-License-Identifier: Apache-2.0
/* execgate keys add FILE | remove KID | list: the worker's verification
 * key set in <state-dir>/keys. After a change, an execgated serving this
 * state dir must hold the same key set within a second (its digest, GET
 * /v1/keys): a change on disk that the daemon did not take would leave the
 * key trusted where capabilities are checked, behind an exit 0. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <sodium.h>
#include "execgate/commands.h"
#include "frontend/unix_get.h"
#include "lib/json.h"

/* How long a serving daemon has to take a change (docs/operators.md §11). */
#define TAKE_MS 1000

static const struct eg_opt keys_opts[] = {
    EG_OPT("json", NULL, "list: print one JSON object (schema_version 2)"),
    EG_OPT("socket", "PATH",
	   "add/remove: execgated's API socket (default " EG_DAEMON_DEFAULT_SOCKET
	   "); given, a daemon must answer there for this state dir"),
    EG_OPT_END,
};

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool same_dir(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* One GET /v1/keys within ms: 1 with the daemon's state dir and digest
 * (*doc, to json_decref), 0 when nobody listens at sock, else the exit
 * code after the message. */
static int ask_keys(const char *sock, int ms, json_t **doc)
{
	char *body = NULL;
	int status = 0, rc;

	*doc = NULL;
	rc = eg_unix_get(sock, "/v1/keys", ms > 0 ? ms : 1, &status, &body);
	if (rc == -ENOENT || rc == -ECONNREFUSED)
		return 0;
	if (rc) {
		eg_cli_err("execgated at %s: %s: whether it took the change is unknown", sock,
			   rc == -ETIMEDOUT ? "no answer within 1 s"
			   : rc == -EPROTO  ? "not an HTTP answer"
					    : strerror(-rc));
		return EG_EXIT_UNTAKEN;
	}
	*doc = json_loads(body, 0, NULL);
	free(body);
	if (status != 200 || !json_is_string(json_object_get(*doc, "digest")) ||
	    !json_is_string(json_object_get(*doc, "state_dir"))) {
		json_t *reason = json_object_get(*doc, "reason");

		eg_cli_err("execgated at %s: GET /v1/keys: %d %s: whether it took the change is "
			   "unknown",
			   sock, status,
			   json_is_string(reason) ? json_string_value(reason)
						  : "no key-set digest");
		json_decref(*doc);
		*doc = NULL;
		return EG_EXIT_UNTAKEN;
	}
	return 1;
}

/* After a change: when an execgated serves this state dir (at sock), waits
 * up to TAKE_MS for it to hold digest, the set the change left on disk.
 * EG_EXIT_OK when it does or no daemon serves here; EG_EXIT_UNTAKEN when it
 * does not answer or holds another set by then. */
static int await_daemon(const struct eg_cli_parse *p, const char *sock, bool sock_given,
			const char *digest)
{
	long long end = mono_ms() + TAKE_MS;
	char held[EG_KEYS_DIGEST_TEXT_LEN] = "";
	json_t *doc;
	int rc;

	for (;;) {
		rc = ask_keys(sock, (int)(end - mono_ms()), &doc);
		if (rc == 0 && !sock_given)
			return EG_EXIT_OK; /* no daemon here */
		if (rc == 0) {
			eg_cli_err("execgated at %s: nobody listens: whether a daemon took the "
				   "change is unknown",
				   sock);
			return EG_EXIT_UNTAKEN;
		}
		if (rc != 1)
			return rc;
		if (!same_dir(json_string_value(json_object_get(doc, "state_dir")), p->state_dir)) {
			json_decref(doc);
			if (!sock_given)
				return EG_EXIT_OK; /* it serves another state dir */
			eg_cli_err("execgated at %s: serves another state dir than %s", sock,
				   p->state_dir);
			return EG_EXIT_ERROR;
		}
		snprintf(held, sizeof(held), "%s",
			 json_string_value(json_object_get(doc, "digest")));
		json_decref(doc);
		if (!strcmp(held, digest))
			return EG_EXIT_OK;
		if (mono_ms() + 20 >= end)
			break;
		usleep(20000);
	}
	eg_cli_err("execgated at %s: has not taken the change within 1 s: it holds key set %s, "
		   "%s/keys holds %s",
		   sock, held, p->state_dir, digest);
	return EG_EXIT_UNTAKEN;
}

struct list_out {
	bool json;
	json_t *keys;
};

static int list_one(const char *kid, const uint8_t pk[32], void *ctx)
{
	struct list_out *o = ctx;
	char hex[65];

	if (o->json)
		return eg_json_key_add(o->keys, kid, pk);
	sodium_bin2hex(hex, sizeof(hex), pk, 32);
	printf("%s %s\n", kid, hex);
	return 0;
}

static int run_keys(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	struct list_out o = {0};
	struct eg_cli_parse p;
	struct eg_worker *w;
	char err[EG_ERR_MAX] = "", kid[EG_KID_TEXT_LEN], digest[EG_KEYS_DIGEST_TEXT_LEN];
	const char *name, *val, *verb, *sock = EG_DAEMON_DEFAULT_SOCKET;
	bool sock_given = false;
	int c, rc;

	eg_cli_parse_init(&p, cmd, argc, argv);
	while ((c = eg_cli_next(&p, &name, &val)) == 1) {
		/* --json is taken by eg_cli_next; --socket is ours */
		sock = val;
		sock_given = true;
	}
	if (c < 0)
		return p.exit;
	o.json = p.json;
	verb = p.npos ? p.pos[0] : "";
	if (!((!strcmp(verb, "add") && p.npos == 2) || (!strcmp(verb, "remove") && p.npos == 2) ||
	      (!strcmp(verb, "list") && p.npos == 1)))
		return eg_cli_usage(&p, "expected add FILE, remove KID or list");
	if (eg_cli_worker_open(&p, &w))
		return EG_EXIT_ERROR;
	if (!strcmp(verb, "add")) {
		rc = eg_worker_keys_add(w, p.pos[1], kid, err, sizeof(err));
		if (rc >= 0)
			/* 1: already present. Adding is idempotent, so a
			 * re-run of a provisioning script succeeds. */
			printf("%s%s\n", kid, rc == 1 ? " (already present)" : "");
	} else if (!strcmp(verb, "remove")) {
		rc = eg_worker_keys_remove(w, p.pos[1], err, sizeof(err));
		if (!rc)
			printf("removed %s\n", p.pos[1]);
	} else {
		json_t *doc = o.json ? eg_json_keys(&o.keys) : NULL;

		rc = o.json && !doc ? -ENOMEM : eg_worker_keys_list(w, list_one, &o);
		if (doc) {
			/* The members of GET /v1/keys, in its order: one
			 * schema (docs/schema/key.schema.json) for both. */
			eg_worker_keys_warnings(w, err, sizeof(err));
			json_object_set_new(doc, "warnings", eg_json_lines(err));
			err[0] = '\0';
			eg_worker_keys_digest(w, digest);
			json_object_set_new(doc, "digest", json_string(digest));
			json_object_set_new(doc, "state_dir", json_string(p.state_dir));
		}
		if (rc < 0) {
			snprintf(err, sizeof(err), "keys: %s", strerror(-rc));
			json_decref(doc);
		} else if (doc && eg_json_print(stdout, doc)) { /* takes doc */
			snprintf(err, sizeof(err), "keys: cannot write the list");
			rc = -EIO;
		}
	}
	/* The files the load skipped (their keys are not trusted), each on
	 * a line of its own. */
	if (rc >= 0) {
		if (!strcmp(verb, "list"))
			eg_worker_keys_warnings(w, err, sizeof(err));
		for (char *line = err; *line;) {
			size_t n = strcspn(line, "\n");

			eg_cli_err("warning: skipped %.*s", (int)n, line);
			line += n + (line[n] ? 1 : 0);
		}
	}
	/* the set the change left in memory is the set that loads from the
	 * directory now (eg_worker_keys_add/remove) */
	eg_worker_keys_digest(w, digest);
	eg_worker_close(w);
	if (rc < 0) {
		eg_cli_err("%s", err);
		return rc == -EINVAL && !strcmp(verb, "remove") ? EG_EXIT_USAGE
								: eg_cli_exit_for(rc);
	}
	if (strcmp(verb, "list"))
		return await_daemon(&p, sock, sock_given, digest);
	return EG_EXIT_OK;
}

const struct eg_cli_cmd eg_cmd_keys = {
    .name = "keys",
    .args = "add FILE | remove KID | list [--json] [--socket PATH]",
    .about = "The verification keys capabilities are checked with, in <state-dir>/keys.\n"
	     "add FILE takes a public key file (execgate-issue keygen writes KID.pub) and\n"
	     "refuses a secret one; adding a key already present succeeds (exit 0).\n"
	     "remove KID exits 7 when there is no such key. A file in the key set that\n"
	     "does not load is skipped (its key is not trusted) and named on stderr.\n"
	     "After add or remove, an execgated serving this state dir must hold the new\n"
	     "key set (its digest) within 1 s, else exit 9: the change is on disk, but\n"
	     "that daemon may still trust the old set.",
    .opts = keys_opts,
    .dirs = true,
    .run = run_keys,
};
