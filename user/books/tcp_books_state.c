// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* One transition applied to a socket's books: the connection made or
 * found, its live state moved, and what the transition counts (opens,
 * closes, orphans, TIME_WAIT entered, requests). Every record comes here
 * (tcp_books.c: the records' entry; tcp_books_summary.c: an end record
 * unfolded into its transitions). */
#include <errno.h>
#include <string.h>
#include "tcp_books.h"
#include "tcp_books_internal.h"
#include "census_cut.h"
#include "failbooks.h"
#include "reuse.h"

static void endpoint_of(struct endpoint_key *k, const struct cs_tuple *t, bool passive,
			bool listen_any)
{
	memset(k, 0, sizeof(*k));
	k->family = t->family;
	k->side = passive ? EP_LISTEN : EP_REMOTE;
	k->port = passive ? t->sport : t->dport;
	if (!passive)
		memcpy(k->addr, t->daddr, 16);
	else if (!listen_any)
		memcpy(k->addr, t->saddr, 16);
}

static int log2_ms_bucket(uint64_t ns)
{
	uint64_t ms = ns / 1000000;
	int b = 0;

	while (ms > 1 && b < ORPHAN_HIST_BUCKETS - 1) {
		ms >>= 1;
		b++;
	}
	return b;
}

void live_move(struct proc_books *p, int from, int to)
{
	if (from > 0 && from < CS_TCP_MAX_STATES && from != CS_TCP_CLOSE)
		p->live[from]--;
	if (to > 0 && to < CS_TCP_MAX_STATES && to != CS_TCP_CLOSE)
		p->live[to]++;
}

/* Bounded: a daemon sees listeners come and go for as long as it runs. */
#define AGG_MAX_LISTEN_ADDRS 65536

static void listen_addr_key(struct listen_addr_key *k, const struct cs_tuple *t, bool any)
{
	memset(k, 0, sizeof(*k));
	k->netns = t->netns;
	k->family = t->family;
	k->port = t->sport;
	if (!any)
		memcpy(k->addr, t->saddr, 16);
}

void listen_addr_note(struct agg *a, const struct cs_tuple *t)
{
	struct listen_addr_key k;

	if (a->listen_addrs.count >= AGG_MAX_LISTEN_ADDRS)
		return;
	listen_addr_key(&k, t, false);
	hmap_upsert(&a->listen_addrs, &k, NULL);
}

/* A listener a census shows, whoever holds it (agg_seed_listener): noted
 * only while the table is under half full. Each census notes every
 * listener of the namespaces it reads and none is ever dropped, so a long
 * run on a host whose listeners come and go (test servers, random ports)
 * would fill the table, and a target's own new listener, noted from its
 * event (listen_addr_note), would find no room: its children would be
 * booked as connections to their clients' ports. */
void listen_addr_note_seen(struct agg *a, const struct cs_tuple *t)
{
	if (a->listen_addrs.count >= AGG_MAX_LISTEN_ADDRS / 2)
		return;
	listen_addr_note(a, t);
}

/* Where a listener of the books sits for t, a child of it: at t's own
 * local address and port, at the wildcard address and t's port, or none
 * (a listener never seen, not a target's: t is no known child). */
enum listen_at listen_at_for(const struct agg *a, const struct cs_tuple *t)
{
	struct listen_addr_key k;

	listen_addr_key(&k, t, false);
	if (hmap_get(&a->listen_addrs, &k))
		return LISTEN_AT_ADDR;
	listen_addr_key(&k, t, true);
	return hmap_get(&a->listen_addrs, &k) ? LISTEN_AT_ANY : LISTEN_AT_NONE;
}

/* A child's listener is bound to the wildcard address: none seen at the
 * child's own address and port, one at the wildcard. A listener never
 * seen: the address the child was reached at. */
bool listen_any_for(const struct agg *a, const struct cs_tuple *t)
{
	return listen_at_for(a, t) == LISTEN_AT_ANY;
}

/* A connection leaves the books, with its orphan time if it has one (or
 * its CLOSE_WAIT's, cw_seen). */
