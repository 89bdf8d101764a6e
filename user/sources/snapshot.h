/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* One moment of kernel truth: every TCP socket (sock_diag), the socket
 * counters (/proc/net/sockstat{,6}, snmp) and who holds which socket
 * inode (/proc/PID/fd), in each network namespace the targets are in. */
#ifndef CONNSCOPE_SNAPSHOT_H
#define CONNSCOPE_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "sockdiag.h"
#include "procfs.h"
#include "netlimits.h"

/* One network namespace of the snapshot and what the kernel says of it. */
struct snap_ns {
	uint32_t netns;		/* inode of /proc/PID/ns/net */
	pid_t pid;		/* a process in it, through which it is read */
	struct sockstat st;	/* its /proc/PID/net/sockstat{,6}, snmp */
	bool dumped;		/* its sock_diag dump is in socks (false: the
				 * process went away before it was read) */
	bool walked;		/* its sockets came from the census walk, whose
				 * birth pass has run there too (dumped also) */
};

/* The census walk that stands in for the sock_diag dump of a namespace
 * (tracer_walk in tcp_walk.c): -EAGAIN where it cannot, and the
 * namespace is dumped; 0, -errno or cb's value. */
typedef int (*snapshot_walk_fn)(void *wctx, pid_t pid, sd_sock_cb cb, void *ctx);

/* Called every SNAPSHOT_DRAIN_EVERY sockets of the dump and between the
 * processes whose fds are read: the caller drains its rings there, so a
 * dump of 100k sockets never stalls them. */
#define SNAPSHOT_DRAIN_EVERY 1024
typedef void (*snapshot_drain_fn)(void *ctx);

/* The socket inodes pid holds, from a listing of its fds made since
 * since_ns (attach's fd session lists its targets just before each
 * census): 0 with them put in m, or -EAGAIN where there is none and the
 * snapshot lists PID/fd itself. */
typedef int (*snapshot_owners_fn)(void *octx, pid_t pid, uint64_t since_ns,
				  struct inode_map *m);

struct tcp_snapshot {
	struct sd_sock *socks;	/* every namespace's, each tagged with its netns */
	size_t n, cap;
	struct sockstat st;	/* the first namespace's (the first target's) */
	struct inode_map owners;	/* socket inode -> pid */
	struct snap_ns *ns;	/* the namespaces, the first target's first */
	size_t nns;
	size_t refused;		/* --all: namespaces the last one could not
				 * enter (no CAP_SYS_ADMIN), not in ns */
	struct netlimits lim;	/* the first namespace's sysctls */
	snapshot_walk_fn walk;	/* NULL: every namespace dumped */
	void *walk_ctx;
	bool walk_check;	/* each walk compared with a dump (census_check.h) */
	/* Tests (CONNSCOPE_CENSUS_FAULT=lack-tw): the caller drops the
	 * TIME_WAIT of the run's last census, once (attach_reconcile). */
	bool lack_tw_once;
	/* NULL: each pid's fds listed here, after the sockets. Else asked
	 * first, with the moment the snapshot before began: a listing made
	 * since then, and so with no other census between it and this
	 * one, stands for this one's (one listing an interval, not two). */
	snapshot_owners_fn owners_of;
	void *owners_ctx;
	snapshot_drain_fn drain;	/* NULL: none */
	void *drain_ctx;
	uint64_t drains;		/* calls made, over every snapshot */
	/* Namespace reads over every snapshot, by source: the census walk
	 * (iter/tcp) or the sock_diag dump, so reports name where their
	 * "sockets now" came from. */
	uint64_t reads_walked, reads_dumped;
	uint64_t taken_ns;	/* when the last one began (now_ns()): a socket
				 * seen before then and absent from its dump
				 * was in no hash when it was dumped */
};

/* pids == NULL (--all): the agent's own namespace first, then every other
 * one a process of /proc is in, every process's fds; else the
 * namespaces of the pids listed and only their fds.
 * Returns 0 or -errno after printing what failed. */
int snapshot_take(struct tcp_snapshot *s, const pid_t *pids, size_t npids);
/* The namespaces of pids (all of them when npids == 0: the agent's), and
 * every process's fds, so that no socket of another process passes for
 * an unattributed one (summary). */
int snapshot_take_all_fds(struct tcp_snapshot *s, const pid_t *pids, size_t npids);
void snapshot_free(struct tcp_snapshot *s);

/* The snapshot namespace with this inode, or NULL. */
const struct snap_ns *snapshot_ns(const struct tcp_snapshot *s, uint32_t netns);

#endif
