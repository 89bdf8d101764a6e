// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The books: events move sockets between states per owner; reconciles
 * compare the books with the kernel's sockets and keep TIME_WAIT tuples
 * only while the kernel still has them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "tcp_books.h"
#include "census_cut.h"
#include "failbooks.h"
#include "reuse.h"
#include "software.h"

/* Every traced socket has one: a byte more is 1 MiB more at 1M sockets. */
_Static_assert(sizeof(struct conn) == 72, "struct conn: 72 bytes (tcp_books_types.h)");

void agg_init(struct agg *a, uint64_t t0_ns)
{
	memset(a, 0, sizeof(*a));
	hmap_init(&a->procs, sizeof(struct proc_key), sizeof(struct proc_books));
	hmap_init(&a->cur, sizeof(pid_t), sizeof(uint64_t));
	hmap_init(&a->conns, sizeof(uint64_t), sizeof(struct conn));
	hmap_init(&a->orphans, sizeof(uint64_t), sizeof(uint64_t));
	hmap_init(&a->seeds, sizeof(struct cs_tuple), sizeof(struct conn));
	hmap_init(&a->tw, sizeof(struct cs_tuple), sizeof(struct tw_entry));
	hmap_init(&a->tw_by_ptr, sizeof(uint64_t), sizeof(struct cs_tuple));
	hmap_init(&a->births_pending, sizeof(uint64_t), sizeof(uint64_t));
	hmap_init(&a->accepting, sizeof(uint64_t), sizeof(uint64_t));
	hmap_init(&a->listen_addrs, sizeof(struct listen_addr_key), sizeof(uint8_t));
	hmap_init(&a->parents, sizeof(pid_t), sizeof(struct parent_note));
	skb_init(&a->skb);
	a->t0_ns = t0_ns;
	a->bucket_ns = 1000000000ULL;
}

void agg_free(struct agg *a)
{
	agg_procs_free(a);
	hmap_free(&a->conns);
	hmap_free(&a->orphans);
	hmap_free(&a->seeds);
	hmap_free(&a->tw);
	hmap_free(&a->tw_by_ptr);
	hmap_free(&a->births_pending);
	hmap_free(&a->accepting);
	hmap_free(&a->listen_addrs);
	hmap_free(&a->parents);
	skb_free(&a->skb);
	cut_free(&a->cut);
}

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

static void live_move(struct proc_books *p, int from, int to)
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

static void listen_addr_note(struct agg *a, const struct cs_tuple *t)
{
	struct listen_addr_key k;

	if (a->listen_addrs.count >= AGG_MAX_LISTEN_ADDRS)
		return;
	listen_addr_key(&k, t, false);
	hmap_upsert(&a->listen_addrs, &k, NULL);
}

/* A child's listener is bound to the wildcard address: no listener seen at
 * the child's own address and port, one seen at the wildcard. A listener
 * never seen (not a target's): the address the child was reached at. */
static bool listen_any_for(const struct agg *a, const struct cs_tuple *t)
{
	struct listen_addr_key k;

	listen_addr_key(&k, t, false);
	if (hmap_get(&a->listen_addrs, &k))
		return false;
	listen_addr_key(&k, t, true);
	return hmap_get(&a->listen_addrs, &k) != NULL;
}

void agg_seed(struct agg *a, pid_t pid, const struct sd_sock *s)
{
	struct proc_books *p = agg_proc(a, pid);
	struct cs_tuple t;
	struct conn *c;
	bool created;

	if (!p)
		return;
	tuple_from_sd(&t, s);
	c = hmap_upsert(&a->seeds, &t, &created);
	if (!c || !created)
		return;
	c->tuple = t;
	c->pid = pid;
	c->state = s->state;
	c->seeded = 1;
	c->since_ns = a->t0_ns;
	/* sock_diag dumps the listeners first: their children's come after. */
	if (s->state == CS_TCP_LISTEN) {
		reuse_listen(p, s->sport);
		listen_addr_note(a, &t);
	} else {
		c->listen_any = listen_any_for(a, &t);
	}
	live_move(p, 0, s->state);
	reuse_conn_seed(a, p, c);
	p->seeded++;
}

