// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The census's moment in the books (census_cut.h): connections that began
 * or ended while the census was taken, or after it, drained before the
 * reconcile, are counted as the census found them; a real gap still
 * shows. */
#include <string.h>
#include "unit.h"
#include "agg_events.h"
#include "census_cut.h"

/* The census: from ts 2000 to 2100. */
#define CENSUS_BEGIN 2000
#define CENSUS_END 2100

/* An established client connection at sk, local port sport, born at ts
 * (its connect and handshake). */
static void conn_open(struct agg *a, uint64_t sk, uint16_t sport, uint64_t ts)
{
	struct cs_event e;

	e = ev(CS_EV_STATE, sk, CLIENT, CS_OWNER_CONNECT, tup(0, 8080), CS_TCP_CLOSE, CS_TCP_SYN_SENT);
	e.ts_ns = ts;
	agg_event(a, &e);
	e = ev(CS_EV_STATE, sk, CLIENT, CS_OWNER_CONNECT, tup(sport, 8080), CS_TCP_SYN_SENT,
	       CS_TCP_ESTABLISHED);
	e.ts_ns = ts;
	agg_event(a, &e);
}

/* Its end at ts: reset (no TIME_WAIT to judge beside it). */
static void conn_reset(struct agg *a, uint64_t sk, uint16_t sport, uint64_t ts)
{
	struct cs_event e;

	e = ev(CS_EV_STATE, sk, CLIENT, CS_OWNER_CONNECT, tup(sport, 8080), CS_TCP_ESTABLISHED,
	       CS_TCP_CLOSE);
	e.ts_ns = ts;
	e.sk_err = 104;		/* ECONNRESET */
	agg_event(a, &e);
}

static void books_init(struct agg *a, struct inode_map *owners)
{
	agg_init(a, 0);
	inode_map_init(owners);
	agg_proc(a, CLIENT)->target = true;
	/* Four open before the census, each with its file (inode 70 + i). */
	for (int i = 0; i < 4; i++) {
		conn_open(a, 10 + i, 40000 + i, 1000);
		inode_map_put(owners, 70 + i, CLIENT);
	}
}

static void census_of_four(struct sd_sock *socks)
{
	for (int i = 0; i < 4; i++)
		socks[i] = sd(tup(40000 + i, 8080), CS_TCP_ESTABLISHED, 70 + i);
}

/* The demo's gap: one of the census's connections closed after it, its
 * end drained before the reconcile. */
TEST(end_after_the_census_is_live_at_it)
{
	struct agg a;
	struct inode_map owners;
	struct sd_sock socks[4];

	books_init(&a, &owners);
	census_of_four(socks);
	agg_census_begin(&a, CENSUS_BEGIN);
	agg_census_end(&a, CENSUS_END);
	conn_reset(&a, 13, 40003, 2500);
	agg_reconcile(&a, socks, 4, &owners);
	ASSERT_EQ(a.mismatch_last, 0, "ended_after_no_gap");
	/* The next census lacks it: no gap there either. */
	agg_census_begin(&a, 3000);
	agg_census_end(&a, 3100);
	agg_reconcile(&a, socks, 3, &owners);
	ASSERT_EQ(a.mismatch_last, 0, "gone_from_the_next_no_gap");
	inode_map_free(&owners);
	agg_free(&a);
}

/* Closed while the census was taken: in it or not by where its walk was
 * (or whether its fd listing still found the file). Either way no gap. */
TEST(end_inside_the_census_judged_by_it)
{
	struct agg a;
	struct inode_map owners;
	struct sd_sock socks[4];

	books_init(&a, &owners);
	census_of_four(socks);
	agg_census_begin(&a, CENSUS_BEGIN);
	agg_census_end(&a, CENSUS_END);
	conn_reset(&a, 13, 40003, 2050);
	conn_reset(&a, 12, 40002, 2060);
	/* The walk reached 40002 before its end, and 40003 after. */
	socks[2] = socks[3];
	socks[3] = sd(tup(40002, 8080), CS_TCP_ESTABLISHED, 72);
	agg_reconcile(&a, socks, 3, &owners);
	ASSERT_EQ(a.mismatch_last, 0, "walked_before_and_after_no_gap");
	inode_map_free(&owners);
	agg_free(&a);
}

/* The walk saw it with its file; its process closed it before its fd
 * listing: the census's socket, no owner of it found. Its owner is the
 * books' (it ended after the census began), not nobody's. */
