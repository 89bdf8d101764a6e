// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The books' TIME_WAIT against the kernel's dumps: what a reconcile
 * charges, keeps, expires and ends early, the timer's events, namespaces,
 * and the gap between books and kernel. Split from test_aggregate.c. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include "unit.h"
#include "agg_events.h"
#include "procfs.h"

TEST(reconcile_charges_time_wait_and_expires_it)
{
	struct agg a;
	struct inode_map owners;
	struct sd_sock socks[4];
	struct proc_books *p;

	agg_init(&a, 0);
	inode_map_init(&owners);
	agg_proc(&a, CLIENT)->target = true;
	client_conn(&a, 1, 40001);
	client_conn(&a, 2, 40002);
	socks[0] = sd(tup(40001, 8080), CS_TCP_TIME_WAIT, 0);
	socks[1] = sd(tup(40002, 8080), CS_TCP_TIME_WAIT, 0);
	socks[2] = sd(tup(40999, 8080), CS_TCP_TIME_WAIT, 0);	/* before our time */
	socks[3] = sd(tup(41000, 9090), CS_TCP_FIN_WAIT2, 0);	/* an orphan nobody saw */
	agg_reconcile(&a, socks, 4, &owners);
	p = agg_find_proc(&a, CLIENT);
	ASSERT_EQ(p->truth.state[CS_TCP_TIME_WAIT], 2, "tw_charged");
	ASSERT_EQ(a.unattributed.state[CS_TCP_TIME_WAIT], 1, "tw_unattributed");
	ASSERT_EQ(a.unattributed.orphan, 1, "orphan_unattributed");
	ASSERT_EQ(a.mismatch_last, 0, "books_agree");
	/* One expired: gone from the kernel, gone from the books once a
	 * second dump lacks it too (one dump taken during churn can skip
	 * entries: a single absence is no end). */
	agg_reconcile(&a, socks + 1, 1, &owners);
	ASSERT_EQ(agg_tw_count(&a, CLIENT), 2, "one_absence_kept");
	ASSERT_EQ(a.mismatch_last, 1, "kept_one_shows_as_gap");
	agg_reconcile(&a, socks + 1, 1, &owners);
	ASSERT_EQ(agg_tw_count(&a, CLIENT), 1, "tw_expired");
	ASSERT_EQ(p->truth.state[CS_TCP_TIME_WAIT], 1, "tw_truth_after_expiry");
	ASSERT_EQ(p->total.tw_entered, 2, "entered_unchanged");
	inode_map_free(&owners);
	agg_free(&a);
}

TEST(reconcile_counts_gap_between_books_and_kernel)
{
	struct agg a;
	struct inode_map owners;
	struct sd_sock socks[1];
	struct cs_event e;

	agg_init(&a, 0);
	inode_map_init(&owners);
	agg_proc(&a, CLIENT)->target = true;
	e = ev(CS_EV_STATE, 1, CLIENT, CS_OWNER_CONNECT, tup(0, 80), CS_TCP_CLOSE, CS_TCP_SYN_SENT);
	agg_event(&a, &e);
	e = ev(CS_EV_STATE, 1, CLIENT, CS_OWNER_CONNECT, tup(5000, 80), CS_TCP_SYN_SENT, CS_TCP_ESTABLISHED);
	agg_event(&a, &e);
	/* The kernel says two established (one whose events were lost). */
	inode_map_put(&owners, 77, CLIENT);
	inode_map_put(&owners, 78, CLIENT);
	socks[0] = sd(tup(5000, 80), CS_TCP_ESTABLISHED, 77);
	agg_reconcile(&a, socks, 1, &owners);
	ASSERT_EQ(a.mismatch_last, 0, "one_and_one");
	struct sd_sock two[2] = { socks[0], sd(tup(5001, 80), CS_TCP_ESTABLISHED, 78) };
	agg_reconcile(&a, two, 2, &owners);
	ASSERT_EQ(a.mismatch_last, 1, "gap_of_one");
	ASSERT_EQ(a.mismatch_max, 1, "gap_max");
	inode_map_free(&owners);
	agg_free(&a);
}

/* The tw timer's events: cancel + expire = expired; cancel alone and gone
 * from the kernel = ended early; cancel + still there = re-armed. */
