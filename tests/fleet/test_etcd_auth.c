/* SPDX-License-Identifier: Apache-2.0 */
/* The etcd client as production runs etcd (user/fleet/etcd.h, struct
 * eg_etcd_auth): against a real etcd with client TLS
 * (--client-cert-auth), certificates made by openssl, and auth on, with a
 * role "worker" as docs/fleet.md ("etcd roles") gives a worker: reads,
 * watches and writes work; a client without a certificate, without a
 * user, with the wrong CA, with a wrong password or outside its role is
 * refused, and says so; an expired token is replaced. Then the files and
 * endpoints the client refuses before it sends anything. No etcd or
 * openssl: the tests fail; the one gate for a test that cannot run,
 * tests/kernel/not_offered.h, skips them loudly under
 * EXECGATE_ALLOW_SKIP=1 alone. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "fleet/etcd.h"
#include "fleet/etcd_env.h"
#include "kernel/not_offered.h"
#include "fleet/etcd_impl.h"

static struct eg_test_etcd env;
static char worker_pw[320];

static void fini(void)
{
	eg_test_etcd_stop(&env);
}

TestSuite(etcd_auth, .fini = fini, .timeout = 120);

static void need_tools(void)
{
	if (access("/usr/bin/openssl", X_OK))
		kh_not_offered(KH_NEED_TOOL, "/usr/bin/openssl missing (scripts/setup-deps.sh)");
}

/* One member, TLS, auth on, and the worker role of docs/fleet.md for
 * worker w1 under /eg: read its selections and the key set, read and
 * write its acks. */
static void start(unsigned token_ttl)
{
	need_tools();
	cr_assert_eq(eg_test_etcd_start_tls(1, true, token_ttl, &env), 0,
		     "etcd with TLS and auth did not start");
	cr_assert_eq(eg_test_etcdctl(&env, "role add worker"), 0);
	cr_assert_eq(eg_test_etcdctl(&env, "role grant-permission worker --prefix=true read "
					   "/eg/workers/w1/selections/"),
		     0);
	cr_assert_eq(eg_test_etcdctl(&env, "role grant-permission worker read /eg/keyset"), 0);
	cr_assert_eq(eg_test_etcdctl(&env, "role grant-permission worker --prefix=true readwrite "
					   "/eg/acks/w1/"),
		     0);
	cr_assert_eq(eg_test_etcd_user(&env, "worker", "worker", worker_pw), 0);
}

/* A call that logs in: etcd checks the password with bcrypt, which took
 * over a second beside two TCG guests on this 2-core machine (the call
 * timed out at 1 s). The tests check what etcd answers, not how fast. */
#define AUTH_CALL_MS 10000

static struct eg_etcd *open_as(const char *user, const char *pw_file)
{
	struct eg_etcd_auth a;
	struct eg_etcd *e;
	char err[256];

	eg_test_etcd_auth(&env, user, pw_file, &a);
	cr_assert_eq(eg_etcd_open_auth(env.endpoints, AUTH_CALL_MS, &a, &e, err, sizeof(err)), 0,
		     "%s", err);
	return e;
}

static int64_t admin_put(const char *k, const char *v)
{
	struct eg_etcd *e = open_as("root", env.root_password_file);
	char err[256];
	int64_t rev = 0;

	cr_assert_eq(eg_etcd_put(e, k, v, strlen(v), &rev, err, sizeof(err)), 0, "put %s: %s", k,
		     err);
	eg_etcd_close(e);
	return rev;
}

struct got {
	char key[128];
	int n;
};

static int first_event(const struct eg_etcd_event *ev, size_t n, int64_t rev, void *ctx)
{
	struct got *g = ctx;

	(void)rev;
	if (!n)
		return 0;
	snprintf(g->key, sizeof(g->key), "%s", ev[0].kv.key);
	g->n++;
	return 1;
}

static unsigned put_delay_ms = 400;

static void *put_later(void *arg)
{
	usleep(put_delay_ms * 1000);
	admin_put(arg, "later");
	return NULL;
}

/* A watch of the worker's selections from start_rev: the first event's
 * key, with a put of later_key put_delay_ms after the watch began. */
