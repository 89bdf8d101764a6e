/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* TCP states of socket inodes for the fd listings, from sock_diag instead
 * of /proc/PID/net/tcp{,6}.
 *
 * The tables print every socket of the namespace as text, TIME_WAIT
 * included: at a load test's churn that is tens of thousands of lines per
 * read, per process, per interval, while the ring buffers wait. attach
 * already dumps every TCP socket of each target's namespace each interval
 * (snapshot.c): its sockets with an inode are handed in here at no cost.
 * Where no such dump covers a process's namespace (fdleak, the first
 * listing, a namespace the snapshot did not read) one dump is taken here,
 * without TIME_WAIT and request sockets (they have no inode, so no fd):
 * the kernel skips them without formatting a record.
 *
 * The dump begins after the listings (fdsession.c), so it tells the
 * state of each socket listed that still exists. One absent from it is
 * called TCP_CLOSE (in no hash: never connected, reset, closed by both
 * ends) only when its fd still holds it after the dump; one closed since
 * its listing (a load test's churn, a process that exited) keeps the
 * state the dump before its listing saw, if that one saw it; a socket
 * listed after the dump began, or seen by no dump, is unknown. Nothing is
 * guessed. A socket of another namespace than its holder's (made before a
 * setns, or passed over a unix socket) is in a dump only when that
 * namespace is a target's too; else it reads as TCP_CLOSE, as it did from
 * net/tcp. */
#ifndef CONNSCOPE_FDSTATES_H
#define CONNSCOPE_FDSTATES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "hashmap.h"
#include "snapshot.h"

struct fd_tcp_states {
	struct hmap by_inode;		/* uint32_t inode -> uint8_t CS_TCP_* */
	struct hmap before;		/* by_inode of the dumps before the last reset */
	struct fdst_ns {
		uint32_t netns;
		uint64_t dump_ns;	/* when its dump began (now_ns()) */
	} *ns;				/* namespaces a dump covers */
	size_t nns, cap;
	uint64_t dumps;			/* dumps taken here (not the snapshot's) */
	uint64_t dumps_failed;		/* ... that failed: tables used instead */
};

void fdstates_init(struct fd_tcp_states *st);
void fdstates_free(struct fd_tcp_states *st);
/* Forget every namespace, keep the states as the dumps before (see
 * fdstates_get_before): the next listings need a new dump. */
void fdstates_reset(struct fd_tcp_states *st);
/* Every socket with an inode of the namespaces the snapshot dumped, which
 * then count as covered since snap->taken_ns. 0 or -ENOMEM. */
int fdstates_from_snapshot(struct fd_tcp_states *st, const struct tcp_snapshot *snap);
/* The namespace of pid covered: by a dump already held, else by one taken
 * now. The time that dump began, or 0 when there is none (pid gone, the
 * namespace cannot be entered, no sock_diag): then only the tables can
 * tell. */
uint64_t fdstates_cover(struct fd_tcp_states *st, pid_t pid);
/* The state of a socket inode in a dump held (CS_TCP_*), or -1. */
int fdstates_get(const struct fd_tcp_states *st, uint32_t inode);
/* Its state in the dumps held before the last reset, or -1. */
int fdstates_get_before(const struct fd_tcp_states *st, uint32_t inode);

#endif
