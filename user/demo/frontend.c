// SPDX-License-Identifier: Apache-2.0
/* frontend: the API front end of the worked example, steps 1-3.
 *
 *   execgate-demo frontend --sandbox S --issue-bin PATH --issuer-key SEED
 *       --a-id UUID --a-pin DIR --a-state DIR --a-cgroup CG --a-bridge PATH
 *       [the same for b] --stale-generation 7 --generation 8
 *
 * Its route cache (client/route_cache.h) still holds the route from before
 * the restore (worker A, the stale generation); the control plane already
 * selected execution 8 on worker B and issues capabilities for it. Every
 * operation goes to a sandbox manager on the worker the cache names (a
 * `manager` process of this binary, in that worker's cgroup). A refusal
 * moves the cache only through eg_route_cache_on_refresh, with the
 * worker-signed verdict checked against <state>/node.pub of the worker it
 * names. Prints each step and "= KEY VALUE" result lines. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "client/retry.h"
#include "client/route_cache.h"
#include "demo/demo.h"
#include "execgate/execgate.h"
#include "execgate/text.h"

struct fe_worker {
	char name; /* 'A', 'B' */
	const char *id_text, *pin, *state, *cgroup, *bridge;
	char node_pub[600];
	uint8_t id[EG_ID_BYTES];
	struct eg_worker *w; /* for the kernel's counters */
	uint64_t counters[EG_KREASON_MAX];
};

struct fe_op {
	const char *what; /* the request line */
	char token[512];
	struct eg_route_attempt attempt; /* token_id: the capability it carries */
	/* what the manager printed */
	char verdict[128], signed_verdict[EG_SIGNED_VERDICT_TEXT_MAX], connect[EG_ERR_MAX],
	    reply[600];
	int exit;
};

static const char *self_exe = "/proc/self/exe";

/* Runs PROG ARGV and collects its stdout lines into the op (manager) or
 * into out (execgate-issue). Returns the exit status. */
static int run(char *const argv[], char *out, size_t size)
{
	int p[2], status;
	size_t used = 0;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(p[1], 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	while (used + 1 < size && (n = read(p[0], out + used, size - 1 - used)) > 0)
		used += (size_t)n;
	out[used] = '\0';
	close(p[0]);
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void field(const char *out, const char *key, char *dst, size_t size)
{
	size_t kl = strlen(key);

	dst[0] = '\0';
	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, key, kl) && l[kl] == ' ') {
			size_t len = strcspn(l + kl + 1, "\n");

			snprintf(dst, size, "%.*s", (int)len, l + kl + 1);
			return;
		}
}

static void counters_mark(struct fe_worker *w)
{
	eg_worker_counters(w->w, w->counters, EG_KREASON_MAX);
}

/* "deny-no-grant +1" for every counter that moved since counters_mark. */
static void counters_moved(struct fe_worker *w, char *out, size_t size)
{
	uint64_t now[EG_KREASON_MAX] = {0};
	size_t used = 0;

	out[0] = '\0';
	if (eg_worker_counters(w->w, now, EG_KREASON_MAX) < 0)
		return;
	for (uint32_t r = 0; r < EG_KREASON_MAX; r++)
		if (now[r] != w->counters[r] && used < size)
			used += (size_t)snprintf(out + used, size - used, "%s%s +%llu",
						 used ? ", " : "", eg_kreason_name(r),
						 (unsigned long long)(now[r] - w->counters[r]));
	if (!used)
		snprintf(out, size, "no counter moved");
	memcpy(w->counters, now, sizeof(now));
}

static int send_op(const char *sandbox, struct fe_worker *w, struct fe_op *op, bool force)
{
	char out[8192];
	char *argv[] = {(char *)self_exe,
			"manager",
			"--pin-dir",
			(char *)w->pin,
			"--state-dir",
			(char *)w->state,
			"--cgroup",
			(char *)w->cgroup,
			"--sandbox",
			(char *)sandbox,
			"--bridge-socket",
			(char *)w->bridge,
			"--token",
			op->token,
			"--request",
			(char *)op->what,
			"--scope",
			"file.read,exec",
			force ? "--force-connect" : NULL,
			NULL};

	op->exit = run(argv, out, sizeof(out));
	field(out, "verdict", op->verdict, sizeof(op->verdict));
	field(out, "signed_verdict", op->signed_verdict, sizeof(op->signed_verdict));
	field(out, "connect", op->connect, sizeof(op->connect));
	field(out, "reply", op->reply, sizeof(op->reply));
	return op->exit;
}

