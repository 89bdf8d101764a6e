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
 * returned: 2 (EXIT_USAGE) for a path that names a symbolic link or a
 * directory, 1 for a directory that cannot be written. */
int safefile_open(struct safefile *sf, const char *path);
/* Flush, fsync, rename over the target. 0, or -errno (the temporary is
 * removed and the message printed). Closes sf->f either way. */
int safefile_commit(struct safefile *sf);
/* Give up: close and remove the temporary. No-op when not open. */
void safefile_abort(struct safefile *sf);

#endif