TEST(time_wait_timer_tells_expiry_from_early_end)
{
	struct agg a;
	struct inode_map owners;
	struct cs_event e;
	struct proc_books *p;
	struct sd_sock alive[1];
	const uint64_t TW[3] = { 0xa000, 0xb000, 0xc000 };

	agg_init(&a, 0);
	inode_map_init(&owners);
	agg_proc(&a, CLIENT)->target = true;
	for (int i = 0; i < 3; i++) {
		e = ev(CS_EV_STATE, 1 + i, CLIENT, CS_OWNER_CONNECT, tup(40001 + i, 8080), CS_TCP_FIN_WAIT2, CS_TCP_CLOSE);
		e.tw = TW[i];
		agg_event(&a, &e);
		e = ev(CS_EV_TW_CANCEL, TW[i], CLIENT, CS_OWNER_CONNECT, tup(40001 + i, 8080), CS_TCP_TIME_WAIT, CS_TCP_TIME_WAIT);
		e.tw = TW[i];
		agg_event(&a, &e);
	}
	e = ev(CS_EV_TW_EXPIRE, TW[0], CLIENT, CS_OWNER_CONNECT, tup(40001, 8080), CS_TCP_TIME_WAIT, CS_TCP_TIME_WAIT);
	e.tw = TW[0];
	agg_event(&a, &e);
	p = agg_find_proc(&a, CLIENT);
	ASSERT_EQ(p->total.tw_entered, 3, "entered");
	ASSERT_EQ(p->total.tw_expired, 1, "expired");
	ASSERT_EQ(agg_tw_count(&a, CLIENT), 2, "two_left");
	/* The kernel still has the third (re-armed), not the second (killed).
	 * One absence is not an end (a dump taken while sockets come and go
	 * skips some), cancelled or not: the second is. */
	alive[0] = sd(tup(40003, 8080), CS_TCP_TIME_WAIT, 0);
	agg_reconcile(&a, alive, 1, &owners);
	ASSERT_EQ(p->total.tw_killed, 0, "one_absence_is_no_end");
	ASSERT_EQ(agg_tw_count(&a, CLIENT), 2, "kept_after_one_absence");
	agg_reconcile(&a, alive, 1, &owners);
	ASSERT_EQ(p->total.tw_killed, 1, "killed_early");
	ASSERT_EQ(p->truth.state[CS_TCP_TIME_WAIT], 1, "rearmed_alive");
	ASSERT_EQ(a.tw_gone_unknown, 0, "every_end_known");
	ASSERT_EQ(a.tw_by_ptr.count, 1, "ptr_index_follows");
	inode_map_free(&owners);
	agg_free(&a);
}

/* A TIME_WAIT in a namespace the dump did not read (a container whose
 * traced processes are gone) is not absent: its timer ends it. One whose
 * timer was cancelled early goes after two reconciles, as killed. */
TEST(time_wait_of_an_unread_namespace_waits_for_its_timer)
{
	struct agg a;
	struct inode_map owners;
	struct cs_event e;
	struct proc_books *p;
	const uint32_t HOST = 1, OTHER = 2;

	agg_init(&a, 0);
	inode_map_init(&owners);
	agg_proc(&a, CLIENT)->target = true;
	for (int i = 0; i < 2; i++) {
		struct cs_tuple t = tup(40001 + i, 8080);

		t.netns = OTHER;
		e = ev(CS_EV_STATE, 1 + i, CLIENT, CS_OWNER_CONNECT, t, CS_TCP_FIN_WAIT2, CS_TCP_CLOSE);
		e.tw = 0xa000 + i * 0x100;
		agg_event(&a, &e);
	}
	e = ev(CS_EV_TW_CANCEL, 0xa100, CLIENT, CS_OWNER_CONNECT, tup(40002, 8080),
	       CS_TCP_TIME_WAIT, CS_TCP_TIME_WAIT);
	e.tw = 0xa100;
	agg_event(&a, &e);
	agg_set_dumped(&a, &HOST, 1);
	for (int r = 0; r < 3; r++) {
		a.snapshot_ns = 2000 + r;
		agg_reconcile(&a, NULL, 0, &owners);
	}
	p = agg_find_proc(&a, CLIENT);
	ASSERT_EQ(agg_tw_count(&a, CLIENT), 1, "the_uncancelled_one_stays");
	ASSERT_EQ(p->total.tw_killed, 1, "the_cancelled_one_ended_early");
	ASSERT_EQ(a.tw_gone_unknown, 0, "no_end_unseen");
	/* Read again: its absence counts. */
	agg_set_dumped(&a, &OTHER, 1);
	agg_reconcile(&a, NULL, 0, &owners);
	agg_reconcile(&a, NULL, 0, &owners);
	ASSERT_EQ(agg_tw_count(&a, CLIENT), 0, "absent_where_read");
	inode_map_free(&owners);
	agg_free(&a);
}

