// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Socket-storage mode's end records unfolded into the transitions the
 * books count (apply_state in tcp_books_state.c). The records' entry is
 * tcp_books.c. */
#include <string.h>
#include "tcp_books.h"
#include "tcp_books_internal.h"
#include "reuse.h"

/* Socket-storage mode (CS_F_SUMMARY): a socket sends its end (at CLOSE)
 * with the times of what happened before, and its birth (from the birth
 * pass) only if it outlives an interval. Unfolded here into the
 * transitions the books count, each at its own time, so every figure is
 * what the per-transition records give. */
/* The books at e's address belong to another socket (the cookie says so):
 * that one ended unseen (its end record lost). It leaves the books, so
 * this socket inherits nothing from it. */
static void conn_drop_stale(struct agg *a, struct conn *c, uint64_t sk)
{
	struct proc_books *owner = agg_find_proc(a, c->pid);

	if (owner) {
		live_move(owner, c->state, 0);
		reuse_conn_release(a, owner, c);
	}
	conn_del(a, c, sk);
	a->conns_replaced++;
}

/* A birth that comes after its socket's end record (which says BORN):
 * that end is applied whole, and the late birth dropped by its cookie.
 * The kernel side reserves a birth before it claims it from the CLOSE
 * (birth_pass in tcpstate_sk.bpf.h), so from the ring a birth comes
 * first; the books, fed records from anywhere (recordings, replays), do
 * not count on that order. An end that says BORN with no birth at all
 * (one dropped while its owner was being written) leaves a cookie that
 * agg_tick prunes. */
static bool birth_came_late(struct agg *a, const struct cs_event *e, const struct conn *c)
{
	uint64_t *when;

	if (e->newstate == CS_TCP_ESTABLISHED && !c && e->cookie &&
	    hmap_del(&a->births_pending, &e->cookie)) {
		a->births_late++;
		return true;
	}
	if (e->newstate == CS_TCP_CLOSE && !c && e->cookie && (e->sum & CS_SUM_BORN) &&
	    !(e->owner.flags & CS_OWNER_SEED)) {
		when = hmap_upsert(&a->births_pending, &e->cookie, NULL);
		if (when)
			*when = e->ts_ns;
	}
	return false;
}

/* Concurrent from when its process first used it (io.acc_us: accept()
 * returned it by then; the socket-storage programs trace no syscall), not
 * while it waited in the accept queue; from its handshake's end when that
 * is unknown (a peer's reset before any use). Used first when its close
 * began (the peer's FIN came while it waited; or its process closed it
 * unused): never concurrent, as the per-transition books count a close
 * in the queue, and no open after its own close. */
static void summary_accepted(struct agg *a, struct proc_books *p, struct conn *c,
			     const struct cs_event *e, uint64_t syn_ns)
{
	uint64_t from = e->est_ns ? e->est_ns : syn_ns;
	uint64_t acc = reuse_us32_after(from, e->io.acc_us);

	if (acc > from)
		from = acc;
	if (e->fin_ns && e->fin_ns <= from) {
		c->queued = 0;
		return;
	}
	a->ev_ns = from;
	reuse_conn_accepted(a, p, c);
}

/* A connection whose whole life is this one end record (a churn's every
 * one: no birth record came, no books hold it), applied in one step: the
 * books end as apply_summary's unfolding below leaves them, transition by
 * transition, without the transitions' own work. Its owner is the
 * record's throughout (no owner to move), its live state rises and falls
 * back to none (nothing left to move), its books live on this stack
 * (none to find or delete), and which transitions it went through is the
 * record's sum, read once. The counts, histograms, queued concurrency
 * changes, TIME_WAIT and heatmaps come from the same functions with the
 * same arguments, in the same order; tests/unit/test_whole_record.c
 * holds the two ways to the same books over every kind of end. */
