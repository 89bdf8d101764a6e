// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Accepted means accept() returned it; never accepted means it ended in
 * the accept queue. The books' side of both, in the two record modes,
 * with the orders the kernel gives when a reset and an accept() race. */
#include <errno.h>
#include "unit.h"
#include "agg_events.h"

/* Accepted means accept() returned it. A child reset in the accept queue
 * is never accepted in both record modes: the socket-storage end record
 * (CS_F_NOT_ACCEPTED, no CS_F_ACCEPTED), and the per-transition CLOSE
 * followed by an accept() that hands over the dead socket. */
TEST(child_reset_in_the_queue_is_never_accepted)
{
	struct agg a;
	struct cs_event e;
	struct proc_books *srv;

	agg_init(&a, 0);
	/* Socket storage: its one record, at its end. */
	e = ev(CS_EV_STATE, 0x3000, SERVER, CS_OWNER_LISTENER, tup(8080, 41000),
	       CS_TCP_ESTABLISHED, CS_TCP_CLOSE);
	e.flags = CS_F_SUMMARY | CS_F_NEW_OWNER | CS_F_NOT_ACCEPTED;
	e.sk_err = ECONNRESET;
	e.syn_ns = 900;
	e.est_ns = 950;
	e.sum = CS_SUM_EST | CS_SUM_PASSIVE | CS_SUM_PROVISIONAL;
	agg_event(&a, &e);
	/* Per transition: the same child's life, then accept() takes it dead. */
	e = ev(CS_EV_STATE, 0x3040, SERVER, CS_OWNER_LISTENER, tup(8080, 41001), CS_TCP_LISTEN,
	       CS_TCP_SYN_RECV);
	agg_event(&a, &e);
	e = ev(CS_EV_STATE, 0x3040, SERVER, CS_OWNER_LISTENER, tup(8080, 41001), CS_TCP_SYN_RECV,
	       CS_TCP_ESTABLISHED);
	agg_event(&a, &e);
	e = ev(CS_EV_STATE, 0x3040, SERVER, CS_OWNER_LISTENER, tup(8080, 41001), CS_TCP_ESTABLISHED,
	       CS_TCP_CLOSE);
	e.flags = CS_F_NOT_ACCEPTED;
	e.sk_err = ECONNRESET;
	agg_event(&a, &e);
	e = ev(CS_EV_ACCEPT, 0x3040, SERVER, CS_OWNER_ACCEPT, tup(8080, 41001), CS_TCP_CLOSE,
	       CS_TCP_CLOSE);
	agg_event(&a, &e);
	/* A Fast Open child that died in SYN_RECV completed no handshake. */
	e = ev(CS_EV_STATE, 0x3080, SERVER, CS_OWNER_LISTENER, tup(8080, 41002), CS_TCP_LISTEN,
	       CS_TCP_SYN_RECV);
	agg_event(&a, &e);
	e = ev(CS_EV_STATE, 0x3080, SERVER, CS_OWNER_LISTENER, tup(8080, 41002), CS_TCP_SYN_RECV,
	       CS_TCP_CLOSE);
	e.flags = CS_F_NOT_ACCEPTED;
	agg_event(&a, &e);
	srv = agg_find_proc(&a, SERVER);
	ASSERT_EQ(srv->total.accepted, 0, "accepted");
	ASSERT_EQ(srv->total.never_accepted, 2, "never_accepted");
	ASSERT_EQ(srv->total.closed, 3, "closed");
	ASSERT_EQ(srv->total.resets, 2, "resets");
	ASSERT_EQ(srv->live[CS_TCP_ESTABLISHED], 0, "none_live");
	agg_free(&a);
}

/* One child's life on 127.0.0.1:8080 from PEER_PORT at address SK: the
 * handshake, then its reset's CLOSE (CLOSE_FLAGS) with accept()'s exit
 * before it (ACCEPT_FIRST, seeing it alive) or after (seeing it CLOSEd). */
