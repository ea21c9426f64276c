/* SPDX-License-Identifier: Apache-2.0 */
/* execgate check: decode + verify + compare one token against a runtime
 * record given on the command line, in pure userspace, with the same core
 * the loader uses. Exit 0 allow, 3 refresh-route, 4 deny, 2 usage, 1 keys. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "core/admission.h"
#include "core/identity_opts.h"
#include "core/ids.h"
#include "execgate/commands.h"

#define STDIN_MAX 65536

enum {
	OPT_KEYS = 0x100,
	OPT_NO_RECORD,
	OPT_NEED,
	OPT_PORT,
	OPT_ESTABLISHED,
	OPT_NOW,
	OPT_JSON,
	OPT_IDENTITY,
	OPT_HELP,
};

static const struct option opts[] = {
    {"keys", required_argument, NULL, OPT_KEYS},
    {"no-record", no_argument, NULL, OPT_NO_RECORD},
    {"need", required_argument, NULL, OPT_NEED},
    {"port", required_argument, NULL, OPT_PORT},
    {"established", no_argument, NULL, OPT_ESTABLISHED},
    {"now", required_argument, NULL, OPT_NOW},
    {"json", no_argument, NULL, OPT_JSON},
    EG_IDENTITY_LONG_OPTS(OPT_IDENTITY),
    {"retired-below", required_argument, NULL, OPT_IDENTITY},
    {"profile-port", required_argument, NULL, OPT_IDENTITY},
    {"help", no_argument, NULL, OPT_HELP},
    {0},
};

static const char usage_text[] =
    "usage: execgate check --keys DIR|FILE --sandbox UUID --worker UUID --generation N\n"
    "                      --activation N [--pod-uid UUID] [--substrate NAME]\n"
    "                      [--retired-below N] [--profile-port N/tcp|udp]... [--no-record]\n"
    "                      [--need SCOPE] [--port N/tcp|udp] [--established] [--now UNIX]\n"
    "                      [--json] TOKEN|-\n";

static int usage_error(const char *fmt, const char *a)
{
	fprintf(stderr, "execgate check: ");
	fprintf(stderr, fmt, a);
	fputc('\n', stderr);
	return EG_EXIT_USAGE;
}

/* The token text: the argument, or stdin for "-". One trailing newline is
 * dropped (what echo and here-strings add); nothing else is forgiven. */
static int read_token(const char *arg, char **text, size_t *len)
{
	size_t n = 0;
	char *buf;

	if (strcmp(arg, "-") != 0) {
		*text = strdup(arg);
		if (!*text)
			return -ENOMEM;
		n = strlen(arg);
	} else {
		buf = malloc(STDIN_MAX + 1);
		if (!buf)
			return -ENOMEM;
		while (n <= STDIN_MAX) {
			ssize_t r = read(STDIN_FILENO, buf + n, STDIN_MAX + 1 - n);

			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				free(buf);
				return -errno;
			}
			if (r == 0)
				break;
			n += (size_t)r;
		}
		if (n > STDIN_MAX) {
			free(buf);
			return -EFBIG;
		}
		*text = buf;
	}
	if (n && (*text)[n - 1] == '\n')
		n--;
	*len = n;
	return 0;
}

static void json_id(const char *name, const uint8_t id[EG_ID_LEN], bool present)
{
	char uuid[EG_UUID_TEXT_LEN];

	if (!present) {
		printf("\"%s\":null", name);
		return;
	}
	eg_uuid_format(id, uuid);
	printf("\"%s\":\"%s\"", name, uuid);
}

/* Everything printed is a name from a fixed table, hex, a UUID or a
 * number: nothing needs escaping. */