static int issue(const char *bin, const char *seed, const char *sandbox, const struct fe_worker *w,
		 const char *gen, struct fe_op *op)
{
	char *argv[] = {(char *)bin,
			"cap",
			"--key",
			(char *)seed,
			"--sandbox",
			(char *)sandbox,
			"--worker",
			(char *)w->id_text,
			"--generation",
			(char *)gen,
			"--activation",
			"1",
			"--scope",
			"file.read,exec",
			"--ttl",
			"120",
			NULL};

	if (run(argv, op->token, sizeof(op->token)))
		return -1;
	op->token[strcspn(op->token, "\n")] = '\0';
	return eg_route_attempt_token(&op->attempt, op->token, strlen(op->token)) ? -1 : 0;
}

static const char *worker_name(const struct fe_worker *ws, const uint8_t id[EG_ID_BYTES])
{
	for (int i = 0; i < 2; i++)
		if (!memcmp(ws[i].id, id, EG_ID_BYTES))
			return i ? "B" : "A";
	return "?";
}

static void entry_text(const struct fe_worker *ws, const struct eg_route_entry *e, char *out,
		       size_t size)
{
	if (!e->version)
		snprintf(out, size, "none");
	else
		snprintf(out, size, "worker %s, generation %llu, activation %u (version %llu)",
			 worker_name(ws, e->route.worker), (unsigned long long)e->route.generation,
			 e->route.activation, (unsigned long long)e->version);
}

/* Prints the verified claims of a signed verdict (public API: the same
 * check as `execgate verdict verify`). */
static void show_signed(const struct fe_worker *ws, const struct fe_op *op, const char *step)
{
	struct eg_verdict_claim cl;
	char err[EG_ERR_MAX];
	int rc = -1;

	for (int i = 0; i < 2 && rc; i++)
		rc = eg_verdict_verify(ws[i].node_pub, op->signed_verdict, &cl, err, sizeof(err));
	if (!op->signed_verdict[0]) {
		printf("   no signed verdict came back\n= %s.signed none\n", step);
		return;
	}
	if (rc) {
		printf("   signed verdict does not verify: %s\n= %s.signed invalid\n", err, step);
		return;
	}
	printf("   signed verdict: valid under worker %s's node key %s: %s: %s, generation %llu "
	       "activation %u installed there, issued at %llu\n",
	       worker_name(ws, cl.worker), cl.node_key_id, eg_verdict_name(cl.verdict),
	       eg_reason_name(cl.reason), (unsigned long long)cl.generation, cl.activation,
	       (unsigned long long)cl.issued_at);
	printf("= %s.signed valid worker %s %s\n", step, worker_name(ws, cl.worker),
	       eg_verdict_name(cl.verdict));
}

static enum eg_route_outcome refresh(struct eg_route_cache *rc, const struct eg_node_keys *keys,
				     struct fe_op *op, const struct eg_route *fresh,
				     struct eg_route_entry *cur)
{
	return eg_route_cache_on_refresh_text(rc, op->signed_verdict, strlen(op->signed_verdict),
					      keys, &op->attempt, fresh, (uint64_t)time(NULL), cur);
}

