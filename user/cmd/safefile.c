// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "cli.h"
#include "safefile.h"
#include "text_wrap.h"

/* A path that names no file to write: empty, ending in '/', a symbolic
 * link or a directory (EXIT_USAGE, said). */
static int check(const char *path, const char *what, const char *eg)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	struct stat st;

	if (!*path) {
		text_err("connscope: %s's file name is empty; give one (e.g. %s)\n",
			what, eg);
		return EXIT_USAGE;
	}
	if (!*base) {
		text_err("connscope: %s %s names a directory; give a file name "
			 "(e.g. %s%s)\n", what, path, path, eg);
		return EXIT_USAGE;
	}
	if (!lstat(path, &st)) {
		/* Not followed: a link planted in a shared directory would
		 * send root's write wherever it points. */
		if (S_ISLNK(st.st_mode)) {
			text_err("connscope: %s %s is a symbolic link; give the real "
				 "path\n", what, path);
			return EXIT_USAGE;
		}
		if (S_ISDIR(st.st_mode)) {
			text_err("connscope: %s %s is a directory; give a file name "
				 "(e.g. %s/%s)\n", what, path, path, eg);
			return EXIT_USAGE;
		}
	}
	return 0;
}

/* The temporary for path, as check() passed it, made and opened. */
static int open_tmp(struct safefile *sf, const char *path, const char *what)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	mode_t mask;
	int fd;

	memset(sf, 0, sizeof(*sf));
	sf->path = path;
	if (snprintf(sf->tmp, sizeof(sf->tmp), "%.*s.%s.XXXXXX", slash ? (int)(base - path) : 0,
		     path, base) >= (int)sizeof(sf->tmp)) {
		text_err("connscope: %s path %s is too long; give a shorter one\n",
			what, path);
		sf->tmp[0] = '\0';
		return EXIT_USAGE;
	}
	/* mkostemp: O_CREAT|O_EXCL with a random name, so an existing file or
	 * link of that name fails instead of being opened. */
	fd = mkostemp(sf->tmp, O_CLOEXEC);
	if (fd < 0) {
		text_err("connscope: cannot write %s %s: %s (check the directory "
			 "exists and is writable)\n", what, path, strerror(errno));
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
		text_err("connscope: cannot write %s %s: %s\n", what, path,
			strerror(errno));
		close(fd);
		unlink(sf->tmp);
		sf->tmp[0] = '\0';
		return 1;
	}
	return 0;
}

int safefile_open(struct safefile *sf, const char *path, const char *what, const char *eg)
{
	int err;

	memset(sf, 0, sizeof(*sf));
	err = check(path, what, eg);
	return err ? err : open_tmp(sf, path, what);
}

int safefile_probe(const char *path, const char *what, const char *eg)
{
	struct safefile sf;
	int err = check(path, what, eg);

	if (err || (err = open_tmp(&sf, path, what)))
		return err;
	safefile_abort(&sf);
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
		text_err("connscope: writing the report %s failed: %s\n", sf->path,
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

int safefile_fd_named(const char *path)
{
	const char *n = NULL;
	char *end;
	long fd;

	if (!strcmp(path, "/dev/stdout"))
		return STDOUT_FILENO;
	if (!strcmp(path, "/dev/stderr"))
		return STDERR_FILENO;
	if (!strncmp(path, "/dev/fd/", 8))
		n = path + 8;
	else if (!strncmp(path, "/proc/self/fd/", 14))
		n = path + 14;
	if (!n || *n < '0' || *n > '9')
		return -1;
	errno = 0;
	fd = strtol(n, &end, 10);
	return errno || *end || fd > INT_MAX ? -1 : (int)fd;
}

/* Nothing there a write could spoil, and no directory to make a
 * temporary in: a pipe, a socket, a terminal or another device. */
static bool no_file(mode_t mode)
{
	return S_ISFIFO(mode) || S_ISSOCK(mode) || S_ISCHR(mode);
}

static int cannot_write(const char *path, const char *what, int err)
{
	text_err("connscope: cannot write %s %s: %s\n", what, path, strerror(err));
	return 1;
}

int safefile_stream_check(const char *path, const char *what, const char *eg)
{
	struct stat st;
	int fd, fl, err;

	if (!strcmp(path, "-"))
		return 0;
	/* One of ours (the shell's >(...), /dev/stdout): written through a
	 * dup, so it must be open for writing. */
	if ((fd = safefile_fd_named(path)) >= 0) {
		fl = fcntl(fd, F_GETFL);
		return fl < 0 || (fl & O_ACCMODE) == O_RDONLY ? cannot_write(path, what, EBADF) : 0;
	}
	/* A link to a pipe or a device is followed: the planted link check()
	 * refuses is one to a file. */
	if (!lstat(path, &st) && S_ISLNK(st.st_mode) && !stat(path, &st) && no_file(st.st_mode))
		return 0;
	if ((err = check(path, what, eg)))
		return err;
	if (lstat(path, &st))
		return safefile_probe(path, what, eg);	/* made in its directory */
	if (no_file(st.st_mode))
		return 0;
	/* There already: opened as it will be, but not emptied (a run that
	 * cannot start leaves it as it was). */
	fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return cannot_write(path, what, errno);
	close(fd);
	return 0;
}

/* path is a link (O_NOFOLLOW said ELOOP): opened through it only where it
 * leads to no file, as safefile_stream_check allowed; else -1, ELOOP. */
static int open_link_to_no_file(const char *path)
{
	char proc[64];
	struct stat st;
	int p, fd = -1, err = ELOOP;

	/* O_PATH then the fd's own name: what is opened is what was looked
	 * at, whatever the link says by then. */
	p = open(path, O_PATH | O_CLOEXEC);
	if (p < 0)
		return -1;
	if (!fstat(p, &st) && no_file(st.st_mode)) {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", p);
		fd = open(proc, O_WRONLY | O_CLOEXEC);
		err = errno;
	}
	close(p);
	errno = err;
	return fd;
}

FILE *safefile_stream(const char *path, const char *what)
{
	FILE *f = NULL;
	int fd;

	if (!strcmp(path, "-"))
		return stdout;
	if ((fd = safefile_fd_named(path)) >= 0) {
		fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	} else {
		/* O_NOFOLLOW: a link to a file, planted since the check, is
		 * refused, not followed. */
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd < 0 && errno == ELOOP)
			fd = open_link_to_no_file(path);
	}
	if (fd >= 0 && !(f = fdopen(fd, "w")))
		close(fd);
	if (!f)
		cannot_write(path, what, errno);
	return f;
}
