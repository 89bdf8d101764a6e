// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* /proc/PID/net/netstat is the file of PID's network namespace, so a
 * target in a container is read in its own namespace without setns(). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "netstat.h"
#include "procfs.h"

int netstat_parse(const char *text, const char *prefix, const char *name, uint64_t *out)
{
	size_t plen = strlen(prefix);
	const char *line = text;

	/* Lines come in pairs: "TcpExt: A B C" then "TcpExt: 1 2 3". */
	while (line && *line) {
		const char *next = strchr(line, '\n');
		const char *vals = next ? next + 1 : NULL;

		if (!strncmp(line, prefix, plen) && line[plen] == ':' && vals &&
		    !strncmp(vals, prefix, plen) && vals[plen] == ':') {
			const char *n = line + plen + 1, *v = vals + plen + 1;

			for (;;) {
				size_t nl;
				char *end;
				unsigned long long x;

				while (*n == ' ')
					n++;
				while (*v == ' ')
					v++;
				if (*n == '\n' || !*n || *v == '\n' || !*v)
					break;
				nl = strcspn(n, " \n");
				errno = 0;
				x = strtoull(v, &end, 10);
				if (end == v || errno)
					break;
				if (nl == strlen(name) && !strncmp(n, name, nl)) {
					*out = x;
					return 0;
				}
				n += nl;
				v = end;
			}
			return -ENOENT;
		}
		line = next ? next + 1 : NULL;
	}
	return -ENOENT;
}

int netstat_read_listen(pid_t pid, struct listen_counters *c)
{
	char buf[16384];
	int err = procfs_read_pid_file(pid, "net/netstat", buf, sizeof(buf));

	if (err < 0)
		return err;
	err = netstat_parse(buf, "TcpExt", "ListenOverflows", &c->overflows);
	if (!err)
		err = netstat_parse(buf, "TcpExt", "ListenDrops", &c->drops);
	/* Absent from some kernels' netstat: 0, not an error. */
	if (!err && netstat_parse(buf, "TcpExt", "TWRecycled", &c->tw_recycled))
		c->tw_recycled = 0;
	return err;
}

uint64_t netns_inode(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	return stat(path, &st) ? 0 : st.st_ino;
}