int egd_frontend(int argc, char **argv)
{
	const char *sandbox = egd_opt(argc, argv, "sandbox"),
		   *bin = egd_opt(argc, argv, "issue-bin");
	const char *seed = egd_opt(argc, argv, "issuer-key");
	const char *stale = egd_opt(argc, argv, "stale-generation");
	const char *gen = egd_opt(argc, argv, "generation");
	struct fe_worker ws[2] = {{.name = 'A'}, {.name = 'B'}};
	struct fe_op op1 = {.what = "read /etc/hostname"}, op2 = {.what = "exec ls /"}, forged,
		     first;
	struct eg_node_key nk[2];
	struct eg_node_keys keys = {nk, 2};
	struct eg_route_cache *cache = NULL;
	struct eg_route_entry e, cur;
	struct eg_route stale_route = {0}, fresh = {0};
	uint8_t sbx[EG_ID_BYTES];
	char err[EG_ERR_MAX], moved[256], text[256], opt[16];
	uint64_t now = (uint64_t)time(NULL), expiry;
	enum eg_route_outcome o, late;
	uint8_t raw[EG_SIGNED_VERDICT_TEXT_MAX]; /* more than the binary form */
	size_t raw_len = 0;
	int ret = 1;

	for (int i = 0; i < 2; i++) {
		struct eg_worker_config cfg = {0};
		const char **f[] = {&ws[i].id_text, &ws[i].pin, &ws[i].state, &ws[i].cgroup,
				    &ws[i].bridge};
		const char *names[] = {"id", "pin", "state", "cgroup", "bridge"};

		for (int k = 0; k < 5; k++) {
			snprintf(opt, sizeof(opt), "%c-%s", i ? 'b' : 'a', names[k]);
			if (!(*f[k] = egd_opt(argc, argv, opt))) {
				fprintf(stderr, "execgate-demo: frontend: --%s is required\n", opt);
				return 2;
			}
		}
		snprintf(ws[i].node_pub, sizeof(ws[i].node_pub), "%s/node.pub", ws[i].state);
		if (eg_uuid_from_text(ws[i].id_text, ws[i].id) ||
		    eg_route_node_key_read(&nk[i], ws[i].id, ws[i].node_pub)) {
			fprintf(stderr, "execgate-demo: frontend: worker %c: %s: no node key\n",
				ws[i].name, ws[i].node_pub);
			return 1;
		}
		cfg.pin_dir = ws[i].pin;
		cfg.state_dir = ws[i].state;
		if (eg_worker_open(&cfg, &ws[i].w, err, sizeof(err))) {
			fprintf(stderr, "execgate-demo: frontend: %s\n", err);
			return 1;
		}
		counters_mark(&ws[i]);
	}
	if (!sandbox || !bin || !seed || !stale || !gen || eg_uuid_from_text(sandbox, sbx) ||
	    sodium_init() < 0 || !(cache = eg_route_cache_new(64, 64))) {
		fprintf(stderr, "execgate-demo: frontend: bad arguments\n");
		goto out;
	}
	memcpy(stale_route.worker, ws[0].id, EG_ID_BYTES);
	stale_route.substrate = EG_SUBSTRATE_FC_HOST;
	stale_route.generation = strtoull(stale, NULL, 10);
	stale_route.activation = 1;
	memcpy(fresh.worker, ws[1].id, EG_ID_BYTES);
	fresh.substrate = EG_SUBSTRATE_FC_HOST;
	fresh.generation = strtoull(gen, NULL, 10);
	fresh.activation = 1;
	expiry = now + 600;
	eg_route_cache_put(cache, sbx, &stale_route, expiry, now, &e);
	entry_text(ws, &e, text, sizeof(text));
	printf("front end: route cache entry from before the restore: %s, authentication expiry "
	       "%llu\n",
	       text, (unsigned long long)expiry);
	if (issue(bin, seed, sandbox, &ws[1], gen, &op1) ||
	    issue(bin, seed, sandbox, &ws[1], gen, &op2)) {
		fprintf(stderr, "execgate-demo: frontend: %s cap failed\n", bin);
		goto out;
	}
	printf("front end: the control plane selected execution %s (worker B) and issued one "
	       "capability per operation: op 1 '%s', op 2 '%s'\n",
	       gen, op1.what, op2.what);
	/* both operations read the stale entry before any refusal came back */
	eg_route_cache_lookup(cache, sbx, now, &op1.attempt.entry);
	eg_route_cache_lookup(cache, sbx, now, &op2.attempt.entry);

	printf("\n1. op 1 (selected for execution %s) follows the cache to worker A, which still "
	       "runs %s\n",
	       gen, stale);
	send_op(sandbox, &ws[0], &op1, false);
	counters_moved(&ws[0], moved, sizeof(moved));
	printf("   worker A's manager: verdict %s (exit %d); connect: %s\n", op1.verdict, op1.exit,
	       op1.connect);
	printf("   kernel A: %s\n", moved);
	printf("= step1.verdict %s\n= step1.connect %s\n", op1.verdict,
	       strncmp(op1.connect, "none", 4) ? "made" : "none");
	show_signed(ws, &op1, "step1");
	first = op1; /* its verdict, for the replay in step 3 */
	send_op(sandbox, &ws[0], &op2, true);
	counters_moved(&ws[0], moved, sizeof(moved));
	printf("   op 2 reaches worker A too, through a manager that ignores the verdict (%s) and "
	       "connects anyway:\n   connect %s\n   kernel A: %s\n",
	       op2.verdict, op2.connect, moved);
	printf("= step1.kernel %.*s | %s\n", (int)strcspn(op2.connect, ":"), op2.connect, moved);

	printf("\n2. the signed refresh of op 1 comes back; the control plane's lookup: execution "
	       "%s on worker B\n",
	       gen);
	o = refresh(cache, &keys, &op1, &fresh, &cur);
	entry_text(ws, &cur, text, sizeof(text));
	printf("   eg_route_cache_on_refresh(op 1's verdict, rejected version %llu): %s; entry now "
	       "%s, expiry %llu (%s)\n",
	       (unsigned long long)op1.attempt.entry.version, eg_route_outcome_name(o), text,
	       (unsigned long long)cur.expiry, cur.expiry == expiry ? "kept" : "CHANGED");
	printf("= step2.outcome %s\n= step2.entry %s\n= step2.expiry %s\n",
	       eg_route_outcome_name(o), text, cur.expiry == expiry ? "kept" : "changed");
	printf("   retry: %s\n",
	       eg_retry_action_name(eg_route_retry_action(EG_OP_IDEMPOTENT, o, 0, false)));
	send_op(sandbox, &ws[1], &op1, false);
	counters_moved(&ws[1], moved, sizeof(moved));
	printf("   op 1 -> worker B: verdict %s; connect %s\n   reply '%s'\n   kernel B: %s\n",
	       op1.verdict, op1.connect, op1.reply, moved);
	printf("= step2.retry %s | %s\n", op1.verdict, op1.reply);

	printf("\n3. op 2's refusal arrives late, naming the route it was refused on (version "
	       "%llu)\n",
	       (unsigned long long)op2.attempt.entry.version);
	show_signed(ws, &op2, "step3");
	late = refresh(cache, &keys, &op2, &fresh, &cur);
	entry_text(ws, &cur, text, sizeof(text));
	printf("   eg_route_cache_on_refresh(op 2's verdict): %s; entry stays %s\n",
	       eg_route_outcome_name(late), text);
	printf("= step3.outcome %s\n= step3.entry %s\n", eg_route_outcome_name(late), text);
	op2.attempt.entry = cur;
	o = refresh(cache, &keys, &first, &fresh, &cur);
	printf("   op 1's verdict once more (a replay): %s\n", eg_route_outcome_name(o));
	printf("= step3.replayed %s\n", eg_route_outcome_name(o));
	forged = op2;
	/* the same bytes with one bit of the signature flipped */
	if (sodium_base642bin(raw, sizeof(raw), op2.signed_verdict, strlen(op2.signed_verdict),
			      NULL, &raw_len, NULL, sodium_base64_VARIANT_URLSAFE_NO_PADDING) ||
	    !raw_len)
		goto out;
	raw[raw_len - 1] ^= 1;
	sodium_bin2base64(forged.signed_verdict, sizeof(forged.signed_verdict), raw, raw_len,
			  sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	o = refresh(cache, &keys, &forged, &fresh, &cur);
	printf("   op 2's verdict with one signature byte changed: %s\n", eg_route_outcome_name(o));
	printf("= step3.forged %s\n", eg_route_outcome_name(o));
	printf("   retry of op 2 (at most once: a signed refresh proves it never ran): %s\n",
	       eg_retry_action_name(eg_route_retry_action(EG_OP_AT_MOST_ONCE, late, 0, true)));
	send_op(sandbox, &ws[1], &op2, false);
	counters_moved(&ws[1], moved, sizeof(moved));
	printf("   op 2 -> worker B: verdict %s; reply '%s'\n   kernel B: %s\n", op2.verdict,
	       op2.reply, moved);
	printf("= step3.retry %s | %s\n", op2.verdict, op2.reply);
	ret = 0;
out:
	eg_route_cache_free(cache);
	for (int i = 0; i < 2; i++)
		eg_worker_close(ws[i].w);
	return ret;
}
