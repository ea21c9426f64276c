/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer harness over what etcd (or whoever answers in its place) sends
 * the fleet layer: the watch stream, cut into chunks anywhere, through the
 * stream scanner and the strict message parser of user/fleet/etcd_watch_read.c
 * (included, to reach its static functions), and an ack value through
 * eg_ack_parse(). Besides "no crash, no sanitizer report": every event
 * handed to the callback is inside the watch, has a key without NUL, and
 * revisions never go back; a parsed ack has lowercase UUIDs and a state
 * consistent with its numbers. */
#include "../../user/fleet/etcd_watch_read.c"
#include "fleet/ack.h"
#include "fuzz.h"

static struct eg_etcd *e;
static int64_t last_rev;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[128];

	(void)argc;
	(void)argv;
	if (eg_etcd_open("http://127.0.0.1:1", 100, &e, err, sizeof(err)))
		abort();
	return 0;
}

static int fn(const struct eg_etcd_event *ev, size_t n, int64_t revision, void *ctx)
{
	size_t i;

	(void)ctx;
	CHECK(revision >= 0);
	for (i = 0; i < n; i++) {
		CHECK(ev[i].kv.key && !strncmp(ev[i].kv.key, "/k/", 3));
		CHECK(ev[i].kv.mod_revision >= last_rev && ev[i].kv.mod_revision >= 3);
		CHECK(ev[i].kv.value || ev[i].type == EG_ETCD_DELETE);
		last_rev = ev[i].kv.mod_revision;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct eg_etcd_watch_spec spec = {"/k/", true};
	struct watch w = {.e = e, .n = 1, .start_revision = 3, .fn = fn};
	struct stream s = {0};
	char err[256];
	struct eg_ack a;
	size_t chunk, off;

	if (!eg_ack_parse((const char *)data, size, &a, err, sizeof(err))) {
		CHECK(eg_ack_uuid_ok(a.worker) && eg_ack_uuid_ok(a.sandbox));
		CHECK(a.has_record || (a.state != EG_ACK_ACTIVE && a.state != EG_ACK_RETIRED));
		CHECK(!a.has_record || a.state != EG_ACK_ABSENT);
	}
	if (!size)
		return 0;
	chunk = 1 + data[0] % 64;
	w.s = &s;
	w.err = err;
	w.err_size = sizeof(err);
	s.w = &w;
	s.spec = &spec;
	last_rev = 0;
	for (off = 1; off < size; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;
		char *nb = realloc(s.buf, s.len + n);

		if (!nb)
			abort();
		s.buf = nb;
		memcpy(s.buf + s.len, data + off, n);
		s.len += n;
		if (drain(&s))
			break;
		CHECK(s.len <= EG_ETCD_MAX_ANSWER);
	}
	free(s.buf);
	return 0;
}
