/* SPDX-License-Identifier: Apache-2.0 */
/* The etcd client's TLS and credentials (user/fleet/etcd.h, struct
 * eg_etcd_auth): the checks of the files, the password read, the loopback
 * rule for plain http://, and what every request carries. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include <sodium.h>
#include "fleet/etcd_impl.h"

#define PASSWORD_MAX 1024

/* The host of http[s]://HOST[:PORT]: "[v6]" or up to ':' or the end. */
bool eg_etcd_is_loopback_url(const char *url, size_t len)
{
	char host[64];
	const char *h, *end = url + len;
	size_t hl;
	struct in_addr a4;
	struct in6_addr a6;

	if (len > 7 && !strncmp(url, "http://", 7))
		h = url + 7;
	else if (len > 8 && !strncmp(url, "https://", 8))
		h = url + 8;
	else
		return false;
	if (*h == '[') {
		const char *close = memchr(h, ']', (size_t)(end - h));

		if (!close || (close + 1 < end && close[1] != ':'))
			return false;
		hl = (size_t)(close - h - 1);
		if (hl >= sizeof(host))
			return false;
		memcpy(host, h + 1, hl);
		host[hl] = '\0';
		return inet_pton(AF_INET6, host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
	}
	hl = strcspn(h, ":/");
	if (hl > (size_t)(end - h))
		hl = (size_t)(end - h);
	if (!hl || hl >= sizeof(host))
		return false;
	memcpy(host, h, hl);
	host[hl] = '\0';
	if (!strcasecmp(host, "localhost"))
		return true;
	return inet_pton(AF_INET, host, &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127;
}

/* A file the client will read: a regular file it can open. */
static int check_file(const char *what, const char *path, char *err, size_t err_size)
{
	struct stat st;
	int fd;

	if (!*path) {
		eg_etcd_seterr(err, err_size, "etcd %s: empty path", what);
		return -EINVAL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st)) {
		int rc = -errno;

		if (fd >= 0)
			close(fd);
		eg_etcd_seterr(err, err_size, "etcd %s %s: %s", what, path, strerror(-rc));
		return rc;
	}
	close(fd);
	if (!S_ISREG(st.st_mode)) {
		eg_etcd_seterr(err, err_size, "etcd %s %s: not a regular file", what, path);
		return -EINVAL;
	}
	return 0;
}

/* The first line of the password file, into pw (PASSWORD_MAX bytes). */
static int read_password(const char *path, char *pw, char *err, size_t err_size)
{
	char buf[PASSWORD_MAX + 2];
	struct stat st;
	ssize_t n;
	size_t len;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st)) {
		rc = -errno;
		eg_etcd_seterr(err, err_size, "etcd password file %s: %s", path, strerror(-rc));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		eg_etcd_seterr(err, err_size, "etcd password file %s: not a regular file", path);
		goto out;
	}
	if (st.st_mode & 077) {
		rc = -EPERM;
		eg_etcd_seterr(err, err_size,
			       "etcd password file %s: mode %04o lets group or others at it "
			       "(chmod 600)",
			       path, (unsigned)(st.st_mode & 07777));
		goto out;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		rc = -errno;
		eg_etcd_seterr(err, err_size, "etcd password file %s: %s", path, strerror(-rc));
		goto out;
	}
	buf[n] = '\0';
	len = strcspn(buf, "\n");
	if (len && buf[len - 1] == '\r')
		len--;
	if (!len || len > PASSWORD_MAX - 1 || memchr(buf, '\0', len)) {
		rc = -EINVAL;
		eg_etcd_seterr(err, err_size, "etcd password file %s: first line %s", path,
			       len ? "longer than 1023 bytes or holds a NUL" : "empty");
		goto out;
	}
	memcpy(pw, buf, len);
	pw[len] = '\0';
out:
	sodium_memzero(buf, sizeof(buf));
	if (fd >= 0)
		close(fd);
	return rc;
}

