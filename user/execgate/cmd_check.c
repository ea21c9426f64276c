// SPDX-License-Identifier: Apache-2.0
/* execgate check: the verdict of admit, without a grant. Against the
 * installed record of the token's sandbox (the worker), or, with --keys and
 * the identity flags, against a record given on the command line, in pure
 * userspace with the same core: what an issuer tests tokens with. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/admission.h"
#include "core/identity_opts.h"
#include "core/ids.h"
#include "execgate/commands.h"

static const struct eg_opt check_opts[] = {
    EG_OPT("keys", "DIR|FILE",
	   "check offline: verification keys (*.pub files, or one); the record is "
	   "the identity flags below"),
    EG_OPT("sandbox", "UUID", "offline record: the sandbox"),
    EG_OPT("worker", "UUID", "offline record: this worker's id"),
    EG_OPT("generation", "N", "offline record: the execution generation it runs"),
    EG_OPT("activation", "N", "offline record: the activation attempt"),
    EG_OPT("pod-uid", "UUID", "offline record: the pod UID (firecracker-k8s)"),
    EG_OPT("substrate", "NAME", "offline record: firecracker-host (default) or firecracker-k8s"),
    EG_OPT("retired-below", "N", "offline record: generations below N are retired here"),
    EG_OPT_MANY("service-port", "PORT/tcp|udp", "offline record: a ServicePort of the execution"),
    EG_OPT("no-record", NULL, "offline: no record here (refresh-route: no-record)"),
    EG_OPT("need", "SCOPE",
	   "the access asked for (file.read, file.write, exec, terminal, watch, "
	   "control, serviceport)"),
    EG_OPT("port", "N/tcp|udp", "ServicePort traffic to this port (implies --need serviceport)"),
    EG_OPT("established", NULL, "a stream already open (an activation change keeps it)"),
    EG_OPT("now", "UNIX", "judge the token at this unix time (seconds) instead of the clock"),
    EG_OPT("json", NULL, "print the verdict as one JSON object (schema_version 2)"),
    EG_OPT_END,
};

static void from_identity(const struct eg_record *r, struct eg_exec_record *k)
{
	memset(k, 0, sizeof(*k));
	memcpy(k->sandbox, r->sandbox, EG_ID_BYTES);
	memcpy(k->worker, r->worker, EG_ID_BYTES);
	memcpy(k->pod_uid, r->pod_uid, EG_ID_BYTES);
	k->substrate = r->substrate;
	k->generation = r->generation;
	k->activation = r->activation;
	k->state = r->retired_below > r->generation ? EG_RECORD_RETIRED : EG_RECORD_ACTIVE;
}

/* The offline check: keys from a directory, the record from the flags. */
static int check_offline(const char *keys, const struct eg_identity_opts *id, bool no_record,
			 const struct eg_admit_args *a, struct eg_verdict_result *res)
{
	struct eg_admission adm = {.cache = NULL};
	struct eg_capability cap;
	struct eg_keyset *ks;
	uint8_t raw[EG_CAP_LEN + 1];
	size_t raw_len = 0;
	char bad[4096];
	enum eg_key_err kerr;
	enum eg_decode_err derr;

	memset(res, 0, sizeof(*res));
	memset(&cap, 0, sizeof(cap));
	ks = malloc(sizeof(*ks));
	if (!ks) {
		eg_cli_err("%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	eg_keyset_init(ks);
	kerr = eg_keyset_load_path(ks, keys, bad, sizeof(bad));
	if (kerr != EG_KEY_OK) {
		eg_cli_err("keys %s: %s: %s", bad, eg_key_err_name(kerr), eg_key_err_detail(kerr));
		free(ks);
		return -EINVAL;
	}
	if (ks->n == 0) {
		/* Every token would be unknown-key: a wrong path, not a verdict. */
		eg_cli_err("keys %s: no *.pub key files", keys);
		free(ks);
		return -ENOENT;
	}
	adm.keys = ks;
	derr = eg_cap_text_to_bin(a->token_text, strlen(a->token_text), raw, sizeof(raw), &raw_len);
	if (derr != EG_DECODE_OK)
		res->d = (struct eg_decision){
		    .verdict = EG_DENY, .reason = EG_REASON_MALFORMED, .decode_err = derr};
	else
		res->d = eg_admit(&adm, raw, raw_len, no_record ? NULL : &id->rec, a->now_unix,
				  &a->req, &cap);
	free(ks);
	/* As the worker does: contents only from a verified token. */
	if (res->d.reason != EG_REASON_MALFORMED && res->d.reason != EG_REASON_UNKNOWN_KEY &&
	    res->d.reason != EG_REASON_BAD_SIGNATURE) {
		res->decoded = true;
		memcpy(res->cap_sandbox, cap.sandbox, EG_ID_BYTES);
		memcpy(res->cap_token_id, cap.token_id, EG_ID_BYTES);
		memcpy(res->cap_worker, cap.worker, EG_ID_BYTES);
		res->cap_generation = cap.generation;
		res->cap_activation = cap.activation;
		res->cap_scope = cap.scope;
		res->cap_expiry = cap.expiry;
	}
	res->had_record = !no_record;
	if (!no_record)
		from_identity(&id->rec, &res->record);
	return 0;
}

static int run_check(const struct eg_cli_cmd *cmd, int argc, char **argv)
{
	struct eg_admit_args a = {.req = {.open_kind = EG_OPEN_NEW}};
	struct eg_identity_opts id;
	struct eg_verdict_result res;
	struct eg_cli_parse p;
	struct eg_worker *w;
	const char *name, *val, *keys = NULL;
	bool no_record = false, json = false, have_now = false;
	char err[EG_ERR_MAX], *text = NULL;
	int c, rc;

	eg_identity_opts_init(&id);
	eg_cli_parse_init(&p, cmd, argc, argv);
	while ((c = eg_cli_next(&p, &name, &val)) == 1) {
		rc = eg_identity_opt(&id, name, val, err, sizeof(err));
		if (rc < 0)
			return eg_cli_usage(&p, "%s", err);
		if (rc == 1)
			continue;
		if (!strcmp(name, "keys")) {
			keys = val;
		} else if (!strcmp(name, "no-record")) {
			no_record = true;
		} else if (!strcmp(name, "need")) {
			if (eg_scope_parse(val, &a.req.scope))
				return eg_cli_usage(&p,
						    "--need '%s': not a list of file.read, "
						    "file.write, exec, terminal, watch, control, "
						    "serviceport",
						    val);
		} else if (!strcmp(name, "port")) {
			if (eg_port_parse(val, &a.req.port, &a.req.proto))
				return eg_cli_usage(&p, "--port '%s': not PORT/tcp or PORT/udp",
						    val);
		} else if (!strcmp(name, "established")) {
			a.req.open_kind = EG_OPEN_ESTABLISHED;
		} else if (!strcmp(name, "now")) {
			if (eg_cli_parse_u64(val, UINT64_MAX / 1000000000ULL, &a.now_unix))
				return eg_cli_usage(&p, "--now '%s': not a unix time in seconds",
						    val);
			have_now = true;
		} else if (!strcmp(name, "json")) {
			json = true;
		}
	}
	if (c < 0)
		return p.exit;
	if (p.npos != 1)
		return eg_cli_usage(
		    &p, p.npos ? "%s: unexpected argument" : "missing TOKEN (or - for stdin)%s",
		    p.npos ? p.pos[1] : "");
	if (!keys && (id.seen || no_record))
		return eg_cli_usage(&p, "the record flags need --keys (an offline check); "
					"without them check reads the installed record");
	if (keys && eg_identity_opts_finish(&id, no_record ? 0 : EG_IDF_REQUIRED, err, sizeof(err)))
		return eg_cli_usage(&p, "%s", err);
	/* ServicePort traffic is, by definition, a use of the serviceport
	 * scope. */
	if (a.req.port)
		a.req.scope |= EG_SCOPE_SERVICEPORT;
	if (keys && !have_now)
		a.now_unix = (uint64_t)time(NULL);
	rc = eg_cli_read_token(p.pos[0], &text);
	if (rc) {
		eg_cli_err("token: %s", rc == -E2BIG ? "longer than 64 KiB" : strerror(-rc));
		return rc == -E2BIG ? EG_EXIT_USAGE : EG_EXIT_ERROR;
	}
	a.token_text = text;
	if (keys) {
		rc = check_offline(keys, &id, no_record, &a, &res);
	} else {
		rc = eg_cli_worker_open(&p, &w);
		if (!rc) {
			rc = eg_worker_check(w, &a, &res, err, sizeof(err));
			if (rc)
				eg_cli_err("%s", err);
			eg_worker_close(w);
		}
	}
	free(text);
	if (rc)
		return EG_EXIT_ERROR;
	eg_cli_print_verdict(stdout, &res, &a.req, json);
	if (fflush(stdout)) {
		eg_cli_err("stdout: %s", strerror(errno));
		return EG_EXIT_ERROR;
	}
	return eg_cli_verdict_exit(res.d.verdict);
}

const struct eg_cli_cmd eg_cmd_check = {
    .name = "check",
    .args = "[--keys DIR|FILE <record flags>] [--need SCOPE] [--port N/tcp|udp] [--established]\n"
	    "       [--now UNIX] [--json] TOKEN|-",
    .about = "The verdict admit would give, without a grant: verifies TOKEN and compares it\n"
	     "with the installed record of its sandbox. With --keys, offline: the keys come\n"
	     "from DIR|FILE and the record from --sandbox, --worker, --generation and\n"
	     "--activation (or --no-record); nothing is loaded or read from the kernel.\n"
	     "Exit 0 allow, 3 refresh-route, 4 deny.",
    .opts = check_opts,
    .dirs = true,
    .run = run_check,
};