/* The same 4-tuple in two network namespaces: two connections. */
TEST(same_tuple_two_namespaces)
{
	struct agg a;
	struct cs_event e;
	struct cs_tuple t1 = tup(40001, 8080), t2 = tup(40001, 8080);
	struct inode_map owners;
	struct sd_sock socks[2];

	agg_init(&a, 0);
	inode_map_init(&owners);
	t1.netns = 111;
	t2.netns = 222;
	agg_proc(&a, CLIENT)->target = true;
	e = ev(CS_EV_STATE, 1, CLIENT, CS_OWNER_CONNECT, t1, CS_TCP_FIN_WAIT2, CS_TCP_CLOSE);
	agg_event(&a, &e);
	ASSERT_EQ(agg_tw_count(&a, CLIENT), 1, "tw_in_ns1");
	/* The kernel has that tuple's TIME_WAIT only in the other namespace. */
	socks[0] = sd(t2, CS_TCP_TIME_WAIT, 0);
	socks[0].netns = 222;
	/* A TIME_WAIT ends when two dumps in a row lack it (a dump during
	 * churn can skip entries): two reconciles. */
	agg_reconcile(&a, socks, 1, &owners);
	agg_reconcile(&a, socks, 1, &owners);
	ASSERT_EQ(agg_tw_count(&a, CLIENT), 0, "not_kept_by_another_namespace");
	ASSERT_EQ(a.unattributed.state[CS_TCP_TIME_WAIT], 1, "other_namespace_unattributed");
	inode_map_free(&owners);
	agg_free(&a);
}

/* A TIME_WAIT entered after a dump began may be missing from that dump
 * (the walk was past its bucket): kept until a dump that began after it. */
TEST(reconcile_keeps_time_wait_entered_during_its_dump)
{
	struct agg a;
	struct inode_map owners;
	struct sd_sock none[1];

	agg_init(&a, 0);
	inode_map_init(&owners);
	agg_proc(&a, CLIENT)->target = true;
	client_conn(&a, 1, 40001);			/* entered at ts 1000 */
	a.snapshot_ns = 999;				/* the dump began before it */
	agg_reconcile(&a, none, 0, &owners);
	ASSERT_EQ(agg_tw_count(&a, CLIENT), 1, "kept");
	ASSERT_EQ(a.tw_entered_during_dump, 1, "counted_as_kept");
	ASSERT_EQ(a.tw_gone_unknown, 0, "not_ended");
	a.snapshot_ns = 1001;				/* began after it: missing */
	agg_reconcile(&a, none, 0, &owners);
	/* Gone when two dumps in a row lack it (one can skip entries). */
	agg_reconcile(&a, none, 0, &owners);
	ASSERT_EQ(agg_tw_count(&a, CLIENT), 0, "gone_at_next");
	/* No timer follows it (its close matched none): judged by its age,
	 * gone long before its deadline, so ended early. */
	ASSERT_EQ(agg_find_proc(&a, CLIENT)->total.tw_killed, 1, "ended_early_by_age");
	ASSERT_EQ(a.tw_gone_unknown, 0, "not_an_end_unseen");
	inode_map_free(&owners);
	agg_free(&a);
}

/* Books against kernel while a churn closes connections: a TIME_WAIT
 * entered after the dump began is in the dump or not by where its walk
 * was. Either way the books and the dump agree on it; before, the books
 * counted it always and the demo's run ended "disagree by 1 sockets". */
