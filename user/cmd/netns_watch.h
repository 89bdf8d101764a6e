/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Network namespaces the reconcile stops reading (netns_watch.c). */
#ifndef CONNSCOPE_NETNS_WATCH_H
#define CONNSCOPE_NETNS_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "snapshot.h"
#include "tcp_books.h"

#define NETNS_WATCH_MAX 64

struct netns_watch {
	struct netns_seen {
		uint32_t netns;		/* inode of the namespace */
		bool lost;		/* read before, not by the last snapshot */
		bool done;		/* lost, and none of its TIME_WAIT left */
		size_t held;		/* TIME_WAIT in the books when it was lost */
	} ns[NETNS_WATCH_MAX];
	size_t n;
};

/* After a snapshot, before the books are reconciled with it: namespaces
 * read before and not now are said (once), and their TIME_WAIT sockets
 * followed by timers are kept in the books rather than read as ended. */
void netns_watch_before(struct netns_watch *w, const struct tcp_snapshot *snap, struct agg *a);
/* After the reconcile: a lost namespace whose last TIME_WAIT ended is said. */
void netns_watch_after(struct netns_watch *w, const struct agg *a);

#endif
