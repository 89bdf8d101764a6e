/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* fd limits of a process (/proc/PID/limits) and of the system
 * (/proc/sys/fs/file-nr, file-max); see fdinv.h. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdinv.h"
#include "fdinv_internal.h"
#include "procfs.h"

/* "1024" or "unlimited"; -EPROTO for anything else. */
static int parse_limit(const char *p, uint64_t *out)
{
	char *end;

	if (!p)
		return -EPROTO;
	if (!strncmp(p, "unlimited", 9)) {
		*out = UINT64_MAX;
		return 0;
	}
	errno = 0;
	*out = strtoull(p, &end, 10);
	if (end == p || errno)
		return -EPROTO;
	return 0;
}

/* The first n numbers of procfs_root/rel; how many were read, or -errno. */
static int read_numbers(const char *rel, uint64_t *v, int n)
{
	char buf[256], *p, *end;
	int len = procfs_read_file(rel, buf, sizeof(buf)), i;

	if (len < 0)
		return len;
	for (i = 0, p = buf; i < n; i++, p = end) {
		v[i] = strtoull(p, &end, 10);
		if (end == p)
			break;
	}
	return i;
}

int fdinv_limits(pid_t pid, struct fd_limits *l)
{
	char path[PATH_MAX], *line = NULL;
	uint64_t nr[3];
	size_t cap = 0;
	bool any = false;
	int err = -EPROTO;
	FILE *f;

	memset(l, 0, sizeof(*l));
	if (read_numbers("sys/fs/file-nr", nr, 3) >= 1)
		l->sys_open = nr[0];
	if (read_numbers("sys/fs/file-max", &l->sys_max, 1) < 1 &&
	    read_numbers("sys/fs/file-nr", nr, 3) == 3)
		l->sys_max = nr[2];	/* the same number, in file-nr's third field */
	if (pid <= 0)
		return 0;

	snprintf(path, sizeof(path), "%s/%d/limits", procfs_root, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return fdinv_scan_errno(errno);
	/* "Limit  Soft Limit  Hard Limit  Units": the name has spaces, the
	 * values do not. */
	errno = 0;
	while (getline(&line, &cap, f) > 0) {
		any = true;
		if (strncmp(line, "Max open files ", 15))
			continue;
		err = parse_limit(fdinv_field(line + 15, 0), &l->soft);
		if (!err)
			err = parse_limit(fdinv_field(line + 15, 1), &l->hard);
		break;
	}
	/* The file of a task reaped between open and read is empty. */
	if (!any)
		err = errno ? fdinv_scan_errno(errno) : -ENOENT;
	free(line);
	fclose(f);
	return err;
}
