// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* apply_whole (tcp_books_summary.c) applies an end record that holds a
 * connection's whole life in one step, where the books otherwise unfold
 * it transition by transition. The two must leave the same books: here
 * the same records, every kind of end among them (client and server,
 * accepted or not, established or not, closed first by either side,
 * orphaned before or at the end, resets, failed connects, TIME_WAIT made,
 * not made or in doubt, taken over at its tuple, timer events), go into
 * two books, one with agg.unfold_whole set, and the books are compared
 * whole, byte for byte, table entry by table entry and in their order. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "unit.h"
#include "agg_events.h"

#define MS 1000000ULL
#define T0 (1000 * MS)
#define SEED_PORT 30000	/* the client's connection held at the start */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	/* xorshift64*: the same records on every run. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dULL) >> 32) % n;
}

static void fail_at(const char *what, uint64_t at)
{
	char msg[160];

	snprintf(msg, sizeof(msg), "%s differs after record %llu", what, (unsigned long long)at);
	ASSERT_TRUE(0, msg);
}

/* A table of plain values: the same entries in the same order. */
static void same_table(const struct hmap *x, const struct hmap *y, const char *what, uint64_t at)
{
	if (x->count != y->count || x->entry_size != y->entry_size ||
	    (x->count && memcmp(x->entries, y->entries, x->count * x->entry_size)))
		fail_at(what, at);
}

static void same_heatmap(const struct heatmap *x, const struct heatmap *y, uint64_t at)
{
	struct heatmap hx = *x, hy = *y;

	hx.cells = hy.cells = NULL;
	hx.col_cap = hy.col_cap = 0;
	hx.row_stride = hy.row_stride = 0;
	if (memcmp(&hx, &hy, sizeof(hx)))
		fail_at(x->kind, at);
	for (size_t c = 0; c < x->ncols; c++)
		for (int r = 0; r < x->nrows; r++)
			if (x->cells[c * x->row_stride + r] != y->cells[c * y->row_stride + r])
				fail_at(x->kind, at);
}

static void same_proc(const struct proc_books *x, const struct proc_books *y, uint64_t at)
{
	struct proc_books px = *x, py = *y;

	/* Pointers and the endpoints' hint (a cache of the last one found)
	 * aside; what they point at is compared below. */
	memset(&px.endpoints, 0, sizeof(px.endpoints));
	memset(&py.endpoints, 0, sizeof(py.endpoints));
	px.rows = py.rows = NULL;
	px.ep_hint = py.ep_hint = 0;
	memset(&px.hm_lifetime, 0, sizeof(px.hm_lifetime));
	memset(&py.hm_lifetime, 0, sizeof(py.hm_lifetime));
	memset(&px.hm_rpc, 0, sizeof(px.hm_rpc));
	memset(&py.hm_rpc, 0, sizeof(py.hm_rpc));
	memset(&px.hm_tw, 0, sizeof(px.hm_tw));
	memset(&py.hm_tw, 0, sizeof(py.hm_tw));
	memset(&px.hm_orphan, 0, sizeof(px.hm_orphan));
	memset(&py.hm_orphan, 0, sizeof(py.hm_orphan));
	if (memcmp(&px, &py, sizeof(px)))
		fail_at("proc_books", at);
	if (x->nrows && memcmp(x->rows, y->rows, x->nrows * sizeof(*x->rows)))
		fail_at("interval rows", at);
	same_heatmap(&x->hm_lifetime, &y->hm_lifetime, at);
	same_heatmap(&x->hm_rpc, &y->hm_rpc, at);
	same_heatmap(&x->hm_tw, &y->hm_tw, at);
	same_heatmap(&x->hm_orphan, &y->hm_orphan, at);
	if (x->endpoints.count != y->endpoints.count)
		fail_at("endpoints", at);
	for (size_t i = 0, j = 0;;) {
		const struct endpoint_key *kx, *ky;
		struct endpoint_stats *ex, *ey, sx, sy;

		if (!hmap_next(&x->endpoints, &i, (const void **)&kx, (void **)&ex) ||
		    !hmap_next(&y->endpoints, &j, (const void **)&ky, (void **)&ey))
			break;
		if (memcmp(kx, ky, sizeof(*kx)))
			fail_at("endpoint order", at);
		sx = *ex;
		sy = *ey;
		sx.pend = sy.pend = NULL;
		sx.pend_cap = sy.pend_cap = 0;
		if (memcmp(&sx, &sy, sizeof(sx)))
			fail_at("endpoint_stats", at);
		if (ex->npend && memcmp(ex->pend, ey->pend, ex->npend * sizeof(*ex->pend)))
			fail_at("queued live changes", at);
	}
}

