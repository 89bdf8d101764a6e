// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The kinds of failure are told apart the way KERNEL-FACTS.md records
 * them at inet_sock_set_state: a refused connect is SYN_SENT->CLOSE with
 * sk_err ECONNREFUSED, a timed-out one the same with ETIMEDOUT; a reset
 * received reaches CLOSE with sk_err ECONNRESET (EPIPE when it came while
 * writing); a reset sent by this side is an abort, ESTABLISHED or
 * CLOSE_WAIT straight to CLOSE with no error (close() with unread data, or
 * SO_LINGER 0), which the kernel answers with tcp_send_reset. */
#include <errno.h>
#include "failbooks.h"
#include "reuse.h"

void failbooks_close(struct proc_books *p, const struct conn *c, uint8_t old,
		     const struct cs_event *e)
{
	enum { NONE, REFUSED, TIMEOUT, OTHER, RST_RECV, RST_SENT } kind = NONE;
	struct endpoint_stats *es;
	struct endpoint_key k;

	if (old == CS_TCP_SYN_SENT)
		kind = e->sk_err == ECONNREFUSED ? REFUSED : e->sk_err == ETIMEDOUT ? TIMEOUT : OTHER;
	else if (e->sk_err == ECONNRESET || e->sk_err == EPIPE)
		kind = RST_RECV;
	else if (!e->sk_err && (old == CS_TCP_ESTABLISHED || old == CS_TCP_CLOSE_WAIT))
		kind = RST_SENT;
	if (kind == NONE)
		return;		/* a normal ending: nothing to count, no row to make */
	if (kind == RST_SENT)
		p->total.resets_sent++;	/* beside total.resets, those received */
	reuse_endpoint(p, c, &k);
	es = hmap_upsert(&p->endpoints, &k, NULL);
	if (!es)
		return;
	switch (kind) {
	case REFUSED: es->connect_refused++; break;
	case TIMEOUT: es->connect_timeout++; break;
	case OTHER: es->connect_other++; break;
	case RST_RECV: es->resets_recv++; break;
	case RST_SENT: es->resets_sent++; break;
	default: break;
	}
}
