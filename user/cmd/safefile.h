/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Reports written by root into directories others may write to (/tmp, a
 * shared results folder): the file is made with O_EXCL under a random name
 * in the target's own directory (so no planted symlink is followed and the
 * final rename stays on one filesystem), written, fsync()ed and renamed
 * over the target. A target path that is itself a symbolic link or a
 * directory is refused: the user meant a file. A failed or interrupted run
 * leaves nothing behind. */
#ifndef CONNSCOPE_SAFEFILE_H
#define CONNSCOPE_SAFEFILE_H

#include <limits.h>
#include <stdio.h>

struct safefile {
	FILE *f;		/* write here */
	const char *path;	/* the target, as given */
	char tmp[PATH_MAX];	/* the temporary beside it */
};

/* 0 and sf->f open; else the message is printed and the exit status
 * returned: 2 (EXIT_USAGE) for a path that names no file (empty, ending in
 * '/', a symbolic link, a directory), 1 for a directory that is missing
 * or cannot be written. what names the path in the messages ("the
 * report", "--json-stream"), eg is an example file name ("report.html"). */
int safefile_open(struct safefile *sf, const char *path, const char *what, const char *eg);
/* The same checks, for a file written later (`run` checks its outputs
 * before it starts COMMAND) or as it goes: a temporary made in the
 * directory and removed. 0, else as safefile_open; leaves nothing. */
int safefile_probe(const char *path, const char *what, const char *eg);
/* A file written as it goes (--json-stream; "-" is stdout), made or
 * emptied now: no rename at the end, and no link to a file followed. A
 * pipe is written into: /dev/stdout, /dev/fd/N (bash's >(...)) through a
 * dup of the fd, a link to a FIFO, socket or device through the link.
 * NULL after the message (what names it). */
FILE *safefile_stream(const char *path, const char *what);
/* safefile_stream's path checked before any work: safefile_probe's
 * checks and statuses for a file to make; one already there is opened
 * for writing (not emptied); a pipe or device, or an fd of ours, must be
 * writable. 0, else the message is printed and 1 or 2 returned. */
int safefile_stream_check(const char *path, const char *what, const char *eg);
/* The fd path names when it is one of ours (/dev/stdout, /dev/stderr,
 * /dev/fd/N, /proc/self/fd/N), else -1. */
int safefile_fd_named(const char *path);
/* Flush, fsync, rename over the target. 0, or -errno (the temporary is
 * removed and the message printed). Closes sf->f either way. */
int safefile_commit(struct safefile *sf);
/* Give up: close and remove the temporary. No-op when not open. */
void safefile_abort(struct safefile *sf);

#endif