static void child_reset(struct agg *a, uint64_t sk, uint16_t peer_port, uint32_t close_flags,
			bool accept_first)
{
	struct cs_tuple t = tup(8080, peer_port);
	struct cs_event e;

	e = ev(CS_EV_STATE, sk, SERVER, CS_OWNER_LISTENER, t, CS_TCP_LISTEN, CS_TCP_SYN_RECV);
	agg_event(a, &e);
	e = ev(CS_EV_STATE, sk, SERVER, CS_OWNER_LISTENER, t, CS_TCP_SYN_RECV, CS_TCP_ESTABLISHED);
	agg_event(a, &e);
	if (accept_first) {
		e = ev(CS_EV_ACCEPT, sk, SERVER, CS_OWNER_ACCEPT, t, CS_TCP_ESTABLISHED,
		       CS_TCP_ESTABLISHED);
		agg_event(a, &e);
	}
	e = ev(CS_EV_STATE, sk, SERVER, CS_OWNER_LISTENER, t, CS_TCP_ESTABLISHED, CS_TCP_CLOSE);
	e.flags = close_flags;
	e.sk_err = ECONNRESET;
	agg_event(a, &e);
	if (!accept_first) {
		e = ev(CS_EV_ACCEPT, sk, SERVER, CS_OWNER_ACCEPT, t, CS_TCP_CLOSE, CS_TCP_CLOSE);
		agg_event(a, &e);
	}
}

/* A reset that races accept(): inet_accept() takes the child off the
 * queue and grafts its struct socket under lock_sock(), so a reset comes
 * either before (the child's CLOSE says not accepted: never accepted) or
 * after, processed at release_sock() while accept() has not yet returned.
 * Then the CLOSE is a grafted child still charged to its listener, and
 * accept()'s exit finds it CLOSEd: accept() returned it, so it is
 * accepted (59_identity pt/reset once counted 798 of 800: neither). */
TEST(child_reset_after_accept_took_it_is_accepted)
{
	struct agg a;
	struct cs_event e;
	struct proc_books *srv;

	agg_init(&a, 0);
	child_reset(&a, 0x4000, 42000, CS_F_NOT_ACCEPTED, false);
	child_reset(&a, 0x4040, 42001, 0, false);
	srv = agg_find_proc(&a, SERVER);
	ASSERT_EQ(srv->total.never_accepted, 1, "reset_before_graft_never_accepted");
	ASSERT_EQ(srv->total.accepted, 1, "reset_after_graft_accepted");
	ASSERT_EQ(srv->total.closed, 2, "closed");
	ASSERT_EQ(srv->live[CS_TCP_ESTABLISHED], 0, "none_live");
	ASSERT_EQ(a.conns.count, 0, "no_conn_left");
	/* A grafted child's close whose accept() is never seen (an untraced
	 * process took it) is not remembered for ever. */
	e = ev(CS_EV_STATE, 0x4080, SERVER, CS_OWNER_LISTENER, tup(8080, 42002), CS_TCP_LISTEN,
	       CS_TCP_SYN_RECV);
	agg_event(&a, &e);
	e = ev(CS_EV_STATE, 0x4080, SERVER, CS_OWNER_LISTENER, tup(8080, 42002), CS_TCP_SYN_RECV,
	       CS_TCP_CLOSE);
	agg_event(&a, &e);
	agg_tick(&a, 1000 + 60 * a.bucket_ns);
	ASSERT_EQ(a.accepting.count, 0, "unclaimed_close_pruned");
	agg_free(&a);
}

/* A reset while the accept hook runs (at fexit, before the child is
 * grafted): the hook read it alive, made the accepting process its owner,
 * then read it CLOSEd. Before its put, the CLOSE found the listener's owner
 * and counted it never accepted: the hook's record says CLOSE and adds
 * nothing. After the put, the CLOSE found the accepting owner and counted
 * no accept: the record says CLOSE with CS_F_ACCEPTED and counts it. Its
 * CLOSE record is always first in the ring. Before, the record said
 * ESTABLISHED: counted accepted as well as never accepted in the first
 * order, and in both a live connection that never closed (review F1). */