/* agg.tw_ports counts the TIME_WAIT table's entries by local port: a
 * look it answers "none" must find none in the table. */
static void tw_ports_exact(const struct agg *a, uint64_t at)
{
	static uint32_t count[65536];
	const struct cs_tuple *t;

	if (!a->tw_ports)
		return;
	memset(count, 0, sizeof(count));
	for (size_t i = 0; hmap_next(&a->tw, &i, (const void **)&t, NULL);)
		count[t->sport]++;
	if (memcmp(count, a->tw_ports, sizeof(count)))
		fail_at("tw_ports", at);
}

static void same_books(const struct agg *x, const struct agg *y, uint64_t at)
{
	struct agg ax = *x, ay = *y;

	tw_ports_exact(x, at);
	tw_ports_exact(y, at);

	same_table(&x->cur, &y->cur, "cur", at);
	same_table(&x->conns, &y->conns, "conns", at);
	same_table(&x->orphans, &y->orphans, "orphans", at);
	same_table(&x->seeds, &y->seeds, "seeds", at);
	same_table(&x->tw, &y->tw, "tw", at);
	same_table(&x->tw_by_ptr, &y->tw_by_ptr, "tw_by_ptr", at);
	same_table(&x->listen_addrs, &y->listen_addrs, "listen_addrs", at);
	same_table(&x->births_pending, &y->births_pending, "births_pending", at);
	same_table(&x->accepting, &y->accepting, "accepting", at);
	same_table(&x->parents, &y->parents, "parents", at);
	if (x->procs.count != y->procs.count)
		fail_at("procs", at);
	for (size_t i = 0, j = 0;;) {
		const struct proc_key *kx, *ky;
		struct proc_books *px, *py;

		if (!hmap_next(&x->procs, &i, (const void **)&kx, (void **)&px) ||
		    !hmap_next(&y->procs, &j, (const void **)&ky, (void **)&py))
			break;
		if (memcmp(kx, ky, sizeof(*kx)))
			fail_at("procs order", at);
		same_proc(px, py, at);
	}
	/* The rest of struct agg: the scalars, byte for byte. The tables
	 * (compared above), the unfolding's scratch (end_orphan_sk and _ns,
	 * left at the last orphan's), the switch itself and the lookup
	 * caches aside. */
#define AGG_ASIDE(f) do { memset(&ax.f, 0, sizeof(ax.f)); memset(&ay.f, 0, sizeof(ay.f)); } while (0)
	AGG_ASIDE(procs);
	AGG_ASIDE(cur);
	AGG_ASIDE(conns);
	AGG_ASIDE(orphans);
	AGG_ASIDE(seeds);
	AGG_ASIDE(tw);
	AGG_ASIDE(tw_by_ptr);
	AGG_ASIDE(listen_addrs);
	AGG_ASIDE(births_pending);
	AGG_ASIDE(accepting);
	AGG_ASIDE(parents);
	AGG_ASIDE(skb);
	AGG_ASIDE(cut);
	AGG_ASIDE(proc_cache);
	AGG_ASIDE(end_orphan_sk);
	AGG_ASIDE(end_orphan_ns);
	AGG_ASIDE(unfold_whole);
	AGG_ASIDE(unbooked);
	AGG_ASIDE(tw_ports);
	AGG_ASIDE(holder_memo);
#undef AGG_ASIDE
	if (memcmp(&ax, &ay, sizeof(ax)))
		fail_at("struct agg", at);
}

