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

UNIT_MAIN()