TEST(reset_while_the_accept_hook_runs_counted_once_and_not_live)
{
	struct cs_tuple t2 = tup(8080, 43001);
	struct agg a;
	struct cs_event e;
	struct proc_books *srv;

	agg_init(&a, 0);
	/* The CLOSE before the hook's put: still the listener's, ungrafted. */
	child_reset(&a, 0x5000, 43000, CS_F_NOT_ACCEPTED, false);
	/* The CLOSE after it: the accepting owner's. */
	e = ev(CS_EV_STATE, 0x5040, SERVER, CS_OWNER_LISTENER, t2, CS_TCP_LISTEN, CS_TCP_SYN_RECV);
	agg_event(&a, &e);
	e = ev(CS_EV_STATE, 0x5040, SERVER, CS_OWNER_LISTENER, t2, CS_TCP_SYN_RECV,
	       CS_TCP_ESTABLISHED);
	agg_event(&a, &e);
	e = ev(CS_EV_STATE, 0x5040, SERVER, CS_OWNER_ACCEPT, t2, CS_TCP_ESTABLISHED, CS_TCP_CLOSE);
	e.sk_err = ECONNRESET;
	agg_event(&a, &e);
	e = ev(CS_EV_ACCEPT, 0x5040, SERVER, CS_OWNER_ACCEPT, t2, CS_TCP_CLOSE, CS_TCP_CLOSE);
	e.flags = CS_F_NEW_OWNER | CS_F_ACCEPTED;
	agg_event(&a, &e);
	srv = agg_find_proc(&a, SERVER);
	ASSERT_EQ(srv->total.never_accepted, 1, "reset_before_the_put_never_accepted");
	ASSERT_EQ(srv->total.accepted, 1, "reset_after_the_put_accepted");
	ASSERT_EQ(srv->total.closed, 2, "closed");
	ASSERT_EQ(srv->live[CS_TCP_ESTABLISHED], 0, "none_live");
	ASSERT_EQ(a.conns.count, 0, "no_conn_left");
	agg_free(&a);
}

/* accept() saw the child alive and its exit came first; the reset's
 * CLOSE, still the listener's, after. A new child at the same address is
 * then reset in the queue and handed over dead: it is never accepted
 * only (59_identity pt/reset counted 802 of 800 while the first close was
 * remembered past its accept). */
TEST(a_close_after_its_accept_is_not_claimed_again)
{
	struct agg a;
	struct proc_books *srv;

	agg_init(&a, 0);
	child_reset(&a, 0x40c0, 42010, 0, true);
	child_reset(&a, 0x40c0, 42011, CS_F_NOT_ACCEPTED, false);
	srv = agg_find_proc(&a, SERVER);
	ASSERT_EQ(srv->total.accepted, 1, "accepted_once");
	ASSERT_EQ(srv->total.never_accepted, 1, "the_second_never_accepted");
	ASSERT_EQ(srv->total.closed, 2, "closed");
	ASSERT_EQ(a.accepting.count, 0, "nothing_claimable_left");
	agg_free(&a);
}

/* The reset's CLOSE and the accept hook race on the owners map in the
 * kernel: the CLOSE looks the owner up, decides, then deletes it; the hook
 * puts the accepting owner, then reads the state again, which the kernel
 * stores only after the CLOSE's program has run. So the hook's record can
 * say ESTABLISHED after the CLOSE's, and its put can land between the
 * CLOSE's look-up and its delete (the CLOSE then counts it never accepted
 * and deletes the hook's owner). Each order below is one connection,
 * counted once: accepted or never accepted, and nothing left live. */
struct race_want {
	uint64_t accepted, never_accepted;
};

/* The child at SK from PEER (LISTEN -> SYN_RECV -> ESTABLISHED, the
 * listener's), then RECS in order. */
static void race(struct agg *a, uint64_t sk, uint16_t peer, const struct cs_event *recs, int n)
{
	struct cs_tuple t = tup(8080, peer);
	struct cs_event e;

	e = ev(CS_EV_STATE, sk, SERVER, CS_OWNER_LISTENER, t, CS_TCP_LISTEN, CS_TCP_SYN_RECV);
	agg_event(a, &e);
	e = ev(CS_EV_STATE, sk, SERVER, CS_OWNER_LISTENER, t, CS_TCP_SYN_RECV, CS_TCP_ESTABLISHED);
	agg_event(a, &e);
	for (int i = 0; i < n; i++) {
		e = recs[i];
		e.sk = sk;
		e.tuple = t;
		agg_event(a, &e);
	}
}

static struct cs_event race_close(uint32_t oflags, uint32_t flags)
{
	struct cs_event e = ev(CS_EV_STATE, 0, SERVER, oflags, tup(0, 0), CS_TCP_ESTABLISHED,
			       CS_TCP_CLOSE);

	e.flags = flags;
	e.sk_err = ECONNRESET;
	return e;
}

static struct cs_event race_accept(int state, uint32_t flags)
{
	struct cs_event e = ev(CS_EV_ACCEPT, 0, SERVER, CS_OWNER_ACCEPT, tup(0, 0), state, state);

	e.flags = CS_F_NEW_OWNER | flags;
	return e;
}