static const int close_from[] = {
	CS_TCP_FIN_WAIT2, CS_TCP_FIN_WAIT2, CS_TCP_LAST_ACK, CS_TCP_LAST_ACK, CS_TCP_CLOSING,
	CS_TCP_ESTABLISHED, CS_TCP_CLOSE_WAIT, CS_TCP_SYN_SENT, CS_TCP_SYN_RECV,
	CS_TCP_FIN_WAIT1, CS_TCP_TIME_WAIT, CS_TCP_LISTEN, CS_TCP_CLOSE,
};

static const uint16_t errs[] = { 0, 0, 0, 0, ECONNRESET, EPIPE, ECONNREFUSED, ETIMEDOUT };

/* One end record, socket-storage mode's: shaped as a churn's (a client
 * closing first into TIME_WAIT, a server orphaned in LAST_ACK) half the
 * time, anything the fields allow the other half. */
static struct cs_event end_record(uint64_t sk, uint64_t ts, bool shaped)
{
	bool passive = rnd(2);
	uint16_t port = 40000 + rnd(64), srv = 8080 + rnd(2);
	struct cs_event e = ev(CS_EV_STATE, sk, passive ? SERVER : CLIENT,
			       passive ? CS_OWNER_LISTENER : CS_OWNER_CONNECT,
			       passive ? tup(srv, port) : tup(port, srv), CS_TCP_FIN_WAIT2,
			       CS_TCP_CLOSE);
	uint64_t syn = ts - 1 - rnd(5) * MS;

	e.ts_ns = ts;
	e.cookie = rnd(8) ? sk : 0;
	e.flags = CS_F_SUMMARY;
	e.syn_ns = syn;
	e.est_ns = syn + 1 + rnd(100) * 1000;
	e.fin_ns = e.est_ns + rnd(3) * MS;
	e.io.bytes_sent = rnd(1000);
	e.io.bytes_recv = rnd(1000);
	e.io.turns = rnd(5);
	e.io.last_us = rnd(4) ? (uint32_t)((e.fin_ns - rnd(2) * MS) / 1000) : 0;
	if (shaped) {
		e.sum = CS_SUM_EST | (passive ? CS_SUM_PASSIVE | CS_SUM_PASSIVE_CLOSE |
					       CS_SUM_ORPHAN : CS_SUM_ACTIVE_CLOSE | CS_SUM_ORPHAN);
		e.oldstate = passive ? CS_TCP_LAST_ACK : CS_TCP_FIN_WAIT2;
		e.orphan_ns = e.fin_ns + 1000;
		e.flags |= CS_F_ORPHAN | (passive ? CS_F_ACCEPTED : 0);
		e.io.acc_us = passive ? (uint32_t)(e.est_ns / 1000 + rnd(50)) : 0;
		e.tw = passive ? 0 : 0xffff000000000000ULL + rnd(256) * 0x100;
		return e;
	}
	e.oldstate = close_from[rnd(sizeof(close_from) / sizeof(close_from[0]))];
	e.sum = rnd(128);
	e.flags |= rnd(256) & ~CS_F_SUMMARY & ~CS_F_QUIC & ~CS_F_NEW_OWNER;
	e.owner.flags = (uint32_t[]){ CS_OWNER_CONNECT, CS_OWNER_LISTENER, CS_OWNER_ACCEPT,
				      CS_OWNER_SEED }[rnd(4)];
	e.sk_err = errs[rnd(sizeof(errs) / sizeof(errs[0]))];
	if (!rnd(6))
		e.syn_ns = 0;
	if (!rnd(6))
		e.est_ns = 0;
	if (!rnd(6))
		e.fin_ns = 0;
	if (!rnd(8))
		e.syn_ns = T0 - MS;	/* before the run's start */
	e.orphan_ns = rnd(3) ? e.fin_ns + rnd(3) * MS : 0;	/* maybe at or past ts */
	e.io.acc_us = rnd(2) ? (uint32_t)((e.est_ns + rnd(3) * MS) / 1000) : 0;
	e.tw = rnd(2) ? 0xffff000000000000ULL + rnd(256) * 0x100 : 0;
	return e;
}

