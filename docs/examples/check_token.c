/* SPDX-License-Identifier: Apache-2.0 */
/* A minimal libexecgate caller (docs/api.md): open the worker handle,
 * check a token twice (the second check is served by the verified-token
 * cache), then admit it for this very process.
 *
 *   cc check_token.c $(pkg-config --cflags --libs execgate) -o check_token
 *   ./check_token PIN_DIR STATE_DIR TOKEN */
#include <stdio.h>
#include <unistd.h>
#include <execgate/execgate.h>

static void print(const char *what, const struct eg_verdict_result *r)
{
	printf("%s %s %s cache_hit=%d granted=%d\n", what, eg_verdict_name(r->d.verdict),
	       eg_reason_name(r->d.reason), r->cache_hit, r->granted);
}

int main(int argc, char **argv)
{
	struct eg_worker_config cfg = {0};
	struct eg_verdict_result r;
	struct eg_admit_args a = {0};
	struct eg_subject me = {.pid = getpid(), .pidfd = -1};
	struct eg_worker *w;
	char err[EG_ERR_MAX];
	int rc;

	if (argc != 4) {
		fprintf(stderr, "usage: check_token PIN_DIR STATE_DIR TOKEN\n");
		return 2;
	}
	cfg.pin_dir = argv[1];
	cfg.state_dir = argv[2];
	rc = eg_worker_open(&cfg, &w, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "check_token: %s\n", err);
		return 1;
	}
	printf("libexecgate %s\n", eg_version());
	a.token_text = argv[3];
	a.req.open_kind = EG_OPEN_NEW;
	for (int i = 0; i < 2 && !rc; i++) {
		rc = eg_worker_check(w, &a, &r, err, sizeof(err));
		if (!rc)
			print("check", &r);
	}
	if (!rc)
		rc = eg_worker_admit(w, &me, &a, &r, err, sizeof(err));
	if (!rc)
		print("admit", &r);
	else
		fprintf(stderr, "check_token: %s\n", err);
	eg_worker_close(w);
	return rc ? 1 : r.d.verdict == EG_ALLOW ? 0 : 3 + (r.d.verdict == EG_DENY);
}
