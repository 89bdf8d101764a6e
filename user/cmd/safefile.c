// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "cli.h"
#include "safefile.h"

int safefile_open(struct safefile *sf, const char *path)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	struct stat st;
	mode_t mask;
	int fd;

	memset(sf, 0, sizeof(*sf));
	sf->path = path;
	if (!*path) {
		fprintf(stderr, "connscope: the report's file name is empty; give one "
				"(e.g. report.html)\n");
		return EXIT_USAGE;
	}
	if (!*base) {
		fprintf(stderr, "connscope: the report %s names a directory; give a file name "
				"(e.g. %sreport.html)\n", path, path);
		return EXIT_USAGE;
	}
	if (!lstat(path, &st)) {
		if (S_ISLNK(st.st_mode)) {
			fprintf(stderr, "connscope: the report %s is a symbolic link, which is "
					"not followed (a planted link would redirect a root write); "
					"give the real path\n", path);
			return EXIT_USAGE;
		}
		if (S_ISDIR(st.st_mode)) {
			fprintf(stderr, "connscope: the report %s is a directory; give a file "
					"name (e.g. %s/report.html)\n", path, path);
			return EXIT_USAGE;
		}
	}
	if (snprintf(sf->tmp, sizeof(sf->tmp), "%.*s.%s.XXXXXX", slash ? (int)(base - path) : 0,
		     path, base) >= (int)sizeof(sf->tmp)) {
		fprintf(stderr, "connscope: the report path %s is too long; give a shorter "
				"one\n", path);
		return EXIT_USAGE;
	}
	/* mkostemp: O_CREAT|O_EXCL with a random name, so an existing file or
	 * link of that name fails instead of being opened. */
	fd = mkostemp(sf->tmp, O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "connscope: cannot write the report %s: %s (check the directory "
				"exists and is writable)\n", path, strerror(errno));
		sf->tmp[0] = '\0';
		return 1;
	}
	/* mkostemp makes 0600; a report is as readable as any file we write.
	 * Should fchmod fail it stays 0600: stricter, not wrong. */
	mask = umask(0);
	umask(mask);
	(void)!fchmod(fd, 0666 & ~mask);
	sf->f = fdopen(fd, "w");
	if (!sf->f) {
		fprintf(stderr, "connscope: cannot write the report %s: %s\n", path,
			strerror(errno));
		close(fd);
		unlink(sf->tmp);
		sf->tmp[0] = '\0';
		return 1;
	}
	return 0;
}

int safefile_commit(struct safefile *sf)
{
	int err = 0;

	if (fflush(sf->f) || ferror(sf->f))
		err = errno ? -errno : -EIO;
	/* On disk before the name points at it: a crash leaves the old file
	 * or the new one, never an empty one. */
	if (!err && fsync(fileno(sf->f)))
		err = -errno;
	if (fclose(sf->f) && !err)
		err = -EIO;
	sf->f = NULL;
	if (!err && rename(sf->tmp, sf->path))
		err = -errno;
	if (err) {
		fprintf(stderr, "connscope: writing the report %s failed: %s\n", sf->path,
			strerror(-err));
		unlink(sf->tmp);
	}
	sf->tmp[0] = '\0';
	return err;
}

void safefile_abort(struct safefile *sf)
{
	if (sf->f) {
		fclose(sf->f);
		sf->f = NULL;
	}
	if (sf->tmp[0])
		unlink(sf->tmp);
	sf->tmp[0] = '\0';
}
