// SPDX-License-Identifier: Apache-2.0
/* What install, retire, forget, show and list share: the --sandbox
 * parse, the text of a record and of the streams a change cut. */
#include <string.h>
#include "execgate/daemon_ask.h"
#include "execgate/commands.h"
#include "execgate/text.h"
#include "execgate/sandbox_cmd.h"

void eg_cli_text_streams(const struct eg_stream_cuts *s)
{
	if (!s->unix_method && !s->tcp_method)
		return; /* the epoch stayed: nothing to cut */
	printf("; streams: %u cut, %u unreachable", s->unix_cut + s->tcp_cut,
	       s->unix_unreachable + s->tcp_unreachable);
	if (s->would_cut) /* audit: found, left running (docs/design.md §19) */
		printf(", %u would be cut (audit)", s->would_cut);
}

/* A failed revocation (a step refused, a stale stream left running): the
 * record change stands, the report is printed, and the exit is 8. Audit
 * (docs/design.md §19): the streams left running, on stderr, with the
 * sandbox and the reason an enforce cut would have had; not a failure. */
void eg_cli_warn_streams(const uint8_t sandbox[EG_ID_BYTES], const struct eg_stream_cuts *s)
{
	char u[EG_UUID_TEXT_LEN];

	if (s->error)
		eg_cli_err("stream revocation failed: %s", s->error_text);
	if (s->would_cut)
		eg_cli_err("audit: sandbox %s: would cut %u stream(s) of a replaced execution "
			   "(reason deny-stream-epoch); left running",
			   eg_cli_uuid(sandbox, u), s->would_cut);
}

int eg_cli_streams_exit(const struct eg_stream_cuts *s)
{
	return s->error ? EG_EXIT_REVOCATION : EG_EXIT_OK;
}

const struct eg_opt eg_cli_sandbox_opts[] = {
    EG_OPT("sandbox", "UUID", "the sandbox"),
    EG_OPT("json", NULL, "print one JSON object (schema_version 2)"),
    EG_OPT_END,
};

int eg_cli_open_sandbox(struct eg_cli_parse *p, const struct eg_cli_cmd *cmd, int argc, char **argv,
			uint8_t sandbox[EG_ID_BYTES], struct eg_worker **w, bool writes)
{
	const char *name, *val;
	bool have = false;
	int c;

	eg_cli_parse_init(p, cmd, argc, argv);
	while ((c = eg_cli_next(p, &name, &val)) == 1) {
		if (eg_uuid_from_text(val, sandbox))
			return eg_cli_usage(p, "--sandbox %s: not a UUID", val);
		else
			have = true;
	}
	if (c < 0)
		return p->exit;
	if (p->npos)
		return eg_cli_usage(p, "%s: unexpected argument", p->pos[0]);
	if (!have)
		return eg_cli_usage(p, "--sandbox is required");
	c = eg_cli_pins_denied(p->pin_dir, EG_DAEMON_DEFAULT_SOCKET);
	if (c >= 0)
		return c;
	return eg_cli_worker_open_for(p, w, writes ? sandbox : NULL) ? EG_EXIT_ERROR : -1;
}

void eg_cli_record_text(const struct eg_runtime_record *r, const struct eg_inet_addr *addrs,
			size_t naddrs)
{
	char u[EG_UUID_TEXT_LEN], wk[EG_UUID_TEXT_LEN];

	printf("%s %-7s generation %llu attempt %u epoch %llu worker %s substrate %s bridge ",
	       eg_cli_uuid(r->sandbox, u), r->retired ? "retired" : "active",
	       (unsigned long long)r->generation, r->activation, (unsigned long long)r->epoch,
	       eg_cli_uuid(r->worker, wk),
	       (r->substrate <= UINT8_MAX ? eg_substrate_name((uint8_t)r->substrate) : "unknown"));
	eg_cli_print_proc(stdout, &r->bridge);
	printf(" ");
	eg_cli_print_service_profile(stdout, r, addrs, naddrs);
}
