// SPDX-License-Identifier: Apache-2.0
/* The route table says which routes need the maps (user/daemon/routes.h,
 * EGD_MAPS) and the pins gate reads that mark: after `execgate unload`
 * every marked route answers 503 `not loaded` before its handler runs.
 * POST /v1/sandboxes/{uuid}/revoke and PUT /v1/mode are asked by name too:
 * the gate once chose routes by comparing handler pointers and left revoke
 * out, which then answered 500 from the unloaded maps (docs/api.md
 * promises 503). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "daemon/routes.h"
#include "dd.h"

TestSuite(daemon_route_gate, .init = dd_setup, .fini = dd_teardown, .timeout = 90);

struct row {
	const char *method, *pattern;
	enum egd_route_maps maps;
};
#define ROW(method, pattern, handler, need, maps) {method, pattern, maps},
static const struct row rows[] = {EGD_ROUTES(ROW)};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* The pattern with every "{}" filled with a sandbox id (a key id for
 * /v1/keys/{}: any non-empty segment matches). */
static void path_of(const char *pattern, char *out, size_t size)
{
	size_t o = 0;

	for (const char *p = pattern; *p && o + 1 < size;) {
		if (p[0] == '{' && p[1] == '}') {
			o += snprintf(out + o, size - o, "%s", DD_SANDBOX);
			p += 2;
			continue;
		}
		out[o++] = *p++;
	}
	out[o < size ? o : size - 1] = '\0';
}

static void expect_not_loaded(const char *method, const char *path, const char *body)
{
	struct dd_resp r = dd_req(method, path, body);

	cr_expect_eq(r.status, 503, "%s %s after unload: %d %s", method, path, r.status, r.body);
	cr_expect_str_eq(dd_str(&r, "error"), "not loaded", "%s %s: %s", method, path, r.body);
	dd_resp_free(&r);
}

static void unload(void)
{
	char out[4096];
	int rc = kh_cli(out, sizeof(out), "unload", NULL);

	cr_assert_eq(rc, 0, "execgate unload: %s", out);
}

Test(daemon_route_gate, every_route_marked_for_the_maps_answers_503_after_unload)
{
	char path[256];
	unsigned marked = 0;

	unload();
	for (size_t i = 0; i < NROWS; i++) {
		bool body = !strcmp(rows[i].method, "POST") || !strcmp(rows[i].method, "PUT");

		if (rows[i].maps != EGD_MAPS)
			continue;
		marked++;
		path_of(rows[i].pattern, path, sizeof(path));
		/* The gate answers before the handler reads the body. */
		expect_not_loaded(rows[i].method, path, body ? "{}" : NULL);
	}
	/* admit, check, the six /v1/sandboxes routes, PUT /v1/mode */
	cr_expect_geq(marked, 9, "only %u routes marked EGD_MAPS", marked);
}

Test(daemon_route_gate, revoke_and_mode_answer_503_after_unload)
{
	char path[128], body[128];

	unload();
	snprintf(path, sizeof(path), "/v1/sandboxes/%s/revoke", DD_SANDBOX);
	snprintf(body, sizeof(body), "{\"pid\":%d}", (int)getpid());
	expect_not_loaded("POST", path, body);
	expect_not_loaded("PUT", "/v1/mode", "{\"mode\":\"audit\"}");
	snprintf(body, sizeof(body), "{\"mode\":\"audit\",\"sandbox\":\"%s\"}", DD_SANDBOX);
	expect_not_loaded("PUT", "/v1/mode", body);
}

/* The routes without the mark still answer from what they hold. */
Test(daemon_route_gate, unmarked_routes_reach_their_handler_after_unload)
{
	struct dd_resp r;

	unload();
	r = dd_req("GET", "/v1/keys", NULL);
	cr_expect_eq(r.status, 200, "GET /v1/keys after unload: %d %s", r.status, r.body);
	dd_resp_free(&r);
	r = dd_req("GET", "/metrics", NULL);
	cr_expect_eq(r.status, 200, "GET /metrics after unload: %d %s", r.status, r.body);
	dd_resp_free(&r);
}