TEST(reset_racing_the_accept_hook_counted_once_in_every_order)
{
	const struct cs_event close_unaccepted = race_close(CS_OWNER_LISTENER, CS_F_NOT_ACCEPTED);
	const struct cs_event close_grafted = race_close(CS_OWNER_LISTENER, 0);
	const struct cs_event close_ours = race_close(CS_OWNER_ACCEPT, 0);
	const struct cs_event acc_alive = race_accept(CS_TCP_ESTABLISHED, 0);
	const struct cs_event acc_dead_ours = race_accept(CS_TCP_CLOSE, CS_F_ACCEPTED);
	const struct {
		const char *name;
		struct cs_event recs[2];
		struct race_want want;
	} cases[] = {
		/* The put between the CLOSE's look-up and its delete; the
		 * hook read the state before the kernel stored CLOSE. */
		{ "put_inside_close_alive_after", { close_unaccepted, acc_alive }, { 0, 1 } },
		{ "put_inside_close_alive_before", { acc_alive, close_unaccepted }, { 1, 0 } },
		/* ... or after: its delete failed, CS_F_ACCEPTED. */
		{ "put_inside_close_dead", { close_unaccepted, acc_dead_ours }, { 0, 1 } },
		/* The put before the CLOSE's look-up, the state read before
		 * the kernel stored CLOSE: the CLOSE counted no accept. */
		{ "put_before_close_alive_after", { close_ours, acc_alive }, { 1, 0 } },
		/* At the accept() exits (the child grafted): the CLOSE left
		 * the accept to the hook, whose record says ESTABLISHED. */
		{ "grafted_close_alive_after", { close_grafted, acc_alive }, { 1, 0 } },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct agg a;
		struct proc_books *srv;
		char what[96];

		agg_init(&a, 0);
		race(&a, 0x6000, 44000, cases[i].recs, 2);
		srv = agg_find_proc(&a, SERVER);
		snprintf(what, sizeof(what), "%s_accepted", cases[i].name);
		ASSERT_EQ(srv->total.accepted, cases[i].want.accepted, what);
		snprintf(what, sizeof(what), "%s_never_accepted", cases[i].name);
		ASSERT_EQ(srv->total.never_accepted, cases[i].want.never_accepted, what);
		snprintf(what, sizeof(what), "%s_closed", cases[i].name);
		ASSERT_EQ(srv->total.closed, 1, what);
		snprintf(what, sizeof(what), "%s_none_live", cases[i].name);
		ASSERT_EQ(srv->live[CS_TCP_ESTABLISHED], 0, what);
		snprintf(what, sizeof(what), "%s_no_conn_left", cases[i].name);
		ASSERT_EQ(a.conns.count, 0, what);
		snprintf(what, sizeof(what), "%s_nothing_claimable_left", cases[i].name);
		ASSERT_EQ(a.accepting.count, 0, what);
		agg_free(&a);
	}
}

/* What a child's CLOSE left for its accept record is that child's alone:
 * another socket later at the same address whose birth the books did not
 * see (a listener we do not trace, a process of ours accepting on it) is
 * accepted and live as any other. */
TEST(a_close_left_for_its_accept_is_not_another_sockets)
{
	struct cs_event e;
	struct agg a;
	struct proc_books *srv;
	const struct cs_event recs[] = { race_close(CS_OWNER_LISTENER, CS_F_NOT_ACCEPTED) };

	agg_init(&a, 0);
	race(&a, 0x6040, 44010, recs, 1);
	e = race_accept(CS_TCP_ESTABLISHED, 0);
	e.sk = 0x6040;
	e.tuple = tup(9090, 44011);
	agg_event(&a, &e);
	srv = agg_find_proc(&a, SERVER);
	ASSERT_EQ(srv->total.never_accepted, 1, "the_first_never_accepted");
	ASSERT_EQ(srv->total.accepted, 1, "the_other_accepted");
	ASSERT_EQ(srv->live[CS_TCP_ESTABLISHED], 1, "the_other_live");
	agg_free(&a);
}

/* N children an interval of a listener whose acceptor has stalled, each
 * at its own address, in interval K (from 1): the handshake, then the
 * CLOSE (CLOSE_FLAGS) of a client that gave up, and no accept record. */
