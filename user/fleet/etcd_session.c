/* SPDX-License-Identifier: Apache-2.0 */
/* The token etcd gives a user, shared by the handles of one process
 * (user/fleet/etcd.h, struct eg_etcd_session): one login serves every
 * handle; when etcd refuses the token, the first handle to see it logs in
 * again and the others take its new token instead of logging in as well.
 * A login costs etcd a bcrypt of the password (cost 10 by default), and a
 * fleet of a thousand workers of three handles each logs in three thousand
 * times after an auth change or a restart (docs/fleet.md, "Logins"). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include "fleet/etcd_impl.h"

struct eg_etcd_session {
	/* token, gen, user, logins, refs. Held only to read or swap them,
	 * never across a request. */
	pthread_mutex_t mu;
	/* One login at a time: held across the request to etcd, so that a
	 * handle refused while another logs in waits for its token. */
	pthread_mutex_t login_mu;
	char *token; /* NULL: none yet */
	/* bumped by every new token: a handle that was refused the token of
	 * generation g logs in only when the session still holds g */
	uint64_t gen;
	uint64_t logins; /* tokens etcd gave (eg_etcd_session_logins) */
	/* the user of the first handle that joined (NULL: a handle without
	 * one); every other handle must have the same */
	char *user;
	bool bound;
	unsigned refs;
};

struct eg_etcd_session *eg_etcd_session_new(void)
{
	struct eg_etcd_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->login_mu, NULL);
	s->refs = 1;
	return s;
}

static void wipe_token(struct eg_etcd_session *s)
{
	if (!s->token)
		return;
	sodium_memzero(s->token, strlen(s->token));
	free(s->token);
	s->token = NULL;
}

void eg_etcd_session_put(struct eg_etcd_session *s)
{
	unsigned left;

	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	left = --s->refs;
	pthread_mutex_unlock(&s->mu);
	if (left)
		return;
	wipe_token(s);
	free(s->user);
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->login_mu);
	free(s);
}

uint64_t eg_etcd_session_logins(struct eg_etcd_session *s)
{
	uint64_t n;

	pthread_mutex_lock(&s->mu);
	n = s->logins;
	pthread_mutex_unlock(&s->mu);
	return n;
}

int eg_etcd_set_session(struct eg_etcd *e, struct eg_etcd_session *s, char *err, size_t err_size)
{
	const char *user = eg_etcd_creds(e)->user;
	int rc = 0;

	if (!s || s == e->sess)
		return 0;
	pthread_mutex_lock(&s->mu);
	if (s->bound && (!user != !s->user || (user && strcmp(user, s->user)))) {
		/* a token acts as its user: never lent to a handle of
		 * another, nor to one that has none */
		eg_etcd_seterr(err, err_size,
			       "etcd session: serves %s%.255s%s, refused for %s%.255s%s: a token "
			       "acts as its user",
			       s->user ? "user '" : "", s->user ? s->user : "no user",
			       s->user ? "'" : "", user ? "user '" : "", user ? user : "no user",
			       user ? "'" : "");
		rc = -EINVAL;
	} else if (!s->bound && user && !(s->user = strdup(user))) {
		rc = -ENOMEM;
	} else {
		s->bound = true;
		s->refs++;
	}
	pthread_mutex_unlock(&s->mu);
	if (rc)
		return rc;
	eg_etcd_session_put(e->sess);
	e->sess = s;
	e->sent_gen = 0;
	return 0;
}

bool eg_etcd_has_token(struct eg_etcd *e)
{
	bool has;

	pthread_mutex_lock(&e->sess->mu);
	has = e->sess->token != NULL;
	pthread_mutex_unlock(&e->sess->mu);
	return has;
}

size_t eg_etcd_token_copy(struct eg_etcd *e, char *buf, size_t size)
{
	size_t n = 0;

	pthread_mutex_lock(&e->sess->mu);
	if (e->sess->token)
		n = (size_t)snprintf(buf, size, "%s", e->sess->token);
	else if (size)
		buf[0] = '\0';
	pthread_mutex_unlock(&e->sess->mu);
	return n;
}

struct curl_slist *eg_etcd_auth_header(struct eg_etcd *e)
{
	struct eg_etcd_session *s = e->sess;
	char line[EG_ETCD_TOKEN_MAX + 32];
	struct curl_slist *l = NULL;
	bool has;

	pthread_mutex_lock(&s->mu);
	has = s->token != NULL;
	if (has) {
		snprintf(line, sizeof(line), "Authorization: %s", s->token);
		e->sent_gen = s->gen;
	}
	pthread_mutex_unlock(&s->mu);
	if (has) {
		l = curl_slist_append(NULL, line);
		sodium_memzero(line, sizeof(line));
	}
	return l;
}

int eg_etcd_login(struct eg_etcd *e, size_t idx, char *err, size_t err_size)
{
	struct eg_etcd_session *s = e->sess;
	char *tok = NULL;
	int rc;

	pthread_mutex_lock(&s->login_mu);
	pthread_mutex_lock(&s->mu);
	if (s->token && s->gen != e->sent_gen) {
		/* another handle logged in since this one's token was sent,
		 * or this one has sent none yet: take that token */
		pthread_mutex_unlock(&s->mu);
		pthread_mutex_unlock(&s->login_mu);
		return 0;
	}
	/* the refused token is of no use to anyone */
	wipe_token(s);
	pthread_mutex_unlock(&s->mu);
	rc = eg_etcd_authenticate(e, idx, &tok, err, err_size);
	if (!rc) {
		pthread_mutex_lock(&s->mu);
		s->token = tok;
		s->gen++;
		s->logins++;
		pthread_mutex_unlock(&s->mu);
	}
	pthread_mutex_unlock(&s->login_mu);
	return rc;
}
