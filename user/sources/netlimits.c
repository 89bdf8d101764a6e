// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "netlimits.h"
#include "procfs.h"

static int read_sys(const char *name, const char *fmt, void *a, void *b)
{
	char path[256];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "%s/sys/net/ipv4/%s", procfs_root, name);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	n = b ? fscanf(f, fmt, a, b) : fscanf(f, fmt, a);
	fclose(f);
	return n == (b ? 2 : 1) ? 0 : -EINVAL;
}

int netlimits_read_orphans(struct netlimits *l)
{
	int err = read_sys("tcp_max_orphans", "%lu", &l->max_orphans, NULL);

	l->max_orphans_unread = err != 0;
	return err;
}

int netlimits_read(struct netlimits *l)
{
	int err;

	memset(l, 0, sizeof(*l));
	err = read_sys("ip_local_port_range", "%u %u", &l->port_lo, &l->port_hi);
	read_sys("tcp_max_tw_buckets", "%lu", &l->max_tw_buckets, NULL);
	netlimits_read_orphans(l);
	read_sys("tcp_tw_reuse", "%d", &l->tw_reuse, NULL);
	read_sys("tcp_fin_timeout", "%d", &l->fin_timeout_s, NULL);
	return err;
}
