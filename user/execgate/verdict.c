// SPDX-License-Identifier: Apache-2.0
/* One verdict form for `execgate admit` and `execgate check`, text and JSON,
 * so that a caller parses both the same way. */
#include "execgate/verdict.h"
#include "execgate/cli.h"
#include "lib/json.h"

void eg_cli_print_verdict(FILE *f, const struct eg_verdict_result *r, const struct eg_request *req,
			  bool json)
{
	const struct eg_decision *d = &r->d;
	bool malformed = d->reason == EG_REASON_MALFORMED;

	if (!json) {
		if (d->verdict == EG_ALLOW)
			fprintf(f, "allow\n");
		else if (malformed)
			fprintf(f, "deny: malformed: %s\n", eg_decode_err_text(d->decode_err));
		else
			fprintf(f, "%s: %s\n", eg_verdict_name(d->verdict),
				eg_reason_name(d->reason));
		return;
	}
	if (eg_json_print(f, eg_json_verdict(r, req)))
		eg_cli_err("verdict: out of memory");
}