/* n records, shaped or not, into two books (one unfolding every end);
 * with births first for some sockets (their ends are not whole), seeds,
 * listeners, TIME_WAIT timer events and ticks between. */
static void run_both(uint64_t seed, size_t n, bool tw_census, int shaped_in_4)
{
	struct agg x, y;
	uint64_t ts = T0 + MS, sk_next = 0x1000;

	rng_state = seed;
	agg_init(&x, T0);
	agg_init(&y, T0);
	y.unfold_whole = true;
	x.tw_census = y.tw_census = tw_census;
	for (int k = 0; k < 2; k++) {
		struct agg *a = k ? &y : &x;
		struct cs_event l = ev(CS_EV_STATE, 1, SERVER, CS_OWNER_LISTEN, tup(8080, 0),
				       CS_TCP_CLOSE, CS_TCP_LISTEN);
		struct sd_sock s = sd(tup(SEED_PORT, 8081), CS_TCP_ESTABLISHED, 7);

		l.ts_ns = T0;
		agg_event(a, &l);
		agg_seed(a, CLIENT, &s);
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t sk = sk_next++ * 0x800;
		struct cs_event e = end_record(sk, ts += 1 + rnd(200) * 1000,
					       (int)rnd(4) < shaped_in_4);
		struct cs_event pre = e, timer = e;
		bool born = !rnd(8), tick = !rnd(64), tw_event = e.tw && !rnd(4);

		/* Its birth first (from the birth pass): the end then finds
		 * its books. */
		pre.newstate = CS_TCP_ESTABLISHED;
		pre.oldstate = e.sum & CS_SUM_PASSIVE ? CS_TCP_SYN_RECV : CS_TCP_SYN_SENT;
		pre.ts_ns = e.est_ns ? e.est_ns : e.ts_ns;
		pre.flags = CS_F_SUMMARY;
		if (!rnd(16)) {
			/* A seed's first record: its tuple in the seeds. */
			e.owner.flags = CS_OWNER_SEED;
			e.tuple = tup(SEED_PORT, 8081);
		}
		timer.type = rnd(2) ? CS_EV_TW_CANCEL : CS_EV_TW_EXPIRE;
		timer.sk = e.tw;
		timer.oldstate = timer.newstate = CS_TCP_TIME_WAIT;
		for (int k = 0; k < 2; k++) {
			struct agg *a = k ? &y : &x;

			if (born)
				agg_event(a, &pre);
			agg_event(a, &e);
			if (tw_event)
				agg_event(a, &timer);
			if (tick)
				agg_tick(a, ts);
		}
		if (!(i % 16) || i + 1 == n)
			same_books(&x, &y, i);
	}
	agg_free(&x);
	agg_free(&y);
}

TEST(churn_shaped_ends_one_step_and_unfolded_alike)
{
	run_both(1, 4000, false, 4);
	run_both(2, 4000, true, 4);
}

TEST(every_kind_of_end_one_step_and_unfolded_alike)
{
	for (uint64_t seed = 10; seed < 16; seed++)
		run_both(seed, 5000, seed & 1, 1);
}

static void feed_both(struct agg *x, struct agg *y, const struct cs_event *e, uint64_t at)
{
	agg_event(x, e);
	agg_event(y, e);
	same_books(x, y, at);
}

/* A whole record's endpoint is found once (reuse_ep), and found again
 * where its process's endpoints move under it: a server's child taking
 * over the tuple of a TIME_WAIT in doubt that an earlier process of its
 * pid left, whose endpoint (its listener not yet known bound to the
 * wildcard) the takeover's confirm adds to the child's books, past
 * their room. */
