/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* One moment of kernel truth: every TCP socket (sock_diag), the socket
 * counters (/proc/net/sockstat{,6}, snmp) and who holds which socket
 * inode (/proc/PID/fd). */
#ifndef CONNSCOPE_SNAPSHOT_H
#define CONNSCOPE_SNAPSHOT_H

#include <stddef.h>
#include <sys/types.h>
#include "sockdiag.h"
#include "procfs.h"

struct tcp_snapshot {
	struct sd_sock *socks;
	size_t n, cap;
	struct sockstat st;
	struct inode_map owners;	/* socket inode -> pid */
};

/* pids == NULL: scan every process's fds, else only those listed.
 * Returns 0 or -errno after printing what failed. */
int snapshot_take(struct tcp_snapshot *s, const pid_t *pids, size_t npids);
void snapshot_free(struct tcp_snapshot *s);

#endif