static void children_unaccepted(struct agg *a, int k, int n, uint32_t close_flags)
{
	for (int i = 0; i < n; i++) {
		uint32_t id = (uint32_t)(k * n + i);
		uint64_t sk = 0x1000000 + (uint64_t)id * 0x40;
		struct cs_tuple t = tup(8080, (uint16_t)(1024 + id % 60000));
		uint64_t ts = (uint64_t)(k - 1) * a->bucket_ns + 1000 + (uint64_t)i * 1000;
		struct cs_event e;

		e = ev(CS_EV_STATE, sk, SERVER, CS_OWNER_LISTENER, t, CS_TCP_LISTEN,
		       CS_TCP_SYN_RECV);
		e.ts_ns = ts;
		agg_event(a, &e);
		e = ev(CS_EV_STATE, sk, SERVER, CS_OWNER_LISTENER, t, CS_TCP_SYN_RECV,
		       CS_TCP_ESTABLISHED);
		e.ts_ns = ts + 1;
		agg_event(a, &e);
		e = race_close(CS_OWNER_LISTENER, close_flags);
		e.sk = sk;
		e.tuple = t;
		e.ts_ns = ts + 2;
		agg_event(a, &e);
	}
}

/* What a CLOSE leaves for its accept record does not pile up where no
 * accept record comes: a stalled acceptor or a full backlog (the doctor's
 * listen_backlog case) resets a thousand children an interval in the
 * queue, each counted never accepted by its CLOSE. Their notes are only
 * for an accept record racing the CLOSE (one ring drain), so they go by
 * the next interval; a grafted child's close whose accept record never
 * comes (io_uring's accept at the accept() exits, a lost record) goes at
 * the prune's ten buckets, however many there are (review s41 A1: 28,720
 * notes left after 30 intervals, growing ~936 an interval). */
TEST(notes_for_accepts_that_never_come_stay_bounded)
{
	const int n = 1000, intervals = 30;
	struct agg a;
	struct proc_books *srv;
	struct cs_event e;
	char what[64];

	agg_init(&a, 0);
	for (int k = 1; k <= intervals; k++) {
		children_unaccepted(&a, k, n, CS_F_NOT_ACCEPTED);
		agg_tick(&a, (uint64_t)k * a.bucket_ns);
		snprintf(what, sizeof(what), "never_accepted_notes_bounded_interval_%d", k);
		ASSERT_TRUE(a.accepting.count <= (size_t)(2 * n), what);
	}
	srv = agg_find_proc(&a, SERVER);
	ASSERT_EQ(srv->total.never_accepted, (uint64_t)n * intervals, "never_accepted_exact");
	ASSERT_EQ(srv->total.accepted, 0, "none_accepted");
	ASSERT_EQ(srv->total.closed, (uint64_t)n * intervals, "all_closed");
	ASSERT_EQ(a.conns.count, 0, "no_conn_left");
	agg_free(&a);

	agg_init(&a, 0);
	for (int k = 1; k <= intervals; k++) {
		children_unaccepted(&a, k, n, 0);
		agg_tick(&a, (uint64_t)k * a.bucket_ns);
		snprintf(what, sizeof(what), "grafted_notes_bounded_interval_%d", k);
		ASSERT_TRUE(a.accepting.count <= (size_t)(11 * n), what);
	}
	srv = agg_find_proc(&a, SERVER);
	ASSERT_EQ(srv->total.never_accepted, 0, "grafted_never_accepted");
	ASSERT_EQ(srv->total.closed, (uint64_t)n * intervals, "grafted_all_closed");
	agg_free(&a);

	/* Not too soon: a tick between the CLOSE and its racing accept
	 * record keeps the note (the record is in the next drain). */
	agg_init(&a, 0);
	children_unaccepted(&a, 1, 1, CS_F_NOT_ACCEPTED);
	agg_tick(&a, a.bucket_ns);
	agg_tick(&a, 2 * a.bucket_ns);
	e = race_accept(CS_TCP_ESTABLISHED, 0);
	e.sk = 0x1000000 + 1 * 0x40;
	e.tuple = tup(8080, 1024 + 1);
	e.ts_ns = 3000;
	agg_event(&a, &e);
	srv = agg_find_proc(&a, SERVER);
	ASSERT_EQ(srv->total.never_accepted, 1, "tick_between_never_accepted");
	ASSERT_EQ(srv->total.accepted, 0, "tick_between_not_accepted");
	ASSERT_EQ(srv->live[CS_TCP_ESTABLISHED], 0, "tick_between_none_live");
	ASSERT_EQ(a.accepting.count, 0, "tick_between_nothing_left");
	agg_free(&a);
}

UNIT_MAIN()