static void apply_whole(struct agg *a, struct proc_books *p, const struct cs_event *e)
{
	bool passive = e->sum & CS_SUM_PASSIVE, est = e->sum & CS_SUM_EST;
	bool fin = e->sum & (CS_SUM_ACTIVE_CLOSE | CS_SUM_PASSIVE_CLOSE);
	int old = e->oldstate;
	/* It enters TIME_WAIT (close_counts): an established client's look
	 * for a TIME_WAIT taken over at its tuple is that one's lookup. */
	bool tw_made = (old == CS_TCP_FIN_WAIT2 || old == CS_TCP_CLOSING) && !e->sk_err &&
		       !(e->flags & CS_F_TW_OVERFLOW);
	uint64_t syn = e->syn_ns ? e->syn_ns : e->ts_ns;
	struct conn c;

	memset(&c, 0, sizeof(c));
	c.tuple = e->tuple;
	c.pid = e->owner.tgid;
	c.since_ns = syn;
	c.cookie = e->cookie;
	/* LISTEN -> SYN_RECV or CLOSE -> SYN_SENT */
	a->ev_ns = syn;
	load_note(a, syn);
	if (a->accepting.count)
		hmap_del(&a->accepting, &e->sk);
	if (passive) {
		c.passive = 1;
		c.listen_any = listen_any_for(a, &e->tuple);
	}
	/* Its endpoint is found once (reuse_ep), its key complete. */
	a->ep_conn = &c;
	if (passive) {
		reuse_conn_queued(a, p, &c);
		agg_tw_gone(a, &e->tuple, syn, true);
	} else {
		p->total.opened++;
		c.syn_seen = 1;
		reuse_conn_begin(a, p, &c);
	}
	if (passive && (e->flags & CS_F_ACCEPTED)) {
		p->total.accepted++;
		c.accepted = 1;
		summary_accepted(a, p, &c, e, syn);
	}
	/* -> ESTABLISHED */
	if (est) {
		a->ev_ns = e->est_ns;
		load_note(a, e->est_ns);
		if (!passive) {
			reuse_handshake(p, &c, e->est_ns);
			if (!tw_made)
				handshake_takeover(a, &c, e->est_ns);
		}
	}
	if (c.reuse_open)
		reuse_conn_done(a, p, &c, reuse_us32_before(e->ts_ns, e->io.last_us),
				fin && e->fin_ns ? e->fin_ns : e->ts_ns);
	/* ESTABLISHED -> FIN_WAIT1 or CLOSE_WAIT */
	if (est && fin) {
		a->ev_ns = e->fin_ns;
		load_note(a, e->fin_ns);
		if (e->sum & CS_SUM_ACTIVE_CLOSE)
			p->total.closed_active++;
		else
			p->total.closed_passive++;
		reuse_close_first(a, p, &c, e->sum & CS_SUM_ACTIVE_CLOSE);
	}
	/* -> CLOSE, orphaned before (its time in the record) or by it */
	a->ev_ns = e->ts_ns;
	load_note(a, e->ts_ns);
	if ((e->sum & CS_SUM_ORPHAN) && e->orphan_ns && e->orphan_ns < e->ts_ns) {
		p->total.orphaned++;
		orphan_end(p, e->orphan_ns, e->ts_ns);
	} else if (e->flags & CS_F_ORPHAN) {
		p->total.orphaned++;
		orphan_end(p, e->ts_ns, e->ts_ns);
	}
	close_counts(a, p, &c, e, !passive && est && tw_made);
	reuse_conn_end(a, p, &c, e->ts_ns, &e->io);
	a->ep_conn = NULL;
	a->ep_proc = NULL;
	a->ep_count = 0;
	a->ep_es = NULL;
}

