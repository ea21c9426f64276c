// SPDX-License-Identifier: Apache-2.0
/* execgate admit / revoke: grants for processes, after an Allow. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "core/ids.h"
#include "execgate/cli.h"
#include "execgate/commands.h"
#include "loader/proc_id.h"
#include "loader/runtime.h"

#define TOKEN_TEXT_MAX 4096

static int read_token_text(const char *arg, char *buf, size_t size, size_t *len)
{
	size_t n;

	if (strcmp(arg, "-")) {
		n = strlen(arg);
		if (n >= size)
			return -E2BIG;
		memcpy(buf, arg, n);
	} else {
		n = fread(buf, 1, size - 1, stdin);
		if (!feof(stdin))
			return -E2BIG;
	}
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	buf[n] = '\0';
	*len = n;
	return 0;
}

static int verdict_exit(enum eg_verdict v)
{
	return v == EG_ALLOW ? EG_EXIT_OK : v == EG_REFRESH_ROUTE ? EG_EXIT_REFRESH : EG_EXIT_DENY;
}

static void print_verdict(const struct eg_decision *d, const struct eg_admit_result *res, int pid,
			  bool json)
{
	char u[EG_UUID_TEXT_LEN];

	if (!json) {
		if (d->verdict == EG_ALLOW)
			printf("allow\n");
		else if (d->reason == EG_REASON_MALFORMED)
			printf("%s: %s (%s)\n", eg_verdict_name(d->verdict),
			       eg_reason_name(d->reason), eg_decode_err_name(d->decode_err));
		else
			printf("%s: %s\n", eg_verdict_name(d->verdict), eg_reason_name(d->reason));
		return;
	}
	printf("{\"verdict\":\"%s\",\"reason\":\"%s\"", eg_verdict_name(d->verdict),
	       eg_reason_name(d->reason));
	if (d->reason == EG_REASON_MALFORMED)
		printf(",\"decode_error\":\"%s\"", eg_decode_err_name(d->decode_err));
	printf(",\"pid\":%d", pid);
	if (res && res->had_record)
		printf(",\"record\":{\"generation\":%llu,\"activation\":%u,\"epoch\":%llu,"
		       "\"state\":\"%s\"}",
		       (unsigned long long)res->record.generation, res->record.activation,
		       (unsigned long long)res->record.epoch,
		       res->record.state == EG_RECORD_RETIRED ? "retired" : "active");
	if (res && res->granted) {
		printf(",\"grant\":{\"sandbox\":\"%s\",\"proc\":",
		       eg_cli_uuid(res->grant.key.sandbox, u));
		eg_json_proc(stdout, &res->grant.key.proc);
		printf(",\"generation\":%llu,\"epoch\":%llu,\"expiry_ns\":%llu,\"scope\":%u}",
		       (unsigned long long)res->grant.generation,
		       (unsigned long long)res->grant.epoch,
		       (unsigned long long)res->grant.expiry_ns, res->grant.scope);
	}
	printf("}\n");
}

int cmd_admit(int argc, char **argv)
{
	static const struct option opts[] = {
	    EG_CLI_DIRS_LONG_OPTS,
	    {"pid", required_argument, NULL, 0},
	    {"scope", required_argument, NULL, 0},
	    {"now", required_argument, NULL, 0},
	    {"json", no_argument, NULL, 0},
	    {NULL, 0, NULL, 0},
	};
	static char text[TOKEN_TEXT_MAX];
	static uint8_t raw[TOKEN_TEXT_MAX];
	struct eg_request req = {.open_kind = EG_OPEN_NEW};
	struct eg_admit_result res;
	struct eg_cli_dirs dirs;
	struct eg_runtime rt;
	uint64_t now = 0;
	size_t tlen, rlen = 0;
	bool json = false;
	char err[768];
	const char *name;
	int c, rc, pid = 0;

	eg_cli_dirs_init(&dirs);
	optind = 1;
	while ((c = eg_cli_getopt(argc, argv, opts, &dirs, &name)) == 0) {
		if (!strcmp(name, "json")) {
			json = true;
		} else if (!strcmp(name, "pid")) {
			if (eg_parse_pid(optarg, &pid)) {
				eg_cli_err("admit: --pid %s: not a process id", optarg);
				return EG_EXIT_USAGE;
			}
		} else if (!strcmp(name, "scope")) {
			if (eg_scope_parse(optarg, &req.scope)) {
				eg_cli_err("admit: --scope %s: unknown scope", optarg);
				return EG_EXIT_USAGE;
			}
		} else if (!strcmp(name, "now")) {
			if (eg_parse_u64(optarg, UINT64_MAX / 1000000000ULL, &now) || !now) {
				eg_cli_err("admit: --now %s: not a unix time", optarg);
				return EG_EXIT_USAGE;
			}
		}
	}
	if (c != -1 || optind != argc - 1 || !pid) {
		eg_cli_err("admit: usage: admit --pid PID [--scope LIST] [--now UNIX] [--json] "
			   "TOKEN|-");
		return EG_EXIT_USAGE;
	}
	if (read_token_text(argv[optind], text, sizeof(text), &tlen)) {
		eg_cli_err("admit: token: longer than %d bytes", TOKEN_TEXT_MAX - 1);
		return EG_EXIT_USAGE;
	}
	if (eg_cap_text_to_bin(text, tlen, raw, sizeof(raw), &rlen) != EG_DECODE_OK) {
		/* Not even base64url: a Deny, like any other malformed token. */
		struct eg_decision d = {.verdict = EG_DENY,
					.reason = EG_REASON_MALFORMED,
					.decode_err = EG_DECODE_BAD_TEXT};

		print_verdict(&d, NULL, pid, json);
		return EG_EXIT_DENY;
	}
	if (eg_cli_runtime_open(&rt, &dirs, true))
		return EG_EXIT_ERROR;
	rc = eg_admit_pid(&rt, pid, raw, rlen, now, &req, &res, err, sizeof(err));
	eg_runtime_close(&rt);
	if (rc) {
		eg_cli_err("admit: %s", err);
		return EG_EXIT_ERROR;
	}
	print_verdict(&res.d, &res, pid, json);
	return verdict_exit(res.d.verdict);
}