void conn_del(struct agg *a, const struct conn *c, uint64_t sk)
{
	if (c->orphan || c->cw_seen)
		hmap_del(&a->orphans, &sk);
	if (c != a->unbooked)
		hmap_del(&a->conns, &sk);
}

/* The connection behind an event, created (or taken from the seeds) when
 * the books have not seen this sock yet. */
struct conn *conn_for(struct agg *a, const struct cs_event *e, bool *is_new)
{
	struct conn *c, *seed;
	bool created;

	/* One lookup that inserts when absent, not a lookup and an insert. */
	*is_new = false;
	c = hmap_upsert(&a->conns, &e->sk, &created);
	if (!c || !created)
		return c;
	seed = (e->owner.flags & CS_OWNER_SEED) ? hmap_get(&a->seeds, &e->tuple) : NULL;
	if (seed) {
		*c = *seed;
		hmap_del(&a->seeds, &e->tuple);
		return c;
	}
	c->tuple = e->tuple;
	c->pid = e->owner.tgid;
	c->since_ns = e->ts_ns;
	*is_new = true;
	return c;
}

/* Ownership moves (listener's owner -> accepting process): carry the
 * live count along. */
void conn_set_owner(struct agg *a, struct conn *c, struct proc_books *to)
{
	struct proc_books *from;

	if (c->pid == to->pid)
		return;
	from = agg_find_proc(a, c->pid);
	if (from) {
		live_move(from, c->state, 0);
		reuse_conn_move(a, from, to, c);
	}
	live_move(to, 0, c->state);
	c->pid = to->pid;
}

/* A connection's transition at ts (a handshake begun or done, a close
 * begun or done) widens the load's window, from the run's start on. */
void load_note(struct agg *a, uint64_t ts)
{
	if (ts < a->t0_ns)
		return;
	if (!a->load_first_ns || ts < a->load_first_ns)
		a->load_first_ns = ts;
	if (ts > a->load_last_ns)
		a->load_last_ns = ts;
}

/* An orphan's end, orphaned since orphan_ns (0 unknown), at ts. */
void orphan_end(struct proc_books *p, uint64_t orphan_ns, uint64_t ts)
{
	uint64_t stayed = orphan_ns && ts > orphan_ns ? ts - orphan_ns : 0;

	p->orphan_ms_hist[log2_ms_bucket(stayed)]++;
	p->orphan_ended++;
}

/* A connection established at ts (SYN_SENT -> ESTABLISHED, its local port
 * known from here on): a TIME_WAIT socket with its tuple was just taken
 * over (tcp_tw_reuse). */
void handshake_takeover(struct agg *a, const struct conn *c, uint64_t ts)
{
	struct tw_entry *tw = agg_tw_find(a, &c->tuple);

	if (tw) {
		a->tw_reused++;
		agg_tw_gone_at(a, &c->tuple, tw, c->syn_seen ? c->since_ns : ts, true);
	}
}

/* What a connection's CLOSE from e->oldstate counts (not a listener's, not
 * CLOSE -> CLOSE): its end, how it failed, the TIME_WAIT it entered.
 * est_takeover (apply_whole): its handshake's handshake_takeover was left
 * to this TIME_WAIT's lookup of the same tuple, nothing between the two
 * touching the TIME_WAIT table. */
