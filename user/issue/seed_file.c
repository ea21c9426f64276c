/* SPDX-License-Identifier: Apache-2.0 */
/* Seed files: read strictly (typed form, core/key_file.h), written once. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/fd_io.h"
#include "core/key_file.h"
#include "issue/issue.h"

int seed_file_read(const char *path, uint8_t seed[crypto_sign_SEEDBYTES], char *err,
		   size_t err_size)
{
	char buf[EG_KEY_FILE_MAX];
	enum eg_key_err kerr;
	mode_t mode = 0;
	size_t len;
	int ret = 0;

	kerr = eg_key_file_read(path, buf, sizeof(buf), &len, &mode);
	if (kerr == EG_KEY_OK)
		kerr = eg_key_file_decode(buf, len, EG_KEY_ALG_ED25519, EG_KEY_KIND_SECRET, seed,
					  crypto_sign_SEEDBYTES);
	if (kerr != EG_KEY_OK) {
		ret = kerr == EG_KEY_FILE_MISSING ? -ENOENT : -EINVAL;
		snprintf(err, err_size, "%s: %s", eg_key_err_name(kerr), eg_key_err_detail(kerr));
		goto cleanup;
	}
	/* Like ssh with private keys: a seed others can read is already
	 * compromised, so refuse to sign with it. (Checked after the type, so
	 * that a .pub given by mistake is named as one.) */
	if (mode & 077) {
		sodium_memzero(seed, crypto_sign_SEEDBYTES);
		ret = -EPERM;
		snprintf(err, err_size, "mode %04o is too open (want 0600)",
			 (unsigned)(mode & 07777));
	}

cleanup:
	sodium_memzero(buf, sizeof(buf));
	return ret;
}

int issue_signing_key(const char *cmd, const char *what, const char *path,
		      uint8_t pk[crypto_sign_PUBLICKEYBYTES],
		      uint8_t sk[crypto_sign_SECRETKEYBYTES])
{
	uint8_t seed[crypto_sign_SEEDBYTES];
	char err[256];

	if (seed_file_read(path, seed, err, sizeof(err))) {
		fprintf(stderr, "execgate-issue: %s: %s %s: %s\n", cmd, what, path, err);
		return ISSUE_EXIT_ERROR;
	}
	crypto_sign_seed_keypair(pk, sk, seed);
	sodium_memzero(seed, sizeof(seed));
	return 0;
}

int issue_print_text(const char *cmd, const char *text)
{
	if (printf("%s\n", text) < 0 || fflush(stdout) != 0) {
		fprintf(stderr, "execgate-issue: %s: stdout: %s\n", cmd, strerror(errno));
		return ISSUE_EXIT_ERROR;
	}
	return ISSUE_EXIT_OK;
}

int file_create_new(const char *dir, const char *name, const char *content, size_t len,
		    unsigned mode)
{
	char tmp[4096], final[4096];
	int fd, dfd, ret;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, name) >= sizeof(tmp) ||
	    (size_t)snprintf(final, sizeof(final), "%s/%s", dir, name) >= sizeof(final))
		return -ENAMETOOLONG;
	/* mkstemp: O_CREAT | O_EXCL, mode 0600 from the start, so the seed is
	 * never readable by others, not even for a moment. */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = fchmod(fd, mode) ? -errno : 0;
	if (!ret)
		ret = eg_write_all(fd, content, len);
	if (!ret && fsync(fd) != 0)
		ret = -errno;
	if (close(fd) != 0 && !ret)
		ret = -errno;
	/* link(2), not rename(2): it fails with EEXIST instead of replacing
	 * a key that is already there. */
	if (!ret && link(tmp, final) != 0)
		ret = -errno;
	unlink(tmp);
	if (ret)
		return ret;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}