static int check_pairs(const struct eg_etcd_auth *a, char *err, size_t err_size)
{
	if (!a->cert != !a->key) {
		eg_etcd_seterr(err, err_size, "etcd client %s given without its %s",
			       a->cert ? "certificate" : "key", a->cert ? "key" : "certificate");
		return -EINVAL;
	}
	if (!a->user != !a->password_file) {
		eg_etcd_seterr(err, err_size, "etcd %s given without %s",
			       a->user ? "user" : "password file",
			       a->user ? "a password file" : "a user");
		return -EINVAL;
	}
	if (a->user && (!*a->user || strlen(a->user) > 255 || strpbrk(a->user, "\r\n"))) {
		eg_etcd_seterr(err, err_size,
			       "etcd user: empty, longer than 255 bytes or a line "
			       "break");
		return -EINVAL;
	}
	return 0;
}

int eg_etcd_auth_check(const struct eg_etcd_auth *a, char *err, size_t err_size)
{
	char *pw;
	int rc;

	if (!a)
		return 0;
	rc = check_pairs(a, err, err_size);
	if (!rc && a->cacert)
		rc = check_file("CA file", a->cacert, err, err_size);
	if (!rc && a->cert)
		rc = check_file("client certificate", a->cert, err, err_size);
	if (!rc && a->key)
		rc = check_file("client key", a->key, err, err_size);
	if (rc || !a->password_file)
		return rc;
	pw = sodium_malloc(PASSWORD_MAX);
	if (!pw)
		return -ENOMEM;
	rc = read_password(a->password_file, pw, err, err_size);
	sodium_free(pw);
	return rc;
}

static int dup_opt(char **dst, const char *src)
{
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : -ENOMEM;
}

int eg_etcd_creds_load(const struct eg_etcd_auth *a, struct eg_etcd_creds *c, char *err,
		       size_t err_size)
{
	int rc;

	memset(c, 0, sizeof(*c));
	if (!a)
		return 0;
	rc = eg_etcd_auth_check(a, err, err_size);
	if (rc)
		return rc;
	if (dup_opt(&c->cacert, a->cacert) || dup_opt(&c->cert, a->cert) ||
	    dup_opt(&c->key, a->key) || dup_opt(&c->user, a->user)) {
		eg_etcd_creds_free(c);
		return -ENOMEM;
	}
	if (a->password_file) {
		c->password = sodium_malloc(PASSWORD_MAX);
		if (!c->password) {
			eg_etcd_creds_free(c);
			return -ENOMEM;
		}
		rc = read_password(a->password_file, c->password, err, err_size);
		if (rc) {
			eg_etcd_creds_free(c);
			return rc;
		}
	}
	return 0;
}

void eg_etcd_creds_free(struct eg_etcd_creds *c)
{
	free(c->cacert);
	free(c->cert);
	free(c->key);
	free(c->user);
	if (c->password)
		sodium_free(c->password); /* wipes it */
	memset(c, 0, sizeof(*c));
}

void eg_etcd_curl_tls(const struct eg_etcd_creds *c, CURL *h)
{
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
	if (c->cacert) {
		/* this CA alone: a CA the system trusts signs no etcd */
		curl_easy_setopt(h, CURLOPT_CAINFO, c->cacert);
		curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
	}
	if (c->cert) {
		curl_easy_setopt(h, CURLOPT_SSLCERT, c->cert);
		curl_easy_setopt(h, CURLOPT_SSLKEY, c->key);
	}
}

bool eg_etcd_token_refused(const char *msg)
{
	/* etcdserver's ErrInvalidAuthToken, and ErrAuthOldRevision: the auth
	 * store changed since the token was given */
	return msg && (strstr(msg, "invalid auth token") || strstr(msg, "auth store is old"));
}

bool eg_etcd_caller_refused(const char *msg)
{
	return msg && (strstr(msg, "permission denied") || strstr(msg, "user name is empty") ||
		       strstr(msg, "authentication failed") ||
		       strstr(msg, "authentication is not enabled"));
}