static int watch_one(struct eg_etcd *e, int64_t start_rev, const char *later_key, struct got *g,
		     char *err, size_t err_size)
{
	struct eg_etcd_watch_spec spec = {"/eg/workers/w1/selections/", true};
	pthread_t t;
	int rc;

	memset(g, 0, sizeof(*g));
	if (later_key)
		cr_assert_eq(pthread_create(&t, NULL, put_later, (void *)later_key), 0);
	rc = eg_etcd_watch(e, &spec, 1, start_rev, first_event, g, NULL, NULL, err, err_size);
	if (later_key)
		pthread_join(t, NULL);
	return rc;
}

Test(etcd_auth, reads_watches_and_writes_with_ca_cert_and_user)
{
	struct eg_etcd_range r;
	struct eg_etcd *e;
	struct got g;
	char err[256];
	int64_t rev;

	start(0);
	admin_put("/eg/keyset", "ks");
	rev = admin_put("/eg/workers/w1/selections/a", "sel-a");
	e = open_as("worker", worker_pw);
	cr_assert_eq(eg_etcd_get(e, "/eg/workers/w1/selections/", true, &r, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(r.n, 1);
	cr_assert_str_eq(r.kvs[0].key, "/eg/workers/w1/selections/a");
	cr_assert_str_eq(r.kvs[0].value, "sel-a");
	eg_etcd_range_free(&r);
	cr_assert_eq(eg_etcd_get(e, "/eg/keyset", false, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.n, 1);
	cr_assert_str_eq(r.kvs[0].value, "ks");
	eg_etcd_range_free(&r);
	cr_assert_eq(eg_etcd_put(e, "/eg/acks/w1/s1", "ack", 3, NULL, err, sizeof(err)), 0, "%s",
		     err);
	/* a watch from the future sees a put made while it runs */
	cr_assert_eq(watch_one(e, rev + 1, "/eg/workers/w1/selections/b", &g, err, sizeof(err)), 1,
		     "%s", err);
	cr_assert_str_eq(g.key, "/eg/workers/w1/selections/b");
	cr_assert_str_eq(eg_etcd_endpoint(e), env.m[0].client_url);
	eg_etcd_close(e);
}

Test(etcd_auth, no_client_certificate_refused_at_the_handshake)
{
	struct eg_etcd_auth a;
	struct eg_etcd_range r;
	struct eg_etcd *e;
	char err[256];
	int rc;

	start(0);
	eg_test_etcd_auth(&env, "worker", worker_pw, &a);
	a.cert = a.key = NULL;
	cr_assert_eq(eg_etcd_open_auth(env.endpoints, AUTH_CALL_MS, &a, &e, err, sizeof(err)), 0,
		     "%s", err);
	rc = eg_etcd_get(e, "/eg/keyset", false, &r, err, sizeof(err));
	/* not etcd's answer: the TLS handshake failed (TLS 1.3 says so in
	 * an alert after it, so the first read is where curl sees it) */
	cr_assert_eq(rc, -EHOSTUNREACH, "%d: %s", rc, err);
	cr_assert(strstr(err, env.m[0].client_url), "%s", err);
	cr_assert(strstr(err, "no client certificate was given"), "%s", err);
	eg_etcd_close(e);
}

Test(etcd_auth, certificate_without_user_refused_by_etcd)
{
	struct eg_etcd_watch_spec spec = {"/eg/workers/w1/selections/", true};
	struct eg_etcd_range r;
	struct eg_etcd *e;
	struct got g = {0};
	char err[256];
	int rc;

	start(0);
	e = open_as(NULL, NULL);
	rc = eg_etcd_get(e, "/eg/keyset", false, &r, err, sizeof(err));
	cr_assert_eq(rc, -EACCES, "%d: %s", rc, err);
	cr_assert(strstr(err, "user name is empty"), "%s", err);
	cr_assert(strstr(err, "a client without a user"), "%s", err);
	rc = eg_etcd_put(e, "/eg/acks/w1/s1", "x", 1, NULL, err, sizeof(err));
	cr_assert_eq(rc, -EACCES, "%d: %s", rc, err);
	rc = eg_etcd_watch(e, &spec, 1, 0, first_event, &g, NULL, NULL, err, sizeof(err));
	cr_assert_eq(rc, -EACCES, "%d: %s", rc, err);
	cr_assert(strstr(err, "user name is empty"), "%s", err);
	cr_assert_eq(g.n, 0);
	eg_etcd_close(e);
}

Test(etcd_auth, outside_its_role_permission_denied)
{
	struct eg_etcd_watch_spec spec = {"/eg/workers/w2/selections/", true};
	struct eg_etcd_range r;
	struct eg_etcd *e;
	struct got g = {0};
	char err[256];
	int rc;

	start(0);
	e = open_as("worker", worker_pw);
	/* its selections and the key set are read-only to it */
	rc = eg_etcd_put(e, "/eg/workers/w1/selections/x", "forged", 6, NULL, err, sizeof(err));
	cr_assert_eq(rc, -EACCES, "%d: %s", rc, err);
	cr_assert(strstr(err, "/v3/kv/put: refused for user 'worker': etcdserver: permission "
			      "denied"),
		  "%s", err);
	rc = eg_etcd_put(e, "/eg/keyset", "forged", 6, NULL, err, sizeof(err));
	cr_assert_eq(rc, -EACCES, "%d: %s", rc, err);
	/* another worker's acks and selections are not its own */
	rc = eg_etcd_put(e, "/eg/acks/w2/s1", "forged", 6, NULL, err, sizeof(err));
	cr_assert_eq(rc, -EACCES, "%d: %s", rc, err);
	rc = eg_etcd_get(e, "/eg/workers/w2/selections/", true, &r, err, sizeof(err));
	cr_assert_eq(rc, -EACCES, "%d: %s", rc, err);
	rc = eg_etcd_delete(e, "/eg/workers/w1/selections/", true, NULL, err, sizeof(err));
	cr_assert_eq(rc, -EACCES, "%d: %s", rc, err);
	rc = eg_etcd_watch(e, &spec, 1, 0, first_event, &g, NULL, NULL, err, sizeof(err));
	cr_assert_eq(rc, -EACCES, "%d: %s", rc, err);
	cr_assert(strstr(err, "permission denied"), "%s", err);
	eg_etcd_close(e);
}

Test(etcd_auth, expired_token_is_replaced)
{
	struct eg_etcd_range r;
	struct eg_etcd *e;
	struct got g;
	char err[256], first[600], now[600];
	int64_t rev;

	start(2); /* --auth-token-ttl 2: a token unused for 2 s is gone */
	rev = admin_put("/eg/workers/w1/selections/a", "sel-a");
	e = open_as("worker", worker_pw);
	cr_assert_eq(eg_etcd_get(e, "/eg/keyset", false, &r, err, sizeof(err)), 0, "%s", err);
	eg_etcd_range_free(&r);
	cr_assert_gt(eg_etcd_token_copy(e, first, sizeof(first)), 0);
	sleep(4);
	/* a unary call: refused once, a new token, the call again */
	cr_assert_eq(eg_etcd_get(e, "/eg/keyset", false, &r, err, sizeof(err)), 0, "%s", err);
	eg_etcd_range_free(&r);
	eg_etcd_token_copy(e, now, sizeof(now));
	cr_assert_str_neq(now, first, "the token was not replaced");
	snprintf(first, sizeof(first), "%s", now);
	sleep(4);
	/* a watch: canceled for the token, a new one, created again */
	cr_assert_eq(watch_one(e, rev, NULL, &g, err, sizeof(err)), 1, "%s", err);
	cr_assert_str_eq(g.key, "/eg/workers/w1/selections/a");
	eg_etcd_token_copy(e, now, sizeof(now));
	cr_assert_str_neq(now, first, "the token was not replaced");
	/* a watch outlives its token: it was authorized when created */
	put_delay_ms = 4000;
	cr_assert_eq(watch_one(e, rev + 1, "/eg/workers/w1/selections/c", &g, err, sizeof(err)), 1,
		     "%s", err);
	cr_assert_str_eq(g.key, "/eg/workers/w1/selections/c");
	eg_etcd_close(e);
}

struct at_once {
	struct eg_etcd *e;
	pthread_barrier_t *start;
	int rc;
	char err[256];
};

static void *get_at_once(void *arg)
{
	struct at_once *a = arg;
	struct eg_etcd_range r;

	pthread_barrier_wait(a->start);
	a->rc = eg_etcd_get(a->e, "/eg/keyset", false, &r, a->err, sizeof(a->err));
	if (!a->rc)
		eg_etcd_range_free(&r);
	return NULL;
}

/* The three handles share one session, as a worker's watcher, reconciler
 * and acker do: they log in once between them, all three calling at once
 * without a token; once again when the token expires and all three are
 * refused at once; a watch with the token logs in no more. */
Test(etcd_auth, handles_of_one_session_log_in_once)
{
	struct eg_etcd_session *s;
	struct eg_etcd *e[3];
	struct at_once a[3];
	pthread_barrier_t b;
	pthread_t t[3];
	struct got g;
	char err[256], tok[3][600];
	int64_t rev;
	int i, round;

	start(2); /* --auth-token-ttl 2: a token unused for 2 s is gone */
	rev = admin_put("/eg/workers/w1/selections/a", "sel-a");
	s = eg_etcd_session_new();
	cr_assert_not_null(s);
	for (i = 0; i < 3; i++) {
		e[i] = open_as("worker", worker_pw);
		cr_assert_eq(eg_etcd_set_session(e[i], s, err, sizeof(err)), 0, "%s", err);
	}
	for (round = 0; round < 2; round++) {
		cr_assert_eq(pthread_barrier_init(&b, NULL, 3), 0);
		for (i = 0; i < 3; i++) {
			a[i] = (struct at_once){.e = e[i], .start = &b};
			cr_assert_eq(pthread_create(&t[i], NULL, get_at_once, &a[i]), 0);
		}
		for (i = 0; i < 3; i++)
			pthread_join(t[i], NULL);
		pthread_barrier_destroy(&b);
		for (i = 0; i < 3; i++)
			cr_assert_eq(a[i].rc, 0, "round %d, handle %d: %s", round, i, a[i].err);
		cr_assert_eq(eg_etcd_session_logins(s), (uint64_t)round + 1,
			     "round %d: %llu logins for three handles of one session", round,
			     (unsigned long long)eg_etcd_session_logins(s));
		if (!round)
			sleep(4); /* the token expires unused */
	}
	cr_assert_eq(watch_one(e[2], rev, NULL, &g, err, sizeof(err)), 1, "%s", err);
	cr_assert_str_eq(g.key, "/eg/workers/w1/selections/a");
	cr_assert_eq(eg_etcd_session_logins(s), 2);
	for (i = 0; i < 3; i++)
		cr_assert_gt(eg_etcd_token_copy(e[i], tok[i], sizeof(tok[i])), 0);
	cr_assert_str_eq(tok[0], tok[1]);
	cr_assert_str_eq(tok[1], tok[2]);
	eg_etcd_session_put(s); /* the handles hold it still */
	for (i = 0; i < 3; i++)
		eg_etcd_close(e[i]);
}

Test(etcd_auth, wrong_password_refused)
{
	struct eg_etcd_auth a;
	struct eg_etcd_range r;
	struct eg_etcd *e;
	char err[256], pw_file[400];
	int fd, rc;

	start(0);
	snprintf(pw_file, sizeof(pw_file), "%s/wrong.password", env.dir);
	fd = open(pw_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "not-the-password\n", 17), 17);
	close(fd);
	eg_test_etcd_auth(&env, "worker", pw_file, &a);
	cr_assert_eq(eg_etcd_open_auth(env.endpoints, AUTH_CALL_MS, &a, &e, err, sizeof(err)), 0,
		     "%s", err);
	rc = eg_etcd_get(e, "/eg/keyset", false, &r, err, sizeof(err));
	cr_assert_eq(rc, -EACCES, "%d: %s", rc, err);
	cr_assert(strstr(err, "authentication failed"), "%s", err);
	cr_assert_null(strstr(err, "not-the-password"), "the password is in the error: %s", err);
	eg_etcd_close(e);
}

Test(etcd_auth, wrong_ca_refused)
{
	struct eg_etcd_auth a;
	struct eg_etcd_range r;
	struct eg_etcd *e;
	char err[256];
	int rc;

	start(0);
	eg_test_etcd_auth(&env, "worker", worker_pw, &a);
	a.cacert = env.other_ca;
	cr_assert_eq(eg_etcd_open_auth(env.endpoints, 1000, &a, &e, err, sizeof(err)), 0, "%s",
		     err);
	rc = eg_etcd_get(e, "/eg/keyset", false, &r, err, sizeof(err));
	cr_assert_eq(rc, -EHOSTUNREACH, "%d: %s", rc, err);
	cr_assert(strstr(err, "SSL peer certificate") || strstr(err, "certificate"), "%s", err);
	/* and without a CA file, the system's CAs do not know this one */
	eg_etcd_close(e);
	a.cacert = NULL;
	cr_assert_eq(eg_etcd_open_auth(env.endpoints, 1000, &a, &e, err, sizeof(err)), 0, "%s",
		     err);
	rc = eg_etcd_get(e, "/eg/keyset", false, &r, err, sizeof(err));
	cr_assert_eq(rc, -EHOSTUNREACH, "%d: %s", rc, err);
	eg_etcd_close(e);
}

/* --- what is refused before anything is sent ---------------------------- */

TestSuite(etcd_auth_local, .timeout = 30);

static void open_refused(const char *endpoints, const struct eg_etcd_auth *a, int want,
			 const char *msg)
{
	struct eg_etcd *e = NULL;
	char err[300] = "";
	int rc = eg_etcd_open_auth(endpoints, 1000, a, &e, err, sizeof(err));

	cr_assert_eq(rc, want, "%s: %d (%s)", endpoints, rc, err);
	cr_assert_null(e);
	cr_assert_str_eq(err, msg);
}

static void open_ok(const char *endpoints)
{
	struct eg_etcd *e = NULL;
	char err[300] = "";

	cr_assert_eq(eg_etcd_open(endpoints, 1000, &e, err, sizeof(err)), 0, "%s: %s", endpoints,
		     err);
	eg_etcd_close(e);
}

Test(etcd_auth_local, plain_http_only_to_loopback)
{
	open_refused("http://10.1.2.3:2379", NULL, -EINVAL,
		     "etcd endpoint 'http://10.1.2.3:2379': plain http:// to a host that is not "
		     "loopback (127.0.0.0/8, [::1], localhost): use https://");
	open_refused("https://10.0.0.1:2379,http://etcd.example:2379", NULL, -EINVAL,
		     "etcd endpoint 'http://etcd.example:2379': plain http:// to a host that is "
		     "not loopback (127.0.0.0/8, [::1], localhost): use https://");
	open_refused("http://127.0.0.1.evil.example:2379", NULL, -EINVAL,
		     "etcd endpoint 'http://127.0.0.1.evil.example:2379': plain http:// to a "
		     "host that is not loopback (127.0.0.0/8, [::1], localhost): use https://");
	open_refused("http://[::2]:2379", NULL, -EINVAL,
		     "etcd endpoint 'http://[::2]:2379': plain http:// to a host that is not "
		     "loopback (127.0.0.0/8, [::1], localhost): use https://");
	open_refused("http://u:p@127.0.0.1:2379", NULL, -EINVAL,
		     "etcd endpoint 'http://u:p@127.0.0.1:2379': holds user info (give a user "
		     "and a password file)");
	open_ok("http://127.0.0.1:2379");
	open_ok("http://127.200.3.4:2379,http://localhost:2379,http://[::1]:2379");
	open_ok("http://LOCALHOST");
	open_ok("https://10.1.2.3:2379,https://etcd.example");
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	cr_assert_eq(fchmod(fd, mode), 0);
	close(fd);
}

Test(etcd_auth_local, files_checked_at_open)
{
	char dir[] = "/tmp/eg-etcd-auth.XXXXXX", pw[300], msg[600], cert[300];
	struct eg_etcd_auth a = {0};
	struct eg_etcd *e = NULL;
	char err[300];

	cr_assert_not_null(mkdtemp(dir));
	snprintf(pw, sizeof(pw), "%s/pw", dir);
	snprintf(cert, sizeof(cert), "%s/cert.pem", dir);
	write_file(cert, "not read before a connect\n", 0644);

	a.cert = cert;
	open_refused("https://10.0.0.1", &a, -EINVAL,
		     "etcd client certificate given without its key");
	a.cert = NULL;
	a.key = cert;
	open_refused("https://10.0.0.1", &a, -EINVAL,
		     "etcd client key given without its certificate");
	a.key = NULL;
	a.user = "worker";
	open_refused("https://10.0.0.1", &a, -EINVAL, "etcd user given without a password file");
	a.user = NULL;
	a.password_file = pw;
	open_refused("https://10.0.0.1", &a, -EINVAL, "etcd password file given without a user");
	a.user = "worker";

	snprintf(msg, sizeof(msg), "etcd password file %s: No such file or directory", pw);
	open_refused("https://10.0.0.1", &a, -ENOENT, msg);
	write_file(pw, "s3cret\n", 0644);
	snprintf(msg, sizeof(msg),
		 "etcd password file %s: mode 0644 lets group or others at it (chmod 600)", pw);
	open_refused("https://10.0.0.1", &a, -EPERM, msg);
	write_file(pw, "\nsecond line\n", 0600);
	snprintf(msg, sizeof(msg), "etcd password file %s: first line empty", pw);
	open_refused("https://10.0.0.1", &a, -EINVAL, msg);
	write_file(pw, "s3cret\r\nignored\n", 0400);
	a.cacert = "/nonexistent/ca.pem";
	open_refused("https://10.0.0.1", &a, -ENOENT,
		     "etcd CA file /nonexistent/ca.pem: No such file or directory");
	a.cacert = dir;
	snprintf(msg, sizeof(msg), "etcd CA file %s: not a regular file", dir);
	open_refused("https://10.0.0.1", &a, -EINVAL, msg);
	a.cacert = cert;
	cr_assert_eq(eg_etcd_open_auth("https://10.0.0.1", 1000, &a, &e, err, sizeof(err)), 0, "%s",
		     err);
	/* the first line, without its CR LF */
	cr_assert_str_eq(eg_etcd_creds(e)->password, "s3cret");
	cr_assert_eq(eg_etcd_token_copy(e, msg, sizeof(msg)), 0);
	eg_etcd_close(e);
	unlink(pw);
	unlink(cert);
	rmdir(dir);
}

/* A token is one user's: a session refuses a handle of another user or
 * of none (it would act as the user), and takes the same handle twice as
 * once. The handles hold the session: it
 * outlives its creator's reference until the last one closes (ASan's run
 * of this suite sees a use after free). */
Test(etcd_auth_local, a_session_serves_one_user)
{
	char dir[] = "/tmp/eg-etcd-sess.XXXXXX", pw[300], err[300] = "";
	struct eg_etcd_auth a = {.password_file = pw};
	struct eg_etcd_session *s;
	struct eg_etcd *w, *o, *anon;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(pw, sizeof(pw), "%s/pw", dir);
	write_file(pw, "s3cret\n", 0600);
	a.user = "worker";
	cr_assert_eq(eg_etcd_open_auth("https://10.0.0.1", 1000, &a, &w, err, sizeof(err)), 0, "%s",
		     err);
	a.user = "other";
	cr_assert_eq(eg_etcd_open_auth("https://10.0.0.1", 1000, &a, &o, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_eq(eg_etcd_open("https://10.0.0.1", 1000, &anon, err, sizeof(err)), 0, "%s", err);
	s = eg_etcd_session_new();
	cr_assert_not_null(s);
	cr_assert_eq(eg_etcd_set_session(w, s, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(eg_etcd_set_session(w, s, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(eg_etcd_set_session(o, s, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err,
			 "etcd session: serves user 'worker', refused for user 'other': a token "
			 "acts as its user");
	cr_assert_eq(eg_etcd_set_session(anon, s, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err,
			 "etcd session: serves user 'worker', refused for no user: a token acts "
			 "as its user");
	cr_assert_eq(eg_etcd_session_logins(s), 0);
	eg_etcd_session_put(s);
	eg_etcd_close(o);
	eg_etcd_close(w);
	cr_assert_eq(eg_etcd_token_copy(anon, err, sizeof(err)), 0);
	eg_etcd_close(anon);
	unlink(pw);
	rmdir(dir);
}