TEST(time_wait_entered_during_dump_is_no_gap)
{
	struct agg a;
	struct inode_map owners;
	struct sd_sock both[2];

	agg_init(&a, 0);
	inode_map_init(&owners);
	agg_proc(&a, CLIENT)->target = true;
	client_conn(&a, 1, 40001);			/* entered at ts 1000 */
	client_conn(&a, 2, 40002);			/* the same */
	both[0] = sd(tup(40001, 8080), CS_TCP_TIME_WAIT, 0);
	both[1] = sd(tup(40002, 8080), CS_TCP_TIME_WAIT, 0);
	a.snapshot_ns = 999;				/* the dump began before both */
	agg_reconcile(&a, both, 0, &owners);		/* walked past both */
	ASSERT_EQ(a.mismatch_last, 0, "missed_by_the_walk_no_gap");
	agg_reconcile(&a, both, 1, &owners);		/* reached one of them */
	ASSERT_EQ(a.mismatch_last, 0, "one_in_it_no_gap");
	agg_reconcile(&a, both, 2, &owners);
	ASSERT_EQ(a.mismatch_last, 0, "both_in_it_no_gap");
	/* One entered before a dump that lacks it is a gap, as before. */
	a.snapshot_ns = 1001;
	agg_reconcile(&a, both, 1, &owners);
	ASSERT_EQ(a.mismatch_last, 1, "absent_from_a_later_dump_is_a_gap");
	inode_map_free(&owners);
	agg_free(&a);
}

/* The kernel reuses a freed inet_timewait_sock's address: a TIME_WAIT
 * killed early (tcp_tw_reuse, a reset) and a newer one at the same
 * address. The older one's end, found by the reconciles, must not take
 * the newer one's address from the index, or the newer one's expiry is
 * never matched (counted as an end unseen instead of expired). */
TEST(time_wait_address_reused_keeps_the_newer_mapping)
{
	struct agg a;
	struct inode_map owners;
	struct cs_event e;
	struct proc_books *p;
	struct sd_sock alive[1];
	const uint64_t TW = 0xa000;

	agg_init(&a, 0);
	inode_map_init(&owners);
	agg_proc(&a, CLIENT)->target = true;
	/* The first: entered, its timer cancelled (killed), no expiry. */
	e = ev(CS_EV_STATE, 1, CLIENT, CS_OWNER_CONNECT, tup(40001, 8080), CS_TCP_FIN_WAIT2, CS_TCP_CLOSE);
	e.tw = TW;
	agg_event(&a, &e);
	e = ev(CS_EV_TW_CANCEL, TW, CLIENT, CS_OWNER_CONNECT, tup(40001, 8080), CS_TCP_TIME_WAIT, CS_TCP_TIME_WAIT);
	e.tw = TW;
	agg_event(&a, &e);
	/* The second at the same address, still in the kernel. */
	e = ev(CS_EV_STATE, 2, CLIENT, CS_OWNER_CONNECT, tup(40002, 8080), CS_TCP_FIN_WAIT2, CS_TCP_CLOSE);
	e.tw = TW;
	agg_event(&a, &e);
	alive[0] = sd(tup(40002, 8080), CS_TCP_TIME_WAIT, 0);
	agg_reconcile(&a, alive, 1, &owners);
	agg_reconcile(&a, alive, 1, &owners);
	p = agg_find_proc(&a, CLIENT);
	ASSERT_EQ(p->total.tw_killed, 1, "first_killed");
	ASSERT_EQ(a.tw_by_ptr.count, 1, "second_still_indexed");
	/* The second runs its 60 s. */
	e = ev(CS_EV_TW_EXPIRE, TW, CLIENT, CS_OWNER_CONNECT, tup(40002, 8080), CS_TCP_TIME_WAIT, CS_TCP_TIME_WAIT);
	e.tw = TW;
	agg_event(&a, &e);
	ASSERT_EQ(p->total.tw_expired, 1, "second_expired");
	ASSERT_EQ(agg_tw_count(&a, CLIENT), 0, "none_left");
	ASSERT_EQ(a.tw_by_ptr.count, 0, "index_empty");
	inode_map_free(&owners);
	agg_free(&a);
}

UNIT_MAIN()
