// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#define _GNU_SOURCE	/* memmem */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cgroup_v2path.h"

/* A whole ".." segment in p[0..n): "/a/../b", "/..", not "/..x" (a
 * cgroup may be named so). */
static bool dotdot_segment(const char *p, size_t n)
{
	for (size_t i = 0; i + 3 <= n; i++)
		if (p[i] == '/' && p[i + 1] == '.' && p[i + 2] == '.' &&
		    (i + 3 == n || p[i + 3] == '/'))
			return true;
	return false;
}

int cgroup_v2_rel(const char *text, char *out, size_t len)
{
	const char *line = text;

	/* "12:cpu,cpuacct:/x" (v1, hybrid hosts) ... "0::/x" (v2). */
	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t n = end ? (size_t)(end - line) : strlen(line);

		if (n >= 3 && !strncmp(line, "0::", 3)) {
			const char *p = line + 3;

			n -= 3;
			/* Relative to the reader's cgroup namespace: a process
			 * outside it shows "/../..". A process in a removed
			 * cgroup (a zombie) shows " (deleted)". */
			if (!n || p[0] != '/' || dotdot_segment(p, n) ||
			    memmem(p, n, " (deleted)", 10))
				return -EXDEV;
			if (n >= len)
				return -ENAMETOOLONG;
			memcpy(out, p, n);
			out[n] = 0;
			/* "/a/" never appears, but one trailing slash is one
			 * directory all the same. */
			if (n > 1 && out[n - 1] == '/')
				out[n - 1] = 0;
			return 0;
		}
		line = end ? end + 1 : NULL;
	}
	return -ENOENT;
}

bool cgroup_path_within(const char *anc, const char *path)
{
	size_t n = strlen(anc);

	if (n == 1 && anc[0] == '/')
		return path[0] == '/';
	return !strncmp(anc, path, n) && (path[n] == 0 || path[n] == '/');
}
