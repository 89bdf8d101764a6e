// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include "procfs.h"
#include "self_stats.h"

/* btime of /proc/stat: the boot, in seconds since the epoch. */
static long long boot_time_s(void)
{
	char buf[8192], *p;
	int n = procfs_read_pid_file(getpid(), "../stat", buf, sizeof(buf));
	long long bt = 0;

	if (n < 0)
		return 0;
	p = strstr(buf, "\nbtime ");
	if (p)
		sscanf(p + 7, "%lld", &bt);
	return bt;
}

int self_stats_read(struct self_stats *s)
{
	char buf[4096], *p;
	unsigned long long utime, stime, start, vsize;
	long long rss;
	long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	struct rlimit rl;
	struct dirent *de;
	DIR *d;
	int n = procfs_read_pid_file(getpid(), "stat", buf, sizeof(buf));

	memset(s, 0, sizeof(*s));
	if (n < 0)
		return n;
	/* The fields after comm, which may hold spaces: from the last ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu "
			       "%*d %*d %*d %*d %*d %*d %llu %llu %lld",
			 &utime, &stime, &start, &vsize, &rss) != 5)
		return -EPROTO;
	s->cpu_s = (double)(utime + stime) / tck;
	s->vsize_bytes = vsize;
	s->rss_bytes = rss > 0 ? (uint64_t)rss * page : 0;
	s->start_time_s = boot_time_s() + (double)start / tck;
	if (!getrlimit(RLIMIT_NOFILE, &rl))
		s->max_fds = rl.rlim_cur;
	d = opendir("/proc/self/fd");
	if (d) {
		while ((de = readdir(d)))
			s->open_fds += de->d_name[0] != '.';
		closedir(d);
		s->open_fds--;	/* the directory's own fd */
	}
	return 0;
}
