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
#include "tcp_books_internal.h"
#include "census_cut.h"
#include "failbooks.h"
#include "reuse.h"
#include "software.h"

/* Every traced socket has one: a byte more is 1 MiB more at 1M sockets. */
_Static_assert(sizeof(struct conn) == 72, "struct conn: 72 bytes (tcp_books_types.h)");
_Static_assert(sizeof(struct tw_entry) == 72, "struct tw_entry: 72 bytes (tcp_books_types.h)");

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
	hmap_init(&a->accepting, sizeof(uint64_t), sizeof(struct accept_wait));
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
	free(a->tw_ports);
	a->tw_ports = NULL;
	hmap_free(&a->births_pending);
	hmap_free(&a->accepting);
	hmap_free(&a->listen_addrs);
	hmap_free(&a->parents);
	skb_free(&a->skb);
	cut_free(&a->cut);
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
		enum listen_at at = listen_at_for(a, &t);

		c->listen_any = at == LISTEN_AT_ANY;
		/* Accepted before the attach, held by another process than
		 * its listener's (an nginx worker; the master listens): its
		 * local port is a listener's, so it is this process's listen
		 * endpoint, not a connection to its peer's port. Every
		 * listener of the snapshot, a target's or not, is noted
		 * before any connection is seeded (agg_seed_listener). */
		if (at != LISTEN_AT_NONE)
			reuse_listen(p, s->sport);
	}
	live_move(p, 0, s->state);
	reuse_conn_seed(a, p, c);
	p->seeded++;
}

/* Noted only: the listener may be no target's (its owner not traced, or
 * a master that alone holds it and hands each connection it accepts to a
 * worker, as Node.js's cluster does), so it has no books here. agg_seed
 * finds a held connection accepted by its listener's address: without
 * this, `attach -p` of such workers booked each connection they held at
 * the start as one opened to its client's ephemeral port ("endpoint
 * 127.0.0.1:43020" rows), and their listen endpoint lacked its requests. */
void agg_seed_listener(struct agg *a, const struct sd_sock *s)
{
	struct cs_tuple t;

	if (s->state != CS_TCP_LISTEN)
		return;
	tuple_from_sd(&t, s);
	listen_addr_note_seen(a, &t);
}

/* An event's owner carries its group leader's comm at that moment. A
 * target not known yet whose events say another name has exec'd (a
 * wrapper COMMAND of `run`: ip netns exec, env, nice): it takes the name
 * of the program that connects, and its software is probed again. One
 * known keeps its name. */
static void fill_ident(struct proc_books *p, const struct cs_owner *o)
{
	/* Every record asks: the same 16 bytes (a name copied from an
	 * earlier record) answer without strncmp's call (#23 item 6). */
	_Static_assert(sizeof(p->comm) == sizeof(o->comm), "comm: the same length");
	if (!p->comm[0] || (p->software == SW_UNKNOWN && o->comm[0] &&
			    memcmp(p->comm, o->comm, sizeof(p->comm)) &&
			    strncmp(p->comm, o->comm, sizeof(p->comm) - 1))) {
		if (p->comm[0])
			p->software_probed = false;
		memcpy(p->comm, o->comm, sizeof(p->comm));
		p->comm[sizeof(p->comm) - 1] = '\0';
	}
	if (!p->start_ns)
		p->start_ns = o->start_ns;
}

uint64_t agg_orphan_since(const struct agg *a, uint64_t sk)
{
	const uint64_t *since = hmap_get(&a->orphans, &sk);

	return since ? *since : 0;
}

static void apply_accept(struct agg *a, struct proc_books *p, const struct cs_event *e)
{
	struct accept_wait w;
	struct conn *c;
	bool is_new;

	/* Already over: its CLOSE came first and said what this record
	 * counts (close_counts), whatever state the hook read (it can read
	 * ESTABLISHED while a reset's CLOSE runs: the kernel stores the
	 * state after the tracepoint). Ended in the accept queue: its CLOSE
	 * was charged to the listener and counted never accepted; accept()
	 * only handed the application a dead socket (socket-storage mode
	 * cannot see that accept, so both modes count it alike), or the
	 * hook's put landed between that CLOSE's look-up and its delete
	 * (review s40 F1's residue). Else accepted, its close counted: reset
	 * after accept() took it off the queue (inet_accept() grafts it
	 * under the sock's lock, a reset waits for release_sock()), or while
	 * the accept hook ran, after it made the accepting process the
	 * owner. A record for another socket at its address (its birth
	 * unseen) is not its. */
	if (a->accepting.count && hmap_take(&a->accepting, &e->sk, &w) &&
	    !memcmp(&w.tuple, &e->tuple, sizeof(w.tuple))) {
		if (!w.counted)
			p->total.accepted++;
		return;
	}
	/* Over, and its CLOSE not in the books: counted where the hook's put
	 * came first (CS_F_ACCEPTED: that CLOSE found it and dropped it). */
	if (e->newstate == CS_TCP_CLOSE) {
		if (e->flags & CS_F_ACCEPTED)
			p->total.accepted++;
		return;
	}
	p->total.accepted++;
	c = conn_for(a, e, &is_new);
	if (!c)
		return;
	c->passive = 1;
	c->accepted = 1;	/* its CLOSE counts no accept of its own (close_counts) */
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

