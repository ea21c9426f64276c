/* SPDX-License-Identifier: Apache-2.0 */
/* execgate-issue keyset: sign one key set (core/keyset_doc.h) over the
 * given control-plane public keys with a root seed, and print its text: v2
 * with a signed expiry (--expires-in), or v1 without one. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "core/duration.h"
#include "core/ids.h"
#include "core/keyset.h"
#include "core/keyset_doc.h"
#include "issue/issue.h"

static const struct eg_opt opts[] = {
    EG_OPT("root-key", "SEEDFILE",
	   "the root signing seed (keygen's KID.seed, mode 0600 or stricter), the one whose "
	   ".pub the workers pin"),
    EG_OPT("version", "N", "the key-set version, 1..2^53-1; it replaces only a lower one"),
    EG_OPT("now", "UNIX", "issue at this unix time (seconds) instead of the clock"),
    EG_OPT("expires-in", "DURATION",
	   "sign a key set v2 that workers refuse after now + DURATION (30s, 10m, 2h, 1d); "
	   "without it a v1, which never expires"),
    EG_OPT_END,
};

static const struct issue_cmd keyset_cmd = {
    .name = "keyset",
    .synopsis = "--root-key SEEDFILE --version N [--expires-in DURATION] [--now UNIX] PUBFILE...",
    .about = "Signs one key set (v2 with --expires-in, else v1) holding the control-plane public "
	     "keys PUBFILE... (keygen's\n"
	     "KID.pub, 1 to 64, no key twice, never the root's own) with a root key, and\n"
	     "prints its text form on stdout, one line. A key set replaces only a lower\n"
	     "version, and withdraws every key it no longer lists; a worker refuses a v2\n"
	     "past its expiry. Its layout and context are in docs/fleet.md.",
    .opts = opts,
};

int cmd_keyset(int argc, char **argv)
{
	uint8_t sk[crypto_sign_SECRETKEYBYTES];
	uint8_t root_pk[crypto_sign_PUBLICKEYBYTES], raw[EG_KSD_MAX_LEN];
	static struct eg_keyset_doc doc;
	char text[EG_KSD_TEXT_MAX], kid_hex[EG_KID_TEXT_LEN];
	const char *root_path = NULL, *optarg;
	bool have_now = false, have_version = false;
	uint64_t now = 0;
	int64_t expires_in = 0;
	enum eg_ksd_err kerr;
	const struct eg_opt *o;
	struct eg_opts p;
	size_t raw_len;
	int c, ret;

	memset(&doc, 0, sizeof(doc));
	issue_opts_init(&p, &keyset_cmd, argc, argv);
	p.max_pos = EG_KEYSET_MAX;
	while ((c = eg_opts_next(&p, &o, &optarg)) == 1) {
		if (!strcmp(o->name, "root-key")) {
			root_path = optarg;
		} else if (!strcmp(o->name, "version")) {
			ret = eg_parse_u64(optarg, EG_KSD_VERSION_MAX, &doc.keyset_version);
			if (ret != 0 || doc.keyset_version == 0)
				return eg_opts_usage(&p, "--version '%s': not a number in 1..%llu",
						     optarg,
						     (unsigned long long)EG_KSD_VERSION_MAX);
			have_version = true;
		} else if (!strcmp(o->name, "now")) {
			if (eg_parse_u64(optarg, UINT64_MAX, &now) != 0)
				return eg_opts_usage(&p, "--now '%s': not a unix time in seconds",
						     optarg);
			have_now = true;
		} else if (!strcmp(o->name, "expires-in")) {
			if (eg_duration_parse(optarg, &expires_in) != 0 ||
			    expires_in < 1000000000LL)
				return eg_opts_usage(
				    &p,
				    "--expires-in '%s': not a duration of at least "
				    "1s (30s, 10m, 2h, 1d)",
				    optarg);
		}
	}
	if (c < 0)
		return p.exit;
	if (!root_path)
		return eg_opts_usage(&p, "missing --root-key SEEDFILE");
	if (!have_version)
		return eg_opts_usage(&p, "missing --version N");
	if (p.npos == 0)
		return eg_opts_usage(&p, "missing PUBFILE: a key set holds at least one key");
	if (!have_now)
		now = (uint64_t)time(NULL);

	if (issue_signing_key("keyset", "root key", root_path, root_pk, sk))
		return ISSUE_EXIT_ERROR;

	ret = ISSUE_EXIT_ERROR;
	for (size_t i = 0; i < p.npos; i++) {
		struct eg_key *k = &doc.keys[doc.n];
		enum eg_key_err e = eg_pubkey_read(p.pos[i], k->pk);

		if (e != EG_KEY_OK) {
			fprintf(stderr, "execgate-issue: keyset: key %s: %s: %s\n", p.pos[i],
				eg_key_err_name(e), eg_key_err_detail(e));
			goto out;
		}
		eg_key_id(k->pk, k->kid);
		eg_key_id_format(k->kid, kid_hex);
		/* A root that also signs selections would hold both roles; keep
		 * the root offline and out of the set it vouches for. */
		if (!memcmp(k->pk, root_pk, sizeof(root_pk))) {
			fprintf(stderr,
				"execgate-issue: keyset: key %s: is the root key %s itself; a "
				"root key never signs selections or capabilities\n",
				p.pos[i], kid_hex);
			goto out;
		}
		for (size_t j = 0; j < doc.n; j++) {
			if (!memcmp(doc.keys[j].kid, k->kid, EG_KEY_ID_LEN)) {
				fprintf(stderr,
					"execgate-issue: keyset: key %s: duplicate-key: key %s "
					"is given twice\n",
					p.pos[i], kid_hex);
				goto out;
			}
		}
		doc.n++;
	}
	doc.version = expires_in ? EG_KSD_VERSION2 : EG_KSD_VERSION;
	doc.issued_at = now;
	doc.expires_at = expires_in ? now + (uint64_t)(expires_in / 1000000000LL) : 0;
	if (expires_in && doc.expires_at < now) {
		fprintf(stderr, "execgate-issue: keyset: --now + --expires-in overflows\n");
		goto out;
	}
	eg_key_id(root_pk, doc.root_key_id);
	kerr = eg_ksd_sign(&doc, sk, raw, &raw_len);
	if (kerr == EG_KSD_OK)
		kerr = eg_ksd_verify(raw, raw_len, root_pk, &doc);
	if (kerr != EG_KSD_OK) {
		fprintf(stderr,
			"execgate-issue: keyset: internal error: key set fails its own "
			"check (%s)\n",
			eg_ksd_err_name(kerr));
		goto out;
	}
	eg_ksd_to_text(raw, raw_len, text);
	ret = issue_print_text("keyset", text);
out:
	sodium_memzero(sk, sizeof(sk));
	return ret;
}