void close_counts(struct agg *a, struct proc_books *p, const struct conn *c,
		  const struct cs_event *e, bool est_takeover)
{
	int old = e->oldstate;
	struct tw_entry *tw;

	p->total.closed++;
	if (old == CS_TCP_SYN_SENT)
		p->total.connect_failed++;
	/* Its handshake completed (a child is made at the last ACK;
	 * only a Fast Open child ends in SYN_RECV) and it ended in the
	 * accept queue: a slow acceptor's or a full backlog's sign. Not
	 * where the accept hook's record came first, counted accepted: its
	 * put landed between this CLOSE's look-up of the owner (still the
	 * listener's) and its delete. */
	if ((e->flags & CS_F_NOT_ACCEPTED) && old != CS_TCP_SYN_RECV &&
	    !(c->accepted && !(e->flags & CS_F_SUMMARY)))
		p->total.never_accepted++;
	/* Per transition, a listener's child ended before its accept
	 * record came: what that record counts, kept for it
	 * (apply_accept). Still the listener's: never accepted
	 * (CS_F_NOT_ACCEPTED, counted above) or, out of the queue,
	 * accept() has it and will hand it over dead; the accepting
	 * process's: the hook's put came first, its record follows. */
	if (!(e->flags & CS_F_SUMMARY) && !c->accepted &&
	    (e->owner.flags == CS_OWNER_LISTENER ||
	     (e->owner.flags == CS_OWNER_ACCEPT && c->passive))) {
		struct accept_wait *w = hmap_upsert(&a->accepting, &e->sk, NULL);

		if (w) {
			w->ts = e->ts_ns;
			w->tuple = e->tuple;
			w->counted = !!(e->flags & CS_F_NOT_ACCEPTED);
		}
	}
	if (e->sk_err == ECONNRESET || e->sk_err == EPIPE)
		p->total.resets++;
	failbooks_close(p, c, old, e);
	/* tcp_time_wait() ends the full sock with tcp_done() from
	 * FIN_WAIT2 or CLOSING; a reset reaches CLOSE with sk_err set. */
	/* Closed cleanly where the kernel's TIME_WAIT table was
	 * full: no TIME_WAIT was made (the kernel logs "TCP: time
	 * wait bucket table overflow"). */
	if ((old == CS_TCP_FIN_WAIT2 || old == CS_TCP_CLOSING) && e->sk_err == 0 &&
	    (e->flags & CS_F_TW_OVERFLOW)) {
		p->total.tw_not_made++;
	} else if ((old == CS_TCP_FIN_WAIT2 || old == CS_TCP_CLOSING) && e->sk_err == 0) {
		struct endpoint_stats *es;

		/* An older TIME_WAIT at this tuple ended before this
		 * connection began; its takeover was not seen (the
		 * new connection's start was, where it came from a
		 * traced side). Its cancelled timer tells it ended
		 * early; without one, how is unknown. Before, it was
		 * forgotten without a count (20 reconnects from one
		 * port: 19 TIME_WAIT ends counted nowhere). */
		bool maybe = e->flags & CS_F_TW_MAYBE, fresh;

		/* One lookup where no older one is there (the rule):
		 * the older one's end may move the entries, so the
		 * new one is looked up again after it. */
		tw = agg_tw_upsert(a, &e->tuple, &fresh);
		if (tw && !fresh) {
			if (est_takeover) {
				/* Taken over at the handshake, as
				 * handshake_takeover counts it. */
				a->tw_reused++;
				agg_tw_gone_at(a, &e->tuple, tw,
					       c->syn_seen ? c->since_ns : e->est_ns, true);
			} else {
				agg_tw_gone_at(a, &e->tuple, tw,
					       c->syn_seen && c->since_ns < e->ts_ns ?
					       c->since_ns : e->ts_ns, false);
			}
			tw = agg_tw_upsert(a, &e->tuple, &fresh);
		}
		/* In doubt (census mode, the table full at its close):
		 * counted once a dump shows it, or not made. */
		if (!maybe)
			p->total.tw_entered++;
		if (tw) {
			tw->pid = p->pid;
			tw->entered_ns = e->ts_ns;
			tw->deadline_ns = e->ts_ns + AGG_TW_LEN_NS;
			tw->gone_ns = 0;
			tw->missed = 0;
			tw->cancelled = 0;
			tw->seen = 0;
			tw->maybe = maybe;
			tw->tw = e->tw;
			/* Its socket's cookie, which the kernel's TIME_WAIT
			 * carries too where the socket had it before this
			 * record (CS_SUM_COOKIE_BEFORE: tcp_time_wait copied
			 * it into the tw socket): another cookie at its tuple
			 * is then another connection's from the first census
			 * on (review-s40 C1). Else a census gives it
			 * (tw_shown). */
			tw->cookie = e->sum & CS_SUM_COOKIE_BEFORE ? e->cookie : 0;
			/* A connection held at the start is not
			 * known passive: its port says it. */
			endpoint_of(&tw->ep, &e->tuple,
				    c->passive || reuse_listens_on(p, e->tuple.sport),
				    c->listen_any);
			/* apply_whole's: c's own endpoint (its tuple is e's). */
			es = c == a->ep_conn ? reuse_ep(a, p, c) :
			     hmap_upsert_hint(&p->endpoints, &tw->ep, NULL, &p->ep_hint);
			if (es && !maybe)
				es->tw_entered++;
			if (e->tw) {
				struct cs_tuple *k = hmap_upsert(&a->tw_by_ptr, &e->tw, NULL);
				struct tw_entry *older;

				/* An older TIME_WAIT at this address is gone
				 * (its memory is this one's): it no longer
				 * has a timer of its own to end it. */
				if (k && k->family && (older = hmap_get(&a->tw, k)) &&
				    older->tw == e->tw && older != tw)
					older->tw = 0;
				if (k)
					*k = e->tuple;
			}
		}
	}
}

