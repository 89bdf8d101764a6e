// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "snapshot.h"

static int collect(const struct sd_sock *sk, void *ctx)
{
	struct tcp_snapshot *s = ctx;

	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		struct sd_sock *socks = realloc(s->socks, cap * sizeof(*socks));

		if (!socks)
			return -ENOMEM;
		s->socks = socks;
		s->cap = cap;
	}
	s->socks[s->n++] = *sk;
	return 0;
}

int snapshot_take(struct tcp_snapshot *s, const pid_t *pids, size_t npids)
{
	int err;

	s->n = 0;
	inode_map_free(&s->owners);
	inode_map_init(&s->owners);
	/* sockstat first: our own netlink socket would count in "sockets: used". */
	err = procfs_read_sockstat(&s->st);
	if (err) {
		fprintf(stderr, "connscope: cannot read %s/net/sockstat: %s\n", procfs_root,
			strerror(-err));
		return err;
	}
	err = sockdiag_dump_tcp(SD_ALL_STATES, collect, s);
	if (err) {
		fprintf(stderr, "connscope: sock_diag dump of TCP sockets failed: %s\n",
			strerror(-err));
		return err;
	}
	if (!pids)
		return procfs_scan_all_sockets(&s->owners);
	for (size_t i = 0; i < npids; i++) {
		err = procfs_scan_pid_sockets(pids[i], &s->owners);
		/* A process that exited meanwhile simply holds nothing. */
		if (err && err != -ENOENT && err != -ESRCH)
			return err;
	}
	return 0;
}

void snapshot_free(struct tcp_snapshot *s)
{
	free(s->socks);
	s->socks = NULL;
	s->n = s->cap = 0;
	inode_map_free(&s->owners);
}
