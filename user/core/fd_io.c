/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/fd_io.h"

int eg_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

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

int eg_write_file_atomic(const char *path, const void *buf, size_t len, unsigned mode)
{
	char tmp[4200], dir[4200];
	const char *slash = strrchr(path, '/');
	int fd, dfd, rc;

	if (!slash || (size_t)snprintf(tmp, sizeof(tmp), "%.*s/.%s.XXXXXX", (int)(slash - path),
				       path, slash + 1) >= sizeof(tmp))
		return -ENAMETOOLONG;
	snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = fchmod(fd, (mode_t)mode) ? -errno : 0;
	if (!rc)
		rc = eg_write_all(fd, buf, len);
	if (!rc && fsync(fd))
		rc = -errno;
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc) {
		unlink(tmp);
		return rc;
	}
	/* The rename is durable only once the directory is synced. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	rc = fsync(dfd) ? -errno : 0;
	close(dfd);
	return rc;
}

int eg_read_first_line(const char *path, char *line, size_t size)
{
	FILE *f = fopen(path, "re");
	int rc = 0;

	if (!f)
		return -errno;
	if (!fgets(line, (int)size, f))
		rc = ferror(f) ? -EIO : -EINVAL;
	fclose(f);
	return rc;
}
