// SPDX-License-Identifier: Apache-2.0
/* The offline check of `execgate check --keys`: verification keys from a
 * directory or file, the record from the identity flags, the verdict from
 * the same core admission as the worker's, in pure userspace. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/admission.h"
#include "core/identity.h"
#include "core/ids.h"
#include "frontend/check_offline.h"

static void from_identity(const struct eg_record *r, struct eg_runtime_record *k)
{
	memset(k, 0, sizeof(*k));
	eg_identity_to_runtime(k, &r->id);
	k->retired = r->retired_below > r->id.generation;
}

int eg_check_offline(const char *keys, const struct eg_record *rec, const struct eg_admit_args *a,
		     struct eg_verdict_result *res, char *err, size_t err_size)
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
		snprintf(err, err_size, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	eg_keyset_init(ks);
	kerr = eg_keyset_load_path(ks, keys, bad, sizeof(bad));
	if (kerr != EG_KEY_OK) {
		snprintf(err, err_size, "keys %s: %s: %s", bad, eg_key_err_name(kerr),
			 eg_key_err_detail(kerr));
		free(ks);
		return -EINVAL;
	}
	if (ks->n == 0) {
		/* Every token would be unknown-key: a wrong path, not a verdict. */
		snprintf(err, err_size, "keys %s: no *.pub key files", keys);
		free(ks);
		return -ENOENT;
	}
	adm.keys = ks;
	derr = eg_cap_text_to_bin(a->token_text, strlen(a->token_text), raw, sizeof(raw), &raw_len);
	if (derr != EG_DECODE_OK)
		res->d = (struct eg_decision){
		    .verdict = EG_DENY, .reason = EG_REASON_MALFORMED, .decode_err = derr};
	else
		res->d = eg_admit(&adm, raw, raw_len, rec, a->now_unix, &a->req, &cap);
	free(ks);
	/* As the worker does: contents only from a verified token. */
	if (res->d.reason != EG_REASON_MALFORMED && res->d.reason != EG_REASON_UNKNOWN_KEY &&
	    res->d.reason != EG_REASON_BAD_SIGNATURE)
		eg_admission_result_cap(res, &cap);
	res->had_record = rec != NULL;
	if (rec)
		from_identity(rec, &res->record);
	return 0;
}