TEST(endpoint_found_again_where_the_books_move)
{
	struct cs_tuple t = tup(8080, 40001);
	struct cs_event e;
	struct agg x, y;
	uint64_t ts = T0 + MS;

	agg_init(&x, T0);
	agg_init(&y, T0);
	y.unfold_whole = true;
	/* The earlier process: a child closed first, its TIME_WAIT in doubt. */
	e = ev(CS_EV_STATE, 0x1000, SERVER, CS_OWNER_ACCEPT, t, CS_TCP_FIN_WAIT2, CS_TCP_CLOSE);
	e.owner.start_ns = 100;
	e.flags = CS_F_SUMMARY | CS_F_TW_MAYBE | CS_F_ACCEPTED;
	e.sum = CS_SUM_EST | CS_SUM_PASSIVE | CS_SUM_ACTIVE_CLOSE;
	e.syn_ns = ts;
	e.est_ns = ts + 1000;
	e.fin_ns = ts + 2000;
	e.ts_ns = ts += 3000;
	feed_both(&x, &y, &e, 0);
	/* A wildcard listener on 8080, another process's. */
	e = ev(CS_EV_STATE, 0x2000, 300, CS_OWNER_LISTEN, tup(8080, 0), CS_TCP_CLOSE, CS_TCP_LISTEN);
	memset(e.tuple.saddr, 0, sizeof(e.tuple.saddr));
	e.ts_ns = ts += 1000;
	feed_both(&x, &y, &e, 1);
	/* The pid's next process: three endpoints of its own. */
	for (int k = 0; k < 3; k++) {
		e = ev(CS_EV_STATE, 0x3000 + k * 0x800, SERVER, CS_OWNER_CONNECT,
		       tup(41000 + k, 9001 + k), CS_TCP_LAST_ACK, CS_TCP_CLOSE);
		e.owner.start_ns = 200;
		e.flags = CS_F_SUMMARY;
		e.sum = CS_SUM_EST | CS_SUM_PASSIVE_CLOSE;
		e.syn_ns = ts;
		e.est_ns = ts + 1000;
		e.fin_ns = ts + 2000;
		e.ts_ns = ts += 3000;
		feed_both(&x, &y, &e, 2 + k);
	}
	/* Its child at the TIME_WAIT's tuple: its endpoint the fourth, the
	 * confirmed TIME_WAIT's the fifth. */
	e = ev(CS_EV_STATE, 0x5000, SERVER, CS_OWNER_ACCEPT, t, CS_TCP_LAST_ACK, CS_TCP_CLOSE);
	e.owner.start_ns = 200;
	e.flags = CS_F_SUMMARY | CS_F_ACCEPTED;
	e.sum = CS_SUM_EST | CS_SUM_PASSIVE | CS_SUM_PASSIVE_CLOSE;
	e.syn_ns = ts;
	e.est_ns = ts + 1000;
	e.fin_ns = ts + 2000;
	e.io.turns = 2;
	e.ts_ns = ts += 3000;
	feed_both(&x, &y, &e, 5);
	ASSERT_EQ(agg_find_proc(&x, SERVER)->endpoints.count, 5, "endpoints");
	ASSERT_EQ(agg_find_proc(&x, SERVER)->total.tw_entered, 1, "confirmed");
	agg_free(&x);
	agg_free(&y);
}

TEST(whole_path_taken)
{
	/* The tests above mean something only if one set of books took the
	 * one step: the unfolding leaves its orphan scratch behind it, the
	 * one step has none. */
	for (int unfold = 0; unfold < 2; unfold++) {
		struct agg a;
		struct cs_event e;

		rng_state = 99;
		agg_init(&a, T0);
		a.unfold_whole = unfold;
		e = end_record(0x5000, T0 + 10 * MS, true);
		agg_event(&a, &e);
		ASSERT_EQ(a.conns.count, 0, "no books left");
		ASSERT_EQ(agg_find_proc(&a, e.owner.tgid)->total.closed, 1, "closed");
		ASSERT_EQ(a.end_orphan_sk, unfold ? 0x5000 : 0, "unfolded");
		agg_free(&a);
	}
}

UNIT_MAIN()