/* An event's owner carries its group leader's comm at that moment. A
 * target not known yet whose events say another name has exec'd (a
 * wrapper COMMAND of `run`: ip netns exec, env, nice): it takes the name
 * of the program that connects, and its software is probed again. One
 * known keeps its name. */
static void fill_ident(struct proc_books *p, const struct cs_owner *o)
{
	if (!p->comm[0] || (p->software == SW_UNKNOWN && o->comm[0] &&
			    strncmp(p->comm, o->comm, sizeof(p->comm) - 1))) {
		if (p->comm[0])
			p->software_probed = false;
		memcpy(p->comm, o->comm, sizeof(p->comm));
		p->comm[sizeof(p->comm) - 1] = '\0';
	}
	if (!p->start_ns)
		p->start_ns = o->start_ns;
}

/* A connection leaves the books, with its orphan time if it has one (or
 * its CLOSE_WAIT's, cw_seen). */
static void conn_del(struct agg *a, const struct conn *c, uint64_t sk)
{
	if (c->orphan || c->cw_seen)
		hmap_del(&a->orphans, &sk);
	if (c != a->unbooked)
		hmap_del(&a->conns, &sk);
}

uint64_t agg_orphan_since(const struct agg *a, uint64_t sk)
{
	const uint64_t *since = hmap_get(&a->orphans, &sk);

	return since ? *since : 0;
}

/* The connection behind an event, created (or taken from the seeds) when
 * the books have not seen this sock yet. */
static struct conn *conn_for(struct agg *a, const struct cs_event *e, bool *is_new)
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
static void conn_set_owner(struct agg *a, struct conn *c, struct proc_books *to)
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

/* e applied to its socket's books: known, the books of e->sk when the
 * caller has them (a summary's unfolded transitions, one lookup for all
 * of them: #23 item 6; known_new: made for this record, as conn_for
 * makes them), else NULL. Returns those books, NULL once they are gone
 * (CLOSE) or could not be made. */
static struct conn *apply_state(struct agg *a, struct proc_books *p, const struct cs_event *e,
				struct conn *known, bool known_new)
{
	struct conn *c;
	struct tw_entry *tw;
	bool is_new = known_new, orphaned_now = false;
	int old = e->oldstate, new = e->newstate;
	uint64_t cw_ns, *cw_at;

