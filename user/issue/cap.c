/* SPDX-License-Identifier: Apache-2.0 */
/* execgate-issue cap: sign one capability v1 and print its text form. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "core/capability.h"
#include "core/identity_opts.h"
#include "core/ids.h"
#include "core/keyset.h"
#include "issue/issue.h"

enum {
	OPT_KEY = 0x100,
	OPT_SCOPE,
	OPT_PORT,
	OPT_TTL,
	OPT_NOW,
	OPT_NOT_BEFORE,
	OPT_IDENTITY,
	OPT_HELP,
};

static const struct option opts[] = {
    {"key", required_argument, NULL, OPT_KEY},
    {"scope", required_argument, NULL, OPT_SCOPE},
    {"port", required_argument, NULL, OPT_PORT},
    {"ttl", required_argument, NULL, OPT_TTL},
    {"now", required_argument, NULL, OPT_NOW},
    {"not-before", required_argument, NULL, OPT_NOT_BEFORE},
    EG_IDENTITY_LONG_OPTS(OPT_IDENTITY),
    {"help", no_argument, NULL, OPT_HELP},
    {0},
};

static int usage_error(const char *msg)
{
	fprintf(stderr, "execgate-issue cap: %s\n", msg);
	return ISSUE_EXIT_USAGE;
}

static int bad_value(const char *flag, const char *value, const char *why)
{
	fprintf(stderr, "execgate-issue cap: --%s '%s': %s\n", flag, value, why);
	return ISSUE_EXIT_USAGE;
}

int cmd_cap(int argc, char **argv)
{
	struct eg_identity_opts id;
	struct eg_capability cap;
	uint8_t seed[crypto_sign_SEEDBYTES], sk[crypto_sign_SECRETKEYBYTES];
	uint8_t pk[crypto_sign_PUBLICKEYBYTES], raw[EG_CAP_LEN], msg[EG_CAP_SIGNED_LEN];
	char err[256], text[EG_CAP_TEXT_MAX];
	const char *key_path = NULL;
	uint64_t ttl = EG_CAP_MAX_TTL, now = 0, not_before = 0;
	bool have_scope = false, have_now = false, have_nb = false;
	struct eg_capability check;
	int c, idx, ret, rc = ISSUE_EXIT_ERROR;

	memset(&cap, 0, sizeof(cap));
	eg_identity_opts_init(&id);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, &idx)) != -1) {
		switch (c) {
		case OPT_KEY:
			key_path = optarg;
			break;
		case OPT_SCOPE:
			if (eg_scope_parse(optarg, &cap.scope) != 0)
				return bad_value("scope", optarg,
						 "not a list of file.read, file.write, exec, "
						 "terminal, watch, control, serviceport");
			have_scope = true;
			break;
		case OPT_PORT:
			if (eg_port_parse(optarg, &cap.port, &cap.proto) != 0)
				return bad_value("port", optarg, "not PORT/tcp or PORT/udp");
			break;
		case OPT_TTL:
			if (eg_parse_u64(optarg, EG_CAP_MAX_TTL, &ttl) != 0 || ttl == 0)
				return bad_value("ttl", optarg,
						 "not a number of seconds in 1..120");
			break;
		case OPT_NOW:
			if (eg_parse_u64(optarg, UINT64_MAX - EG_CAP_MAX_TTL, &now) != 0)
				return bad_value("now", optarg, "not a unix time in seconds");
			have_now = true;
			break;
		case OPT_NOT_BEFORE:
			if (eg_parse_u64(optarg, UINT64_MAX, &not_before) != 0)
				return bad_value("not-before", optarg,
						 "not a unix time in seconds");
			have_nb = true;
			break;
		case OPT_IDENTITY:
			if (eg_identity_opt(&id, opts[idx].name, optarg, err, sizeof(err)) < 0)
				return usage_error(err);
			break;
		case OPT_HELP:
			printf(
			    "usage: execgate-issue cap --key SEEDFILE --sandbox UUID --worker UUID "
			    "--generation N --activation N [--pod-uid UUID] [--substrate NAME] "
			    "--scope LIST [--port N/tcp|udp] [--ttl S] [--now UNIX] "
			    "[--not-before UNIX]\n");
			return ISSUE_EXIT_OK;
		case ':':
			snprintf(err, sizeof(err), "%s: missing value", argv[optind - 1]);
			return usage_error(err);
		default:
			snprintf(err, sizeof(err), "%s: unknown option", argv[optind - 1]);
			return usage_error(err);
		}
	}
	if (optind != argc)
		return bad_value("", argv[optind], "unexpected argument");
	if (!key_path)
		return usage_error("missing --key SEEDFILE");
	if (eg_identity_opts_finish(&id, EG_IDF_REQUIRED, err, sizeof(err)) != 0)
		return usage_error(err);
	if (!have_scope)
		return usage_error("missing --scope");
	if (cap.port && !(cap.scope & EG_SCOPE_SERVICEPORT))
		return usage_error("--port needs the serviceport scope");
	if (!cap.port && (cap.scope & EG_SCOPE_SERVICEPORT))
		return usage_error("the serviceport scope needs --port");
	if (!have_now) {
		time_t t = time(NULL);

		now = (uint64_t)t;
	}
	if (!have_nb)
		not_before = now;
	if (not_before < now || not_before >= now + ttl)
		return usage_error("--not-before must lie in [--now, --now + --ttl)");

	ret = seed_file_read(key_path, seed, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "execgate-issue cap: key %s: %s\n", key_path, err);
		return ISSUE_EXIT_ERROR;
	}
	/* Only the seed is ever read; the public half (and so the key id) is
	 * derived from it, never taken from a file next to it. */
	crypto_sign_seed_keypair(pk, sk, seed);
	sodium_memzero(seed, sizeof(seed));

	cap.version = EG_CAP_VERSION;
	cap.substrate = id.rec.substrate;
	memcpy(cap.sandbox, id.rec.sandbox, EG_ID_LEN);
	memcpy(cap.worker, id.rec.worker, EG_ID_LEN);
	memcpy(cap.pod_uid, id.rec.pod_uid, EG_ID_LEN);
	cap.generation = id.rec.generation;
	cap.activation = id.rec.activation;
	cap.issued_at = now;
	cap.not_before = not_before;
	cap.expiry = now + ttl;
	eg_key_id(pk, cap.key_id);
	do
		randombytes_buf(cap.token_id, EG_ID_LEN);
	while (eg_id_is_zero(cap.token_id));

	eg_cap_encode_body(&cap, raw);
	eg_cap_signed_message(raw, msg);
	crypto_sign_detached(cap.signature, NULL, msg, sizeof(msg), sk);
	eg_cap_encode(&cap, raw);

	/* What we print must pass the receiver's decoder and verify: check it
	 * here rather than ship a token no worker accepts. */
	ret = eg_cap_decode(raw, sizeof(raw), &check);
	if (ret != EG_DECODE_OK ||
	    crypto_sign_verify_detached(raw + EG_OFF_SIGNATURE, msg, sizeof(msg), pk) != 0) {
		fprintf(stderr,
			"execgate-issue cap: internal error: token fails its own check (%s)\n",
			eg_decode_err_name(ret));
		goto cleanup;
	}
	eg_cap_to_text(raw, text);
	if (printf("%s\n", text) < 0 || fflush(stdout) != 0) {
		fprintf(stderr, "execgate-issue cap: stdout: %s\n", strerror(errno));
		goto cleanup;
	}
	rc = ISSUE_EXIT_OK;

cleanup:
	sodium_memzero(sk, sizeof(sk));
	return rc;
}
