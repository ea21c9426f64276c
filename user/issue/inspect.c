/* SPDX-License-Identifier: Apache-2.0 */
/* execgate-issue inspect-selection / inspect-keyset: decode one signed
 * document strictly, verify it when given the keys, and print its fields,
 * one "name value" line each, for operators and scripts. A document that
 * fails any check prints nothing on stdout. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "core/ids.h"
#include "core/keyset.h"
#include "core/keyset_doc.h"
#include "core/selection.h"
#include "issue/issue.h"

static const struct eg_opt sel_opts[] = {
    EG_OPT("keys", "FILE|DIR",
	   "verify against these control-plane public keys (a .pub, or a directory of them); "
	   "without it only the layout is checked"),
    EG_OPT_END,
};

static const struct issue_cmd sel_cmd = {
    .name = "inspect-selection",
    .synopsis = "[--keys FILE|DIR] TEXT",
    .about = "Decodes a selection (v1 or v2) text strictly, verifies its signature when --keys is\n"
	     "given, and prints its fields, one \"name value\" line each. A refused selection\n"
	     "prints one line on stderr naming the reason, and exits 1.",
    .opts = sel_opts,
};

static const struct eg_opt ksd_opts[] = {
    EG_OPT("root-keys", "FILE|DIR",
	   "verify against these pinned root public keys (a .pub, or a directory of them); "
	   "without it only the layout is checked"),
    EG_OPT_END,
};

static const struct issue_cmd ksd_cmd = {
    .name = "inspect-keyset",
    .synopsis = "[--root-keys FILE|DIR] TEXT",
    .about = "Decodes a key set (v1 or v2) text strictly, verifies its root signature when\n"
	     "--root-keys is given, and prints its fields, one \"name value\" line each. A\n"
	     "refused key set prints one line on stderr naming the reason, and exits 1.",
    .opts = ksd_opts,
};

/* One positional TEXT, and at most one FILE|DIR flag, loaded into ks. */
static int parse(struct eg_opts *p, const struct issue_cmd *cmd, int argc, char **argv,
		 struct eg_keyset *ks, bool *have_keys, const char **text)
{
	const struct eg_opt *o;
	const char *val;
	char bad[256];
	int c;

	*have_keys = false;
	issue_opts_init(p, cmd, argc, argv);
	p->dash_positional = true; /* base64url text may start with '-' */
	p->max_pos = 1;
	while ((c = eg_opts_next(p, &o, &val)) == 1) {
		enum eg_key_err e = eg_keyset_load_path(ks, val, bad, sizeof(bad));

		if (e != EG_KEY_OK) {
			fprintf(stderr, "execgate-issue: %s: --%s %s: %s: %s\n", cmd->name, o->name,
				bad[0] ? bad : val, eg_key_err_name(e), eg_key_err_detail(e));
			return ISSUE_EXIT_ERROR;
		}
		if (ks->n == 0) {
			fprintf(stderr, "execgate-issue: %s: --%s %s: no .pub key in it\n",
				cmd->name, o->name, val);
			return ISSUE_EXIT_ERROR;
		}
		*have_keys = true;
	}
	if (c < 0)
		return p->exit;
	if (p->npos != 1)
		return eg_opts_usage(p, "missing TEXT");
	*text = p->pos[0];
	return -1;
}

static int out_done(const char *cmd)
{
	if (fflush(stdout) != 0) {
		fprintf(stderr, "execgate-issue: %s: stdout: %s\n", cmd, strerror(errno));
		return ISSUE_EXIT_ERROR;
	}
	return ISSUE_EXIT_OK;
}

int cmd_inspect_selection(int argc, char **argv)
{
	static struct eg_keyset ks;
	char uuid[EG_UUID_TEXT_LEN], kid[EG_KID_TEXT_LEN];
	uint8_t raw[EG_SEL_MAX_LEN];
	size_t raw_len;
	struct eg_selection s;
	enum eg_sel_err err;
	bool have_keys;
	const char *text;
	struct eg_opts p;
	int rc;

	eg_keyset_init(&ks);
	rc = parse(&p, &sel_cmd, argc, argv, &ks, &have_keys, &text);
	if (rc >= 0)
		return rc;
	err = eg_sel_text_to_bin(text, strlen(text), raw, &raw_len);
	if (err == EG_SEL_OK)
		err = have_keys ? eg_sel_verify_keyset(raw, raw_len, &ks, &s)
				: eg_sel_decode(raw, raw_len, &s);
	if (err != EG_SEL_OK) {
		fprintf(stderr, "execgate-issue: inspect-selection: selection refused: %s\n",
			eg_sel_err_name(err));
		return ISSUE_EXIT_ERROR;
	}
	printf("format selection-v%u\n", s.version);
	eg_key_id_format(s.key_id, kid);
	printf("key_id %s\n", kid);
	eg_uuid_format(s.id.sandbox, uuid);
	printf("sandbox %s\n", uuid);
	eg_uuid_format(s.id.worker, uuid);
	printf("worker %s\n", uuid);
	printf("substrate %s\n", eg_substrate_name(s.id.substrate));
	printf("generation %llu\n", (unsigned long long)s.id.generation);
	printf("activation %u\n", s.id.activation);
	eg_uuid_format(s.id.pod_uid, uuid);
	printf("pod_uid %s\n", uuid);
	printf("issued_at %llu\n", (unsigned long long)s.issued_at);
	if (s.version == EG_SEL_VERSION2) {
		eg_uuid_format(s.audience, uuid);
		printf("audience %s\n", uuid);
	}
	printf("signature %s\n", have_keys ? "verified" : "not-checked");
	return out_done("inspect-selection");
}

int cmd_inspect_keyset(int argc, char **argv)
{
	static struct eg_keyset roots;
	static struct eg_keyset_doc d;
	static uint8_t raw[EG_KSD_MAX_LEN];
	char kid[EG_KID_TEXT_LEN];
	enum eg_ksd_err err;
	size_t raw_len;
	bool have_keys;
	const char *text;
	struct eg_opts p;
	int rc;

	eg_keyset_init(&roots);
	rc = parse(&p, &ksd_cmd, argc, argv, &roots, &have_keys, &text);
	if (rc >= 0)
		return rc;
	err = eg_ksd_text_to_bin(text, strlen(text), raw, &raw_len);
	if (err == EG_KSD_OK)
		err = have_keys ? eg_ksd_verify_roots(raw, raw_len, &roots, &d)
				: eg_ksd_decode(raw, raw_len, &d);
	if (err != EG_KSD_OK) {
		fprintf(stderr, "execgate-issue: inspect-keyset: key set refused: %s\n",
			eg_ksd_err_name(err));
		return ISSUE_EXIT_ERROR;
	}
	printf("format keyset-v%u\n", d.version);
	eg_key_id_format(d.root_key_id, kid);
	printf("root_key_id %s\n", kid);
	printf("version %llu\n", (unsigned long long)d.keyset_version);
	printf("issued_at %llu\n", (unsigned long long)d.issued_at);
	if (d.version == EG_KSD_VERSION2)
		printf("expires_at %llu\n", (unsigned long long)d.expires_at);
	printf("keys %zu\n", d.n);
	for (size_t i = 0; i < d.n; i++) {
		eg_key_id_format(d.keys[i].kid, kid);
		printf("key %s\n", kid);
	}
	printf("signature %s\n", have_keys ? "verified" : "not-checked");
	return out_done("inspect-keyset");
}