static void print_json(struct eg_decision d, const struct eg_identity_opts *id, bool have_rec,
		       const struct eg_request *req, const struct eg_capability *cap)
{
	const struct eg_record *r = &id->rec;
	char scope[160], kid[EG_KEY_ID_TEXT_LEN], token_id[2 * EG_ID_LEN + 1];
	bool decoded = d.reason != EG_REASON_MALFORMED;
	bool authenticated =
	    decoded && d.reason != EG_REASON_UNKNOWN_KEY && d.reason != EG_REASON_BAD_SIGNATURE;

	printf("{\"verdict\":\"%s\",\"reason\":\"%s\",", eg_verdict_name(d.verdict),
	       eg_reason_name(d.reason));
	if (d.reason == EG_REASON_MALFORMED)
		printf("\"detail\":\"%s\",", eg_decode_err_name(d.decode_err));
	else
		printf("\"detail\":null,");
	printf("\"record\":%s,", have_rec ? "true" : "false");
	json_id("sandbox", r->sandbox, id->seen & EG_IDF_SANDBOX);
	putchar(',');
	json_id("worker", r->worker, have_rec);
	printf(",\"substrate\":");
	printf(have_rec ? "\"%s\"," : "null,", eg_substrate_name(r->substrate));
	json_id("pod_uid", r->pod_uid, have_rec);
	if (have_rec)
		printf(",\"generation\":%llu,\"activation\":%u,\"retired_below\":%llu",
		       (unsigned long long)r->generation, r->activation,
		       (unsigned long long)r->retired_below);
	else
		printf(",\"generation\":null,\"activation\":null,\"retired_below\":null");
	eg_scope_format(req->scope, scope, sizeof(scope));
	printf(",\"need\":\"%s\",\"open\":\"%s\"", scope,
	       req->open_kind == EG_OPEN_ESTABLISHED ? "established" : "new");
	if (!decoded) {
		printf(",\"token\":null}\n");
		return;
	}
	eg_key_id_format(cap->key_id, kid);
	eg_scope_format(cap->scope, scope, sizeof(scope));
	printf(",\"token\":{\"authenticated\":%s,\"key_id\":\"%s\",",
	       authenticated ? "true" : "false", kid);
	sodium_bin2hex(token_id, sizeof(token_id), cap->token_id, EG_ID_LEN);
	printf("\"token_id\":\"%s\"", token_id);
	putchar(',');
	json_id("sandbox", cap->sandbox, true);
	putchar(',');
	json_id("worker", cap->worker, true);
	printf(",\"substrate\":\"%s\",", eg_substrate_name(cap->substrate));
	json_id("pod_uid", cap->pod_uid, true);
	printf(",\"generation\":%llu,\"activation\":%u,\"scope\":\"%s\",\"port\":%u,"
	       "\"proto\":\"%s\",\"issued_at\":%llu,\"not_before\":%llu,\"expiry\":%llu}}\n",
	       (unsigned long long)cap->generation, cap->activation, scope, cap->port,
	       eg_proto_name(cap->proto), (unsigned long long)cap->issued_at,
	       (unsigned long long)cap->not_before, (unsigned long long)cap->expiry);
}

static int exit_code(enum eg_verdict v)
{
	switch (v) {
	case EG_ALLOW:
		return EG_EXIT_OK;
	case EG_REFRESH_ROUTE:
		return EG_EXIT_REFRESH;
	default:
		return EG_EXIT_DENY;
	}
}