TEST(end_inside_the_census_its_file_gone_before_the_listing)
{
	struct agg a;
	struct inode_map owners;
	struct sd_sock socks[4];

	books_init(&a, &owners);
	census_of_four(socks);
	socks[3].inode = 99;		/* no owner found for it */
	agg_census_begin(&a, CENSUS_BEGIN);
	agg_census_end(&a, CENSUS_END);
	conn_reset(&a, 13, 40003, 2500);
	agg_reconcile(&a, socks, 4, &owners);
	ASSERT_EQ(a.mismatch_last, 0, "owned_by_the_books_no_gap");
	ASSERT_EQ(agg_find_proc(&a, CLIENT)->truth.state[CS_TCP_ESTABLISHED], 4, "charged_to_it");
	inode_map_free(&owners);
	agg_free(&a);
}

/* The same, its end not in the books by the reconcile: with socket
 * storage a connection's one record comes at its end, and a client's
 * FIN_WAIT2 waits for its peer to close (50_census_cut under load: a
 * round's 4 closes fell between the walk and the fd listing, a false gap
 * of 4). Still live at the census, and the books' connection. */
TEST(file_gone_before_the_listing_its_end_still_to_come)
{
	struct agg a;
	struct inode_map owners;
	struct sd_sock socks[5];

	books_init(&a, &owners);
	census_of_four(socks);
	socks[3].inode = 99;		/* no owner found for it */
	/* Another process's socket, its owner not read: nobody's. */
	socks[4] = sd(tup(41000, 9090), CS_TCP_ESTABLISHED, 98);
	agg_census_begin(&a, CENSUS_BEGIN);
	agg_census_end(&a, CENSUS_END);
	agg_reconcile(&a, socks, 5, &owners);
	ASSERT_EQ(a.mismatch_last, 0, "end_to_come_no_gap");
	/* 4, not 5: the other process's socket is not the client's. */
	ASSERT_EQ(agg_find_proc(&a, CLIENT)->truth.state[CS_TCP_ESTABLISHED], 4, "charged_to_it");
	/* Its end comes; the next census lacks it: no gap. */
	conn_reset(&a, 13, 40003, 2500);
	agg_census_begin(&a, 3000);
	agg_census_end(&a, 3100);
	agg_reconcile(&a, socks, 3, &owners);
	ASSERT_EQ(a.mismatch_last, 0, "ended_next_no_gap");
	inode_map_free(&owners);
	agg_free(&a);
}

/* Born after the census ended: not in it, not counted against it. Born
 * inside it: counted if it shows it. */
TEST(births_after_or_inside_the_census)
{
	struct agg a;
	struct inode_map owners;
	struct sd_sock socks[6];

	books_init(&a, &owners);
	census_of_four(socks);
	inode_map_put(&owners, 75, CLIENT);
	inode_map_put(&owners, 76, CLIENT);
	agg_census_begin(&a, CENSUS_BEGIN);
	conn_open(&a, 20, 40010, 2030);		/* inside, walked after it */
	conn_open(&a, 21, 40011, 2040);		/* inside, walked before it */
	agg_census_end(&a, CENSUS_END);
	conn_open(&a, 22, 40012, 2500);		/* after */
	socks[4] = sd(tup(40010, 8080), CS_TCP_ESTABLISHED, 75);
	agg_reconcile(&a, socks, 5, &owners);
	ASSERT_EQ(a.mismatch_last, 0, "births_no_gap");
	/* The next census has all three: no gap, nothing left of the cut. */
	socks[5] = sd(tup(40011, 8080), CS_TCP_ESTABLISHED, 76);
	struct sd_sock all[7];

	memcpy(all, socks, sizeof(socks));
	inode_map_put(&owners, 77, CLIENT);
	all[6] = sd(tup(40012, 8080), CS_TCP_ESTABLISHED, 77);
	agg_census_begin(&a, 3000);
	agg_census_end(&a, 3100);
	agg_reconcile(&a, all, 7, &owners);
	ASSERT_EQ(a.mismatch_last, 0, "all_three_next_no_gap");
	inode_map_free(&owners);
	agg_free(&a);
}

/* A TIME_WAIT takeover after the census (17% of a loopback churn's
 * connections take one over): sk 13, live at the census, ends after it,
 * and sk 30 is born at its 4-tuple after the census ended. The census's
 * socket is 13's; the later birth cannot be in the census, so it must not
 * take 13's match (it did: the birth counted 0, the end +1, a false gap
 * of 1). */
