/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Event builders for the books' unit tests: records shaped as the kernel
 * side emits them, on 127.0.0.1, for a client and a server process. */
#ifndef CONNSCOPE_TEST_AGG_EVENTS_H
#define CONNSCOPE_TEST_AGG_EVENTS_H

#include <string.h>
#include <sys/socket.h>
#include "tcp_books.h"
#include "kernel_view.h"

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

/* A client connection from connect() to TIME_WAIT, with the events of
 * the kernel: local port 0 until ESTABLISHED. */
static inline void client_conn(struct agg *a, uint64_t sk, uint16_t sport)
{
	struct cs_event e;

	e = ev(CS_EV_STATE, sk, CLIENT, CS_OWNER_CONNECT, tup(0, 8080), CS_TCP_CLOSE, CS_TCP_SYN_SENT);
	agg_event(a, &e);
	e = ev(CS_EV_STATE, sk, CLIENT, CS_OWNER_CONNECT, tup(sport, 8080), CS_TCP_SYN_SENT, CS_TCP_ESTABLISHED);
	agg_event(a, &e);
	e = ev(CS_EV_STATE, sk, CLIENT, CS_OWNER_CONNECT, tup(sport, 8080), CS_TCP_ESTABLISHED, CS_TCP_FIN_WAIT1);
	agg_event(a, &e);
	e = ev(CS_EV_STATE, sk, CLIENT, CS_OWNER_CONNECT, tup(sport, 8080), CS_TCP_FIN_WAIT1, CS_TCP_FIN_WAIT2);
	e.flags = CS_F_ORPHAN;
	agg_event(a, &e);
	e = ev(CS_EV_STATE, sk, CLIENT, CS_OWNER_CONNECT, tup(sport, 8080), CS_TCP_FIN_WAIT2, CS_TCP_CLOSE);
	e.flags = CS_F_ORPHAN;
	e.sk_shutdown = 3;
	agg_event(a, &e);
}

/* A socket of the kernel's dump at tuple t. */
static inline struct sd_sock sd(struct cs_tuple t, int state, uint32_t inode)
{
	struct sd_sock s = { .family = t.family, .state = state, .sport = t.sport,
			     .dport = t.dport, .inode = inode };

	memcpy(s.saddr, t.saddr, 16);
	memcpy(s.daddr, t.daddr, 16);
	if (state == CS_TCP_TIME_WAIT)
		s.timer = 3;
	return s;
}

#endif