/* e applied to its socket's books: known, the books of e->sk when the
 * caller has them (a summary's unfolded transitions, one lookup for all
 * of them: #23 item 6; known_new: made for this record, as conn_for
 * makes them), else NULL. Returns those books, NULL once they are gone
 * (CLOSE) or could not be made. */
struct conn *apply_state(struct agg *a, struct proc_books *p, const struct cs_event *e,
			 struct conn *known, bool known_new)
{
	struct conn *c;
	bool is_new = known_new, orphaned_now = false;
	int old = e->oldstate, new = e->newstate;
	uint64_t cw_ns, *cw_at;

	a->ev_ns = e->ts_ns;
	if (old != new &&
	    (new == CS_TCP_SYN_SENT || new == CS_TCP_SYN_RECV || new == CS_TCP_ESTABLISHED ||
	     new == CS_TCP_FIN_WAIT1 || new == CS_TCP_CLOSE_WAIT ||
	     (new == CS_TCP_CLOSE && old != CS_TCP_LISTEN)))
		load_note(a, e->ts_ns);

	c = known ? known : conn_for(a, e, &is_new);
	if (!c)
		return NULL;
	if (!is_new)
		conn_set_owner(a, c, p);
	/* A new socket at this address: an earlier one's close while
	 * accept() held it is no longer this address's to claim. */
	if (a->accepting.count && ((old == CS_TCP_LISTEN && new == CS_TCP_SYN_RECV) ||
				   (old == CS_TCP_CLOSE && new == CS_TCP_SYN_SENT)))
		hmap_del(&a->accepting, &e->sk);
	if (old == CS_TCP_LISTEN && new == CS_TCP_SYN_RECV) {
		c->passive = 1;
		c->listen_any = listen_any_for(a, &e->tuple);
		/* Concurrent once accept() returns it (apply_accept, or
		 * a summary's accepted flag), not while it waits in the queue. */
		if (is_new)
			reuse_conn_queued(a, p, c);
		/* A SYN to the 4-tuple of a TIME_WAIT of ours took it over
		 * (tcp_timewait_state_process -> TCP_TW_SYN): the kernel
		 * makes a child at a TIME_WAIT's tuple no other way. A proxy
		 * reusing its ephemeral ports does this to a server that
		 * closes first. */
		agg_tw_gone(a, &e->tuple, e->ts_ns, true);
	}
	if (new == CS_TCP_LISTEN) {
		reuse_listen(p, e->tuple.sport);
		listen_addr_note(a, &e->tuple);
	}
	/* A new sock has no live state of its own yet: a listener's child
	 * reports LISTEN as its old state. */
	live_move(p, is_new ? 0 : c->state, new);
	if (a->cut.open)
		cut_note(a, c, e->sk, is_new ? 0 : c->state, new, e->ts_ns);
	c->state = new;