TEST(reborn_at_the_tuple_after_the_census)
{
	struct agg a;
	struct inode_map owners;
	struct sd_sock socks[4];

	books_init(&a, &owners);
	census_of_four(socks);
	inode_map_put(&owners, 80, CLIENT);
	agg_census_begin(&a, CENSUS_BEGIN);
	agg_census_end(&a, CENSUS_END);
	conn_reset(&a, 13, 40003, 2500);
	conn_open(&a, 30, 40003, 2600);
	agg_reconcile(&a, socks, 4, &owners);
	ASSERT_EQ(a.mismatch_last, 0, "reborn_after_no_gap");
	/* The next census shows the one born again, with its file. */
	socks[3] = sd(tup(40003, 8080), CS_TCP_ESTABLISHED, 80);
	agg_census_begin(&a, 3000);
	agg_census_end(&a, 3100);
	agg_reconcile(&a, socks, 4, &owners);
	ASSERT_EQ(a.mismatch_last, 0, "reborn_in_the_next_no_gap");
	inode_map_free(&owners);
	agg_free(&a);
}

/* The same, the one born again ended too before the reconcile: by its
 * records, or by one socket-storage record holding its whole life (its
 * books on the stack of apply_summary, never in the connections' table). */
TEST(reborn_after_the_census_and_ended)
{
	for (int whole = 0; whole < 2; whole++) {
		struct agg a;
		struct inode_map owners;
		struct sd_sock socks[4];

		books_init(&a, &owners);
		census_of_four(socks);
		agg_census_begin(&a, CENSUS_BEGIN);
		agg_census_end(&a, CENSUS_END);
		conn_reset(&a, 13, 40003, 2500);
		if (whole) {
			struct cs_event e = ev(CS_EV_STATE, 30, CLIENT, CS_OWNER_CONNECT,
					       tup(40003, 8080), CS_TCP_ESTABLISHED, CS_TCP_CLOSE);

			e.flags |= CS_F_SUMMARY;
			e.sum = CS_SUM_EST;
			e.syn_ns = 2600, e.est_ns = 2610, e.ts_ns = 2700;
			e.cookie = 30;
			e.sk_err = 104;
			agg_event(&a, &e);
			ASSERT_EQ(agg_find_proc(&a, CLIENT)->total.opened, 5, "summary_applied");
		} else {
			conn_open(&a, 30, 40003, 2600);
			conn_reset(&a, 30, 40003, 2700);
		}
		agg_reconcile(&a, socks, 4, &owners);
		ASSERT_EQ(a.mismatch_last, 0, whole ? "whole_record_no_gap" : "records_no_gap");
		inode_map_free(&owners);
		agg_free(&a);
	}
}

/* What the cut does not hide: an end before the census that the census
 * still shows, or a live connection it lacks, is a gap. */
TEST(real_gaps_still_show)
{
	struct agg a;
	struct inode_map owners;
	struct sd_sock socks[4];

	books_init(&a, &owners);
	census_of_four(socks);
	conn_reset(&a, 13, 40003, 1500);	/* before the census */
	agg_census_begin(&a, CENSUS_BEGIN);
	agg_census_end(&a, CENSUS_END);
	agg_reconcile(&a, socks, 4, &owners);
	ASSERT_EQ(a.mismatch_last, 1, "ended_before_shown_is_a_gap");
	/* One ended after the census, which lacks it (a dump that skipped
	 * it): live at the census by the books, a gap. */
	agg_census_begin(&a, 3000);
	agg_census_end(&a, 3100);
	conn_reset(&a, 12, 40002, 3500);
	agg_reconcile(&a, socks, 2, &owners);
	ASSERT_EQ(a.mismatch_last, 1, "ended_after_missing_is_a_gap");
	inode_map_free(&owners);
	agg_free(&a);
}

/* A census that failed (no reconcile) leaves nothing behind: the next
 * one judges only what came after it began. */
TEST(census_dropped_keeps_nothing)
{
	struct agg a;
	struct inode_map owners;
	struct sd_sock socks[4];

	books_init(&a, &owners);
	census_of_four(socks);
	agg_census_begin(&a, CENSUS_BEGIN);
	conn_reset(&a, 13, 40003, 2050);
	agg_census_drop(&a);
	agg_census_begin(&a, 3000);
	agg_census_end(&a, 3100);
	agg_reconcile(&a, socks, 3, &owners);
	ASSERT_EQ(a.mismatch_last, 0, "no_gap");
	ASSERT_EQ(a.cut.n, 0, "nothing_kept");
	inode_map_free(&owners);
	agg_free(&a);
}

UNIT_MAIN()
