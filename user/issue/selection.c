/* SPDX-License-Identifier: Apache-2.0 */
/* execgate-issue selection: sign one selection (core/selection.h), v2
 * addressed to one worker's prefix (--for, default --worker) or, with
 * --v1, the older format without an audience, and print its text form. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "frontend/identity_opts.h"
#include "core/identity.h"
#include "core/ids.h"
#include "core/keyset.h"
#include "core/selection.h"
#include "issue/issue.h"

static const struct eg_opt opts[] = {
    EG_OPT("key", "SEEDFILE",
	   "the control-plane signing seed (keygen's KID.seed, mode 0600 or stricter)"),
    EG_OPT("sandbox", "UUID", "the sandbox the selection is for (required)"),
    EG_OPT("worker", "UUID", "the worker selected to run it (required)"),
    EG_OPT("generation", "N", "the execution generation selected (required)"),
    EG_OPT("activation", "N", "the activation attempt of that generation (required)"),
    EG_OPT("pod-uid", "UUID", "the pod UID (substrate firecracker-k8s; default all-zero)"),
    EG_OPT("substrate", "NAME", "firecracker-host (default) or firecracker-k8s"),
    EG_OPT("now", "UNIX", "issue at this unix time (seconds) instead of the clock"),
    EG_OPT("for", "UUID",
	   "the worker whose etcd prefix this copy is written under (the audience; default "
	   "--worker); one copy per recipient"),
    EG_OPT("v1", NULL, "sign a selection v1 (no audience): a worker it does not name ignores it"),
    EG_OPT_END,
};

static const struct issue_cmd sel_cmd = {
    .name = "selection",
    .synopsis = "--key SEEDFILE --sandbox UUID --worker UUID --generation N\n"
		"       --activation N [--pod-uid UUID] [--substrate NAME] [--now UNIX]\n"
		"       [--for UUID | --v1]",
    .about = "Signs one selection v2, the control plane's decision for one sandbox (which\n"
	     "worker runs which execution) addressed to the worker whose prefix it is\n"
	     "written under (--for, default --worker), and prints its text form on stdout,\n"
	     "one line. A move writes one copy per recipient. Layout and context: docs/fleet.md.",
    .opts = opts,
};

int cmd_selection(int argc, char **argv)
{
	uint8_t sk[crypto_sign_SECRETKEYBYTES];
	uint8_t pk[crypto_sign_PUBLICKEYBYTES], raw[EG_SEL_MAX_LEN], audience[EG_ID_BYTES];
	char text[EG_SEL_TEXT_MAX];
	struct eg_identity_opts id;
	struct eg_selection sel, check;
	const char *key_path = NULL, *optarg;
	bool have_now = false, have_for = false, v1 = false;
	size_t raw_len;
	uint64_t now = 0;
	enum eg_sel_err serr;
	const struct eg_opt *o;
	struct eg_opts p;
	int c;

	eg_identity_opts_init(&id);
	issue_opts_init(&p, &sel_cmd, argc, argv);
	while ((c = issue_next_signer(&p, &id, &key_path, &o, &optarg)) == 1) {
		if (!strcmp(o->name, "v1")) {
			v1 = true;
		} else if (!strcmp(o->name, "for")) {
			if (eg_uuid_parse(optarg, audience) || eg_id_is_zero(audience))
				return eg_opts_usage(&p, "--for '%s': not a non-zero UUID", optarg);
			have_for = true;
		} else {
			if (eg_parse_u64(optarg, UINT64_MAX, &now) != 0)
				return eg_opts_usage(&p, "--now '%s': not a unix time in seconds",
						     optarg);
			have_now = true;
		}
	}
	if (c < 0)
		return p.exit;
	if (v1 && have_for)
		return eg_opts_usage(&p, "--for and --v1: a selection v1 has no audience");
	if (!have_now)
		now = (uint64_t)time(NULL);

	if (issue_signing_key("selection", "key", key_path, pk, sk))
		return ISSUE_EXIT_ERROR;

	memset(&sel, 0, sizeof(sel));
	sel.version = v1 ? EG_SEL_VERSION : EG_SEL_VERSION2;
	sel.id = id.rec.id;
	if (!v1)
		memcpy(sel.audience, have_for ? audience : sel.id.worker, EG_ID_BYTES);
	eg_key_id(pk, sel.key_id);
	sel.issued_at = now;
	raw_len = eg_sel_sign(&sel, sk, raw);
	sodium_memzero(sk, sizeof(sk));

	/* What we print must pass the receivers' decoder and verify. */
	serr = eg_sel_verify(raw, raw_len, pk, &check);
	if (serr != EG_SEL_OK) {
		fprintf(stderr,
			"execgate-issue: selection: internal error: selection fails its own "
			"check (%s)\n",
			eg_sel_err_name(serr));
		return ISSUE_EXIT_ERROR;
	}
	eg_sel_to_text(raw, raw_len, text);
	return issue_print_text("selection", text);
}