	if (old == CS_TCP_CLOSE && new == CS_TCP_SYN_SENT) {
		p->total.opened++;
		/* Its life begins at its SYN (a sock the books knew before
		 * its connect, from an earlier record, starts again here). */
		c->since_ns = e->ts_ns;
		c->syn_seen = 1;
		c->passive = 0;
		reuse_conn_begin(a, p, c);
	}
	if (old == CS_TCP_SYN_SENT && new == CS_TCP_ESTABLISHED) {
		reuse_handshake(p, c, e->ts_ns);
		/* The local port is known from here on; a TIME_WAIT socket
		 * with this tuple was just taken over (tcp_tw_reuse). */
		c->tuple = e->tuple;
		handshake_takeover(a, c, e->ts_ns);
	}
	if (old == CS_TCP_ESTABLISHED && new == CS_TCP_FIN_WAIT1) {
		p->total.closed_active++;
		reuse_close_first(a, p, c, true);
	}
	if (old == CS_TCP_ESTABLISHED && new == CS_TCP_CLOSE_WAIT) {
		p->total.closed_passive++;
		reuse_close_first(a, p, c, false);
	}
	/* Its CLOSE_WAIT's time, taken out of agg.orphans at its next record
	 * (before an orphaning puts its own time there). */
	cw_ns = 0;
	if (c->cw_seen && new != CS_TCP_CLOSE_WAIT) {
		hmap_take(&a->orphans, &e->sk, &cw_ns);
		c->cw_seen = 0;
	}
	if ((e->flags & CS_F_ORPHAN) && !c->orphan) {
		c->orphan = 1;
		p->total.orphaned++;
		/* A note only for one that stays orphaned past this record:
		 * not for one closed by it, nor for the end record that
		 * apply_summary unfolds (its orphan time is at hand there). */
		if (new == CS_TCP_CLOSE)
			orphaned_now = true;
		else if (!(a->end_orphan && a->end_orphan_sk == e->sk)) {
			uint64_t *since = hmap_upsert(&a->orphans, &e->sk, NULL);

			if (since)
				*since = e->ts_ns;
		}
	}
	if (new == CS_TCP_CLOSE && c->orphan) {
		uint64_t orphan_ns = 0;

		if (orphaned_now)
			orphan_ns = e->ts_ns;
		else if (a->end_orphan && a->end_orphan_sk == e->sk)
			orphan_ns = a->end_orphan_ns;
		else	/* its note goes: the connection leaves the books below */
			hmap_take(&a->orphans, &e->sk, &orphan_ns);
		c->orphan = 0;
		orphan_end(p, orphan_ns, e->ts_ns);
	}
	if (new == CS_TCP_CLOSE && old != CS_TCP_LISTEN && old != CS_TCP_CLOSE)
		close_counts(a, p, c, e, false);
	/* Concurrency counts connections carrying requests: from the
	 * handshake (or accept) to the last byte sent or read, or to the
	 * first FIN either way if that came first (reuse_conn_done). A client
	 * that has its answer has begun its next request while the server's
	 * FIN may still be on its way (Node with keepAlive: false and 8 in
	 * flight read as 16 against a server sending its FIN 50 ms after the
	 * answer; 9-12 where the machine's load alone delayed it). The
	 * per-transition records tell the last byte at the process's close
	 * (FIN_WAIT1, LAST_ACK) and the end: a CLOSE_WAIT, whose answer may
	 * be unread yet, waits for them; a listener's child still in the
	 * queue is never concurrent. (The socket-storage records are
	 * released whole in apply_summary.) */
	if (new == CS_TCP_CLOSE_WAIT && c->reuse_open && !c->cw_seen && !c->orphan &&
	    (cw_at = hmap_upsert(&a->orphans, &e->sk, NULL))) {
		c->cw_seen = 1;
		*cw_at = e->ts_ns;
	} else if (new == CS_TCP_FIN_WAIT1 || new == CS_TCP_LAST_ACK ||
		   (new == CS_TCP_CLOSE && old != CS_TCP_LISTEN)) {
		uint64_t until = cw_ns && cw_ns < e->ts_ns ? cw_ns : e->ts_ns;

		reuse_conn_done(a, p, c, reuse_us32_before(e->ts_ns, e->io.last_us), until);
		c->queued = 0;	/* closed in the queue: never concurrent */
	} else if (new == CS_TCP_CLOSE_WAIT) {
		reuse_conn_release(a, p, c);
	}
	if (new == CS_TCP_CLOSE && old != CS_TCP_LISTEN)
		reuse_conn_end(a, p, c, e->ts_ns, &e->io);
	if (new == CS_TCP_CLOSE) {
		conn_del(a, c, e->sk);
		return NULL;
	}
	return c;
}
