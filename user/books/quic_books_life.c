// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The QUIC state machines of the sources that see a connection's whole
 * life: the libngtcp2 probes (conn_new, handshake_completed, conn_del by
 * ngtcp2_conn pointer) and in-kernel QUIC's socket states. The wire's,
 * which has to infer it from packet headers, is quic_books.c's. */
#include <stdio.h>
#include <string.h>
#include "quic_books.h"
#include "quic_books_internal.h"

void quic_books_lib(struct quic_books *b, const struct quic_lib_event *e)
{
	struct quic_proc *p;
	struct quic_counts *q;
	struct qlconn *c;
	bool created;

	p = quic_source_proc(b, e->tgid, QSRC_NGTCP2, e->comm, 0);
	if (!p)
		return;
	q = &p->src[1];
	switch (e->type) {
	case QN_EV_NEW:
		c = hmap_upsert(&p->lconns, &e->conn, &created);
		if (!c)
			return;
		if (!created) {
			/* The pointer came back without a del we saw. */
			q->closed++;
			if (!c->completed)
				q->handshakes_failed++;
		}
		memset(c, 0, sizeof(*c));
		c->role = e->role;
		c->first_ns = e->ts_ns;
		quic_count_open(q, e->role);
		break;
	case QN_EV_HANDSHAKE:
		c = hmap_get(&p->lconns, &e->conn);
		if (c && !c->completed) {
			c->completed = true;
			q->handshakes_completed++;
			quic_hist_add(q, e->ts_ns > c->first_ns ? e->ts_ns - c->first_ns : 0);
		}
		break;
	case QN_EV_DEL:
		c = hmap_get(&p->lconns, &e->conn);
		if (!c)
			break;
		q->closed++;
		if (!c->completed)
			q->handshakes_failed++;
		hmap_del(&p->lconns, &e->conn);
		break;
	case QN_EV_MIGRATE:
		q->migrations++;
		break;
	case QN_EV_NEW_FAIL:
		break;
	default:
		b->malformed_events++;
	}
}

void quic_books_lib_probes(struct quic_books *b, pid_t pid, uint64_t since_ns)
{
	struct quic_proc *p;

	if (pid <= 0 || !since_ns || !(p = quic_proc_get(b, pid)))
		return;
	if (!p->lib_since_ns || since_ns < p->lib_since_ns)
		p->lib_since_ns = since_ns;
}

#define TCPS_ESTABLISHED 1
#define TCPS_SYN_SENT 2
#define TCPS_SYN_RECV 3
#define TCPS_CLOSE 7

void quic_books_kernel_state(struct quic_books *b, pid_t pid, uint64_t ts_ns, uint64_t sk,
			     int oldstate, int newstate)
{
	struct quic_proc *p = quic_source_proc(b, pid, QSRC_KERNEL, "", 0);
	struct quic_counts *q;
	struct qkconn *c;
	bool created;

	if (!p)
		return;
	q = &p->src[2];
	if (newstate == TCPS_SYN_SENT || newstate == TCPS_SYN_RECV) {
		c = hmap_upsert(&p->kconns, &sk, &created);
		if (!c || !created)
			return;
		c->role = newstate == TCPS_SYN_SENT ? QN_ROLE_CLIENT : QN_ROLE_SERVER;
		c->first_ns = ts_ns;
		quic_count_open(q, c->role);
	} else if (newstate == TCPS_ESTABLISHED) {
		c = hmap_get(&p->kconns, &sk);
		if (c && !c->completed && (oldstate == TCPS_SYN_SENT || oldstate == TCPS_SYN_RECV)) {
			c->completed = true;
			q->handshakes_completed++;
			quic_hist_add(q, ts_ns > c->first_ns ? ts_ns - c->first_ns : 0);
		}
	} else if (newstate == TCPS_CLOSE) {
		c = hmap_get(&p->kconns, &sk);
		if (!c)
			return;
		q->closed++;
		if (!c->completed)
			q->handshakes_failed++;
		hmap_del(&p->kconns, &sk);
	}
}
