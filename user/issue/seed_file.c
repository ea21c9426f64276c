/* SPDX-License-Identifier: Apache-2.0 */
/* Seed files: read strictly, written once. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/hex_line.h"
#include "issue/issue.h"

#define SEED_HEX_LEN (2 * crypto_sign_SEEDBYTES)

int seed_file_read(const char *path, uint8_t seed[crypto_sign_SEEDBYTES], char *err,
		   size_t err_size)
{
	struct stat st;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, err_size, "%s", strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) != 0) {
		ret = -errno;
		snprintf(err, err_size, "%s", strerror(errno));
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		snprintf(err, err_size, "not a regular file");
		goto cleanup;
	}
	/* Like ssh with private keys: a seed others can read is already
	 * compromised, so refuse to sign with it. */
	if (st.st_mode & 077) {
		ret = -EPERM;
		snprintf(err, err_size, "mode %04o is too open (want 0600)",
			 (unsigned)(st.st_mode & 07777));
		goto cleanup;
	}
	ret = eg_hex_line_read(fd, seed, crypto_sign_SEEDBYTES);
	if (ret == -EINVAL)
		snprintf(err, err_size, "not one line of %d hex digits", SEED_HEX_LEN);
	else if (ret)
		snprintf(err, err_size, "%s", strerror(-ret));

cleanup:
	close(fd);
	return ret;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
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
		ret = write_all(fd, content, len);
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