void apply_summary(struct agg *a, struct proc_books *p, const struct cs_event *e)
{
	struct conn *c = hmap_get(&a->conns, &e->sk), whole;
	bool passive = e->sum & CS_SUM_PASSIVE;
	struct cs_event x;

	if (c && c->cookie && e->cookie && c->cookie != e->cookie) {
		conn_drop_stale(a, c, e->sk);
		c = NULL;
	}
	if (birth_came_late(a, e, c))
		return;
	/* Its whole life in this record, the census not noting (cut_note
	 * wants each transition). A listener's end, or CLOSE -> CLOSE, is
	 * unfolded. */
	if (!c && e->newstate == CS_TCP_CLOSE && e->oldstate != CS_TCP_LISTEN &&
	    e->oldstate != CS_TCP_CLOSE && !a->cut.open && !a->unfold_whole &&
	    !((e->owner.flags & CS_OWNER_SEED) && hmap_get(&a->seeds, &e->tuple))) {
		apply_whole(a, p, e);
		return;
	}

	x = *e;
	x.flags &= ~(CS_F_ORPHAN | CS_F_SUMMARY);
	memset(&x.io, 0, sizeof(x.io));
	x.tw = 0;
	x.sk_err = 0;
	if (!c && e->newstate != CS_TCP_LISTEN &&
	    !((e->owner.flags & CS_OWNER_SEED) && hmap_get(&a->seeds, &e->tuple))) {
		/* Its first record: the handshake began at syn_ns. */
		x.ts_ns = e->syn_ns ? e->syn_ns : e->ts_ns;
		x.oldstate = passive ? CS_TCP_LISTEN : CS_TCP_CLOSE;
		x.newstate = passive ? CS_TCP_SYN_RECV : CS_TCP_SYN_SENT;
		/* The books apply_state made: each transition below uses
		 * them, where each looked the socket up again (5 lookups
		 * of the connections' table a record, now 1). */
		if (e->newstate == CS_TCP_CLOSE) {
			/* Born and ended in this record (a churn's every
			 * connection): its books as conn_for would make
			 * them, on the stack, gone with its CLOSE below. */
			memset(&whole, 0, sizeof(whole));
			whole.tuple = x.tuple;
			whole.pid = x.owner.tgid;
			whole.since_ns = x.ts_ns;
			a->unbooked = &whole;
			c = apply_state(a, p, &x, &whole, true);
		} else {
			c = apply_state(a, p, &x, NULL, false);
		}
		if (c)
			c->cookie = e->cookie;
		if (c && passive && (e->flags & CS_F_ACCEPTED)) {
			p->total.accepted++;
			c->accepted = 1;
			summary_accepted(a, p, c, e, x.ts_ns);
		}
	}
	if (!c || e->newstate == CS_TCP_LISTEN) {
		apply_state(a, p, e, c, false);
		a->unbooked = NULL;
		return;
	}
	if ((c->state == CS_TCP_SYN_SENT || c->state == CS_TCP_SYN_RECV) &&
	    (e->sum & CS_SUM_EST) && e->newstate != CS_TCP_ESTABLISHED) {
		x.ts_ns = e->est_ns;
		x.oldstate = c->state;
		x.newstate = CS_TCP_ESTABLISHED;
		apply_state(a, p, &x, c, false);
	}
	/* Concurrent up to its last byte sent or read, or its first FIN
	 * either way if that came first (reuse_conn_done). */
	if (e->newstate == CS_TCP_CLOSE && c->reuse_open)
		reuse_conn_done(a, p, c, reuse_us32_before(e->ts_ns, e->io.last_us),
				(e->sum & (CS_SUM_ACTIVE_CLOSE | CS_SUM_PASSIVE_CLOSE)) && e->fin_ns ?
				e->fin_ns : e->ts_ns);
	if (c->state == CS_TCP_ESTABLISHED && e->newstate == CS_TCP_CLOSE &&
	    (e->sum & (CS_SUM_ACTIVE_CLOSE | CS_SUM_PASSIVE_CLOSE))) {
		x.ts_ns = e->fin_ns;
		x.oldstate = CS_TCP_ESTABLISHED;
		x.newstate = e->sum & CS_SUM_ACTIVE_CLOSE ? CS_TCP_FIN_WAIT1 : CS_TCP_CLOSE_WAIT;
		apply_state(a, p, &x, c, false);
	}
	if ((e->sum & CS_SUM_ORPHAN) && !c->orphan && e->orphan_ns && e->orphan_ns < e->ts_ns) {
		x.ts_ns = e->orphan_ns;
		x.oldstate = x.newstate = c->state;
		x.flags |= CS_F_ORPHAN;
		/* Orphaned and closed by this one record: its orphan time
		 * goes from one transition to the next without a note. */
		if (e->newstate == CS_TCP_CLOSE) {
			a->end_orphan = true;
			a->end_orphan_sk = e->sk;
			a->end_orphan_ns = e->orphan_ns;
		}
		apply_state(a, p, &x, c, false);
	}
	apply_state(a, p, e, c, false);
	a->end_orphan = false;
	a->unbooked = NULL;
}