	a->ev_ns = e->ts_ns;
	if (e->ts_ns >= a->t0_ns && old != new &&
	    (new == CS_TCP_SYN_SENT || new == CS_TCP_SYN_RECV || new == CS_TCP_ESTABLISHED ||
	     new == CS_TCP_FIN_WAIT1 || new == CS_TCP_CLOSE_WAIT ||
	     (new == CS_TCP_CLOSE && old != CS_TCP_LISTEN))) {
		if (!a->load_first_ns || e->ts_ns < a->load_first_ns)
			a->load_first_ns = e->ts_ns;
		if (e->ts_ns > a->load_last_ns)
			a->load_last_ns = e->ts_ns;
	}

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
		if ((tw = hmap_get(&a->tw, &e->tuple))) {
			a->tw_reused++;
			agg_tw_gone_at(a, &e->tuple, tw, c->syn_seen ? c->since_ns : e->ts_ns, true);
		}
	}
	if (old == CS_TCP_ESTABLISHED && new == CS_TCP_FIN_WAIT1)
		p->total.closed_active++;
	if (old == CS_TCP_ESTABLISHED && new == CS_TCP_CLOSE_WAIT)
		p->total.closed_passive++;
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
		uint64_t orphan_ns = 0, stayed;

		if (orphaned_now)
			orphan_ns = e->ts_ns;
		else if (a->end_orphan && a->end_orphan_sk == e->sk)
			orphan_ns = a->end_orphan_ns;
		else	/* its note goes: the connection leaves the books below */
			hmap_take(&a->orphans, &e->sk, &orphan_ns);
		c->orphan = 0;
		stayed = orphan_ns && e->ts_ns > orphan_ns ? e->ts_ns - orphan_ns : 0;
		p->orphan_ms_hist[log2_ms_bucket(stayed)]++;
		p->orphan_ended++;
	}
	if (new == CS_TCP_CLOSE && old != CS_TCP_LISTEN && old != CS_TCP_CLOSE) {
		p->total.closed++;
		if (old == CS_TCP_SYN_SENT)
			p->total.connect_failed++;
		/* Its handshake completed (a child is made at the last ACK;
		 * only a Fast Open child ends in SYN_RECV) and it ended in the
		 * accept queue: a slow acceptor's or a full backlog's sign. */
		if ((e->flags & CS_F_NOT_ACCEPTED) && old != CS_TCP_SYN_RECV)
			p->total.never_accepted++;
		/* Still its listener's, yet out of the queue: accept() has
		 * it and will hand it over dead (apply_accept). */
		if (e->owner.flags == CS_OWNER_LISTENER &&
		    !(e->flags & (CS_F_NOT_ACCEPTED | CS_F_SUMMARY))) {
			uint64_t *when = hmap_upsert(&a->accepting, &e->sk, NULL);

			if (when)
				*when = e->ts_ns;
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
			tw = hmap_upsert(&a->tw, &e->tuple, &fresh);
			if (tw && !fresh) {
				agg_tw_gone_at(a, &e->tuple, tw,
					       c->syn_seen && c->since_ns < e->ts_ns ? c->since_ns :
					       e->ts_ns, false);
				tw = hmap_upsert(&a->tw, &e->tuple, NULL);
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
				/* A connection held at the start is not
				 * known passive: its port says it. */
				endpoint_of(&tw->ep, &e->tuple,
					    c->passive || reuse_listens_on(p, e->tuple.sport),
					    c->listen_any);
				es = hmap_upsert_hint(&p->endpoints, &tw->ep, NULL, &p->ep_hint);
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

static void apply_accept(struct agg *a, struct proc_books *p, const struct cs_event *e)
{
	struct conn *c;
	bool is_new;

	/* Already over. Ended in the accept queue: its CLOSE was charged to
	 * the listener and counted never accepted; accept() only handed the
	 * application a dead socket (socket-storage mode cannot see that
	 * accept, so both modes count it alike). Or reset after accept() took
	 * it off the queue (inet_accept() grafts it under the sock's lock, a
	 * reset waits for release_sock()): accepted, its close already
	 * counted. */
	if (e->newstate == CS_TCP_CLOSE) {
		if (hmap_del(&a->accepting, &e->sk))
			p->total.accepted++;
		return;
	}
	/* Reset between accept()'s look and its exit: counted here. */
	if (a->accepting.count)
		hmap_del(&a->accepting, &e->sk);
	p->total.accepted++;
	c = conn_for(a, e, &is_new);
	if (!c)
		return;
	c->passive = 1;
	a->ev_ns = e->ts_ns;
	if (is_new) {
		c->listen_any = listen_any_for(a, &e->tuple);
		c->state = e->newstate;
		live_move(p, 0, c->state);
		if (a->cut.open)
			cut_note(a, c, e->sk, 0, c->state, e->ts_ns);
		reuse_conn_begin(a, p, c);
	} else {
		conn_set_owner(a, c, p);
		/* From here it carries requests: accept() returned it. */
		reuse_conn_accepted(a, p, c);
	}
}

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

static void apply_summary(struct agg *a, struct proc_books *p, const struct cs_event *e)
{
	struct conn *c = hmap_get(&a->conns, &e->sk), whole;
	bool passive = e->sum & CS_SUM_PASSIVE;
	struct cs_event x = *e;

	if (c && c->cookie && e->cookie && c->cookie != e->cookie) {
		conn_drop_stale(a, c, e->sk);
		c = NULL;
	}
	if (birth_came_late(a, e, c))
		return;

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

/* A listener's child was taken by another process (its first send,
 * receive or close ran there): the connection and its accept move; tgid
 * 0, a process we do not trace: they leave the books. */
static void apply_owner(struct agg *a, const struct cs_event *e)
{
	struct conn *c = hmap_get(&a->conns, &e->sk);
	struct proc_books *from, *to;

	if (!c)
		return;
	from = agg_find_proc(a, c->pid);
	if (!e->owner.tgid) {
		if (from) {
			live_move(from, c->state, 0);
			reuse_conn_release(a, from, c);
			if (c->accepted && from->total.accepted)
				from->total.accepted--;
		}
		conn_del(a, c, e->sk);
		return;
	}
	to = agg_proc_gen(a, e->owner.tgid, e->owner.start_ns);
	if (!to)
		return;
	fill_ident(to, &e->owner);
	from = agg_find_proc(a, c->pid);	/* agg_proc_gen may move books */
	if (from && from != to && c->accepted) {
		from->total.accepted -= from->total.accepted > 0;
		to->total.accepted++;
	}
	conn_set_owner(a, c, to);
}

/* The tw socket's own timer: cancel, then expire_entry when it ran out;
 * or the TIME_WAIT functions (fentry): expired, or killed early. */
static void apply_tw_timer(struct agg *a, struct proc_books *p, const struct cs_event *e)
{
	struct cs_tuple *t = hmap_get(&a->tw_by_ptr, &e->tw);
	struct tw_entry *tw = t ? hmap_get(&a->tw, t) : NULL;

	/* The kernel follows only TIME_WAIT whose close it matched to a
	 * timer, and the books hold each of those: said, not dropped. */
	if (!tw) {
		a->tw_timer_strays++;
		return;
	}
	if (e->type == CS_EV_TW_CANCEL) {
		tw->cancelled = 1;
		return;
	}
	if (e->type == CS_EV_TW_KILL) {
		agg_tw_ended(a, t, true);
		return;
	}
	p->total.tw_expired++;
	agg_tw_forget(a, t);
}

void agg_event(struct agg *a, const struct cs_event *e)
{
	struct proc_books *p;

	a->events++;
	a->ev_ns = e->ts_ns;
	if (e->ts_ns > a->now_ns)
		a->now_ns = e->ts_ns;
	if (e->type == CS_EV_OWNER) {
		apply_owner(a, e);
		return;
	}
	if (!e->owner.tgid) {
		a->unknown_events++;
		return;
	}
	if (e->type == CS_EV_FORK) {
		/* Not books yet: a server's child may never touch a socket. */
		p = agg_find_proc(a, e->owner.tgid);
		if (p && p->start_ns == e->owner.start_ns)
			p->ptgid = e->ptgid;
		else
			agg_parent_note(a, e->owner.tgid, e->owner.start_ns, e->ptgid);
		return;
	}
	/* Books per process: a reused pid is another process. */
	p = agg_proc_gen(a, e->owner.tgid, e->owner.start_ns);
	if (!p)
		return;
	fill_ident(p, &e->owner);
	if (e->type == CS_EV_PROC && e->ptgid)
		p->ptgid = e->ptgid;
	else if (!p->ptgid && a->parents.count)
		agg_parent_take(a, p);
	if (e->type == CS_EV_PROC && !p->target) {
		/* A process that matched --comm / --cgroup during the run. */
		p->target = true;
		p->joined_ns = e->ts_ns;
		memcpy(p->comm, e->owner.comm, sizeof(p->comm));
		p->comm[sizeof(p->comm) - 1] = '\0';
		return;
	}
	if (e->type == CS_EV_ACCEPT)
		apply_accept(a, p, e);
	else if (e->type == CS_EV_STATE && (e->flags & CS_F_SUMMARY))
		apply_summary(a, p, e);
	else if (e->type == CS_EV_STATE)
		apply_state(a, p, e, NULL, false);
	else if (e->type == CS_EV_TW_CANCEL || e->type == CS_EV_TW_EXPIRE ||
		 e->type == CS_EV_TW_KILL)
		apply_tw_timer(a, p, e);
	else if (e->type == CS_EV_ADOPT) {
		bool is_new;

		/* Takes the seed into the books by sk; nothing else changes. */
		conn_for(a, e, &is_new);
	}
}

double agg_load_s(const struct agg *a, double min_s, double max_s)
{
	double s;

	if (!a->load_first_ns || a->load_last_ns < a->load_first_ns)
		return max_s;
	s = (a->load_last_ns - a->load_first_ns) / 1e9;
	if (s < min_s)
		s = min_s;
	return s < max_s ? s : max_s;
}