int cmd_revoke(int argc, char **argv)
{
	static const struct option opts[] = {
	    EG_CLI_DIRS_LONG_OPTS,
	    {"pid", required_argument, NULL, 0},
	    {"sandbox", required_argument, NULL, 0},
	    {NULL, 0, NULL, 0},
	};
	struct eg_cli_dirs dirs;
	struct eg_runtime rt;
	__u8 sandbox[EG_ID_BYTES];
	bool have_sandbox = false;
	unsigned removed = 0;
	char err[768], u[EG_UUID_TEXT_LEN];
	const char *name;
	int c, rc, pid = 0;

	eg_cli_dirs_init(&dirs);
	optind = 1;
	while ((c = eg_cli_getopt(argc, argv, opts, &dirs, &name)) == 0) {
		if (!strcmp(name, "pid")) {
			if (eg_parse_pid(optarg, &pid)) {
				eg_cli_err("revoke: --pid %s: not a process id", optarg);
				return EG_EXIT_USAGE;
			}
		} else if (eg_uuid_parse(optarg, sandbox)) {
			eg_cli_err("revoke: --sandbox %s: not a UUID", optarg);
			return EG_EXIT_USAGE;
		} else {
			have_sandbox = true;
		}
	}
	if (c != -1 || optind != argc || !pid || !have_sandbox) {
		eg_cli_err("revoke: usage: revoke --pid PID --sandbox UUID");
		return EG_EXIT_USAGE;
	}
	if (eg_cli_runtime_open(&rt, &dirs, false))
		return EG_EXIT_ERROR;
	rc = eg_revoke(&rt, pid, sandbox, &removed, err, sizeof(err));
	eg_runtime_close(&rt);
	if (rc) {
		eg_cli_err("%s", err);
		return eg_cli_exit_for(rc);
	}
	printf("pid %d: %u grant%s for sandbox %s revoked\n", pid, removed, removed == 1 ? "" : "s",
	       eg_cli_uuid(sandbox, u));
	return EG_EXIT_OK;
}