int cmd_check(int argc, char **argv)
{
	struct eg_identity_opts id;
	struct eg_request req = {.open_kind = EG_OPEN_NEW};
	struct eg_capability cap;
	struct eg_keyset *ks = NULL;
	struct eg_admission adm;
	struct eg_decision d;
	const char *keys = NULL;
	bool no_record = false, json = false, have_now = false;
	uint8_t raw[EG_CAP_LEN + 1];
	char err[256], bad[4096], *text = NULL;
	size_t text_len = 0, raw_len = 0;
	uint64_t now = 0;
	enum eg_key_err kerr;
	enum eg_decode_err derr;
	int c, idx, ret, rc = EG_EXIT_ERROR;

	if (sodium_init() < 0) {
		fprintf(stderr, "execgate check: libsodium: initialisation failed\n");
		return EG_EXIT_ERROR;
	}
	eg_identity_opts_init(&id);
	memset(&cap, 0, sizeof(cap));
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":", opts, &idx)) != -1) {
		switch (c) {
		case OPT_KEYS:
			keys = optarg;
			break;
		case OPT_NO_RECORD:
			no_record = true;
			break;
		case OPT_NEED:
			if (eg_scope_parse(optarg, &req.scope) != 0)
				return usage_error("--need '%s': not a list of file.read, "
						   "file.write, exec, terminal, watch, control, "
						   "serviceport",
						   optarg);
			break;
		case OPT_PORT:
			if (eg_port_parse(optarg, &req.port, &req.proto) != 0)
				return usage_error("--port '%s': not PORT/tcp or PORT/udp", optarg);
			break;
		case OPT_ESTABLISHED:
			req.open_kind = EG_OPEN_ESTABLISHED;
			break;
		case OPT_NOW:
			if (eg_parse_u64(optarg, UINT64_MAX, &now) != 0)
				return usage_error("--now '%s': not a unix time in seconds",
						   optarg);
			have_now = true;
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_IDENTITY:
			if (eg_identity_opt(&id, opts[idx].name, optarg, err, sizeof(err)) < 0)
				return usage_error("%s", err);
			break;
		case OPT_HELP:
			fputs(usage_text, stdout);
			return EG_EXIT_OK;
		case ':':
			return usage_error("%s: missing value", argv[optind - 1]);
		default:
			return usage_error("%s: unknown option", argv[optind - 1]);
		}
	}
	if (optind == argc)
		return usage_error("missing TOKEN (or - for stdin)%s", "");
	if (optind + 1 != argc)
		return usage_error("%s: unexpected argument", argv[optind + 1]);
	if (!keys)
		return usage_error("missing --keys DIR|FILE%s", "");
	if (eg_identity_opts_finish(&id, no_record ? 0 : EG_IDF_REQUIRED, err, sizeof(err)) != 0)
		return usage_error("%s", err);
	/* ServicePort traffic is, by definition, a use of the serviceport
	 * scope. */
	if (req.port)
		req.scope |= EG_SCOPE_SERVICEPORT;
	if (!have_now)
		now = (uint64_t)time(NULL);

	ret = read_token(argv[optind], &text, &text_len);
	if (ret == -EFBIG)
		return usage_error("stdin: token longer than %s bytes", "65536");
	if (ret) {
		fprintf(stderr, "execgate check: token: %s\n", strerror(-ret));
		return EG_EXIT_ERROR;
	}

	ks = malloc(sizeof(*ks));
	if (!ks) {
		fprintf(stderr, "execgate check: %s\n", strerror(ENOMEM));
		goto cleanup;
	}
	eg_keyset_init(ks);
	kerr = eg_keyset_load_path(ks, keys, bad, sizeof(bad));
	if (kerr != EG_KEY_OK) {
		fprintf(stderr, "execgate check: keys %s: %s\n", bad, eg_key_err_name(kerr));
		goto cleanup;
	}
	if (ks->n == 0) {
		/* Every token would be unknown-key: a wrong path, not a verdict. */
		fprintf(stderr, "execgate check: keys %s: no *.pub key files\n", keys);
		goto cleanup;
	}
	adm.keys = ks;
	adm.cache = NULL; /* one token, one check */

	derr = eg_cap_text_to_bin(text, text_len, raw, sizeof(raw), &raw_len);
	if (derr != EG_DECODE_OK)
		d = (struct eg_decision){
		    .verdict = EG_DENY, .reason = EG_REASON_MALFORMED, .decode_err = derr};
	else
		d = eg_admit(&adm, raw, raw_len, no_record ? NULL : &id.rec, now, &req, &cap);

	if (json)
		print_json(d, &id, !no_record, &req, &cap);
	else if (d.verdict == EG_ALLOW)
		printf("allow\n");
	else if (d.reason == EG_REASON_MALFORMED)
		printf("deny: malformed: %s\n", eg_decode_err_name(d.decode_err));
	else
		printf("%s: %s\n", eg_verdict_name(d.verdict), eg_reason_name(d.reason));
	if (fflush(stdout) != 0) {
		fprintf(stderr, "execgate check: stdout: %s\n", strerror(errno));
		goto cleanup;
	}
	rc = exit_code(d.verdict);

cleanup:
	free(ks);
	free(text);
	return rc;
}
