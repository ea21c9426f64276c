/* SPDX-License-Identifier: Apache-2.0 */
/* execgate-issue cap: sign one capability v1 and print its text form. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "core/capability.h"
#include "frontend/identity_opts.h"
#include "core/identity.h"
#include "core/ids.h"
#include "core/keyset.h"
#include "issue/issue.h"

static const struct eg_opt opts[] = {
    EG_OPT("key", "SEEDFILE", "the signing seed (keygen's KID.seed, mode 0600 or stricter)"),
    EG_OPT("sandbox", "UUID", "the sandbox the capability is for (required)"),
    EG_OPT("worker", "UUID", "the worker the execution was selected on (required)"),
    EG_OPT("generation", "N", "the execution generation it was selected for (required)"),
    EG_OPT("activation", "N", "the activation attempt of that generation (required)"),
    EG_OPT("pod-uid", "UUID", "the pod UID (substrate firecracker-k8s; default all-zero)"),
    EG_OPT("substrate", "NAME", "firecracker-host (default) or firecracker-k8s"),
    EG_OPT("scope", "LIST",
	   "comma-separated: file.read, file.write, exec, terminal, watch, control, "
	   "serviceport (required)"),
    EG_OPT("port", "N/tcp|udp", "the ServicePort the serviceport scope allows (only with it)"),
    EG_OPT("ttl", "S", "lifetime in seconds, 1..120 (default 120)"),
    EG_OPT("now", "UNIX", "issue at this unix time (seconds) instead of the clock"),
    EG_OPT("not-before", "UNIX",
	   "valid from this unix time, in [--now, --now + --ttl) "
	   "(default --now)"),
    EG_OPT_END,
};

static const struct issue_cmd cap_cmd = {
    .name = "cap",
    .synopsis = "--key SEEDFILE --sandbox UUID --worker UUID --generation N\n"
		"       --activation N [--pod-uid UUID] [--substrate NAME] --scope LIST\n"
		"       [--port N/tcp|udp] [--ttl S] [--now UNIX] [--not-before UNIX]",
    .about = "Signs one capability v1 for the execution identity given and prints its text\n"
	     "form on stdout. Workers verify it with execgate check or admit, or over\n"
	     "execgated's API; they allow at most 15 seconds of clock skew.",
    .opts = opts,
};

static int bad_value(const struct eg_opts *p, const char *flag, const char *value, const char *why)
{
	return eg_opts_usage(p, "--%s '%s': %s", flag, value, why);
}

int cmd_cap(int argc, char **argv)
{
	struct eg_identity_opts id;
	struct eg_capability cap;
	uint8_t sk[crypto_sign_SECRETKEYBYTES];
	uint8_t pk[crypto_sign_PUBLICKEYBYTES], raw[EG_CAP_LEN], msg[EG_CAP_SIGNED_LEN];
	char text[EG_CAP_TEXT_MAX];
	const char *key_path = NULL;
	uint64_t ttl = EG_CAP_MAX_TTL, now = 0, not_before = 0;
	bool have_scope = false, have_now = false, have_nb = false;
	struct eg_capability check;
	int c, ret, rc = ISSUE_EXIT_ERROR;
	const struct eg_opt *o;
	const char *optarg;
	struct eg_opts p;

	memset(&cap, 0, sizeof(cap));
	eg_identity_opts_init(&id);
	issue_opts_init(&p, &cap_cmd, argc, argv);
	while ((c = issue_next_signer(&p, &id, &key_path, &o, &optarg)) == 1) {
		const char *name = o->name;

		if (!strcmp(name, "scope")) {
			if (eg_scope_parse(optarg, &cap.scope) != 0)
				return bad_value(&p, name, optarg,
						 "not a list of file.read, file.write, exec, "
						 "terminal, watch, control, serviceport");
			have_scope = true;
		} else if (!strcmp(name, "port")) {
			if (eg_port_parse(optarg, &cap.port, &cap.proto) != 0)
				return bad_value(&p, name, optarg, "not PORT/tcp or PORT/udp");
		} else if (!strcmp(name, "ttl")) {
			if (eg_parse_u64(optarg, EG_CAP_MAX_TTL, &ttl) != 0 || ttl == 0)
				return bad_value(&p, name, optarg,
						 "not a number of seconds in 1..120");
		} else if (!strcmp(name, "now")) {
			if (eg_parse_u64(optarg, UINT64_MAX - EG_CAP_MAX_TTL, &now) != 0)
				return bad_value(&p, name, optarg, "not a unix time in seconds");
			have_now = true;
		} else if (!strcmp(name, "not-before")) {
			if (eg_parse_u64(optarg, UINT64_MAX, &not_before) != 0)
				return bad_value(&p, name, optarg, "not a unix time in seconds");
			have_nb = true;
		}
	}
	if (c < 0)
		return p.exit;
	if (!have_scope)
		return eg_opts_usage(&p, "missing --scope");
	if (cap.port && !(cap.scope & EG_SCOPE_SERVICEPORT))
		return eg_opts_usage(&p, "--port needs the serviceport scope");
	if (!cap.port && (cap.scope & EG_SCOPE_SERVICEPORT))
		return eg_opts_usage(&p, "the serviceport scope needs --port");
	if (!have_now) {
		time_t t = time(NULL);

		now = (uint64_t)t;
	}
	if (!have_nb)
		not_before = now;
	if (not_before < now || not_before >= now + ttl)
		return eg_opts_usage(&p, "--not-before must lie in [--now, --now + --ttl)");

	if (issue_signing_key("cap", "key", key_path, pk, sk))
		return ISSUE_EXIT_ERROR;

	cap.version = EG_CAP_VERSION;
	cap.id = id.rec.id;
	cap.issued_at = now;
	cap.not_before = not_before;
	cap.expiry = now + ttl;
	eg_key_id(pk, cap.key_id);
	do
		randombytes_buf(cap.token_id, EG_ID_BYTES);
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
			"execgate-issue: cap: internal error: token fails its own check (%s)\n",
			eg_decode_err_name(ret));
		goto cleanup;
	}
	eg_cap_to_text(raw, text);
	rc = issue_print_text("cap", text);

cleanup:
	sodium_memzero(sk, sizeof(sk));
	return rc;
}
