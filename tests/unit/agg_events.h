/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Event builders for the books' unit tests: records shaped as the kernel
 * side emits them, on 127.0.0.1, for a client and a server process. */
#ifndef CONNSCOPE_TEST_AGG_EVENTS_H
#define CONNSCOPE_TEST_AGG_EVENTS_H

#include <string.h>
#include <sys/socket.h>
#include "tcp_books.h"

#define CLIENT 100
#define SERVER 200

static inline struct cs_tuple tup(uint16_t sport, uint16_t dport)
{
	struct cs_tuple t = { .family = AF_INET, .sport = sport, .dport = dport };

	t.saddr[0] = t.daddr[0] = 127;
	t.saddr[3] = t.daddr[3] = 1;
	return t;
}

static inline struct cs_event ev(uint8_t type, uint64_t sk, pid_t owner, uint32_t oflags,
				 struct cs_tuple t, int old, int new)
{
	struct cs_event e = { .type = type, .sk = sk, .tuple = t, .oldstate = old,
			      .newstate = new, .ts_ns = 1000 };

	e.owner.tgid = owner;
	e.owner.flags = oflags;
	strcpy(e.owner.comm, owner == CLIENT ? "client" : "server");
	return e;
}

#endif
