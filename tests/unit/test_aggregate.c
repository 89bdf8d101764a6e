// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The books driven by recorded event sequences, as the kernel emits them
 * (orders taken from inet_sock_set_state traces on loopback). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include "unit.h"
#include "agg_events.h"
#include "software.h"
#include "procfs.h"
#include "report_cost.h"

TEST(client_active_close_enters_time_wait)
{
	struct agg a;
	struct proc_books *p;

	agg_init(&a, 0);
	for (int i = 0; i < 10; i++)
		client_conn(&a, 0xffff000000001000ULL + i * 64, 40000 + i);
	p = agg_find_proc(&a, CLIENT);
	ASSERT_TRUE(p != NULL, "client_books");
	ASSERT_EQ(p->total.opened, 10, "opened");
	ASSERT_EQ(p->total.closed, 10, "closed");
	ASSERT_EQ(p->total.tw_entered, 10, "tw_entered");
	ASSERT_EQ(p->total.orphaned, 10, "orphaned");
	ASSERT_EQ(p->live[CS_TCP_ESTABLISHED], 0, "no_live_estab");
	ASSERT_EQ(agg_tw_count(&a, CLIENT), 10, "tw_books");
	ASSERT_EQ(a.conns.count, 0, "conns_gone");
	ASSERT_STREQ(p->comm, "client", "comm_from_event");
	agg_free(&a);
}

/* The same connection in socket-storage mode: two records, its birth at
 * ESTABLISHED and its end at CLOSE, with the times between. The books
 * must count what the five records above give. */
static void client_conn_summary(struct agg *a, uint64_t sk, uint16_t sport, uint64_t t)
{
	struct cs_event e;

	e = ev(CS_EV_STATE, sk, CLIENT, CS_OWNER_CONNECT, tup(sport, 8080), CS_TCP_SYN_SENT,
	       CS_TCP_ESTABLISHED);
	e.flags = CS_F_SUMMARY | CS_F_NEW_OWNER;
	e.syn_ns = t;
	e.est_ns = e.ts_ns = t + 50000;
	e.sum = CS_SUM_EST | CS_SUM_BORN;
	agg_event(a, &e);
	e = ev(CS_EV_STATE, sk, CLIENT, CS_OWNER_CONNECT, tup(sport, 8080), CS_TCP_FIN_WAIT2,
	       CS_TCP_CLOSE);
	e.flags = CS_F_SUMMARY | CS_F_ORPHAN;
	e.syn_ns = t;
	e.est_ns = t + 50000;
	e.fin_ns = t + 2000000;
	e.orphan_ns = t + 2100000;
	e.ts_ns = t + 3000000;
	e.sum = CS_SUM_EST | CS_SUM_BORN | CS_SUM_ACTIVE_CLOSE | CS_SUM_ORPHAN;
	e.sk_shutdown = 3;
	e.io = (struct cs_conn_io){ .bytes_sent = 10, .bytes_recv = 20, .turns = 2 };
	agg_event(a, &e);
}

TEST(summary_records_count_as_transitions)
{
	struct agg a;
	struct proc_books *p;

	agg_init(&a, 0);
	for (int i = 0; i < 10; i++)
		client_conn_summary(&a, 0xffff000000001000ULL + i * 64, 40000 + i, 1000000 * (i + 1));
	p = agg_find_proc(&a, CLIENT);
	ASSERT_TRUE(p != NULL, "client_books");
	ASSERT_EQ(p->total.opened, 10, "opened");
	ASSERT_EQ(p->total.closed, 10, "closed");
	ASSERT_EQ(p->total.tw_entered, 10, "tw_entered");
	ASSERT_EQ(p->total.orphaned, 10, "orphaned");
	ASSERT_EQ(p->total.closed_active, 10, "closed_by_this_side");
	ASSERT_EQ(p->requests, 10, "one_exchange_each");
	ASSERT_EQ(p->live[CS_TCP_ESTABLISHED], 0, "no_live_estab");
	ASSERT_EQ(agg_tw_count(&a, CLIENT), 10, "tw_books");
	ASSERT_EQ(a.conns.count, 0, "conns_gone");
	/* Handshakes of 50 us: all in one log2 bucket of microseconds. */
	ASSERT_EQ(p->handshake_us_hist[5], 10, "handshake_times_from_syn_and_est");
	agg_free(&a);
}

/* A socket whose end record was lost leaves books at its address; the
 * next socket there (another cookie) must not inherit them. */
TEST(summary_new_cookie_does_not_inherit)
{
	struct agg a;
	struct cs_event e;
	struct proc_books *p;

	agg_init(&a, 0);
	for (int i = 0; i < 2; i++) {
		e = ev(CS_EV_STATE, 0x3000, CLIENT, CS_OWNER_CONNECT, tup(41000 + i, 8080),
		       CS_TCP_SYN_SENT, CS_TCP_ESTABLISHED);
		e.flags = CS_F_SUMMARY | CS_F_NEW_OWNER;
		e.cookie = 7 + i;
		e.syn_ns = 1000 + i * 5000;
		e.est_ns = e.ts_ns = 2000 + i * 5000;
		e.sum = CS_SUM_EST | CS_SUM_BORN;
		agg_event(&a, &e);
	}
	p = agg_find_proc(&a, CLIENT);
	ASSERT_EQ(p->total.opened, 2, "both_opened");
	ASSERT_EQ(a.conns_replaced, 1, "replaced_counted");
	ASSERT_EQ(p->live[CS_TCP_ESTABLISHED], 1, "one_live");
	ASSERT_EQ(a.conns.count, 1, "one_conn");
	agg_free(&a);
}

/* A failed connect() sends one record: it still counts as opened. */
TEST(summary_failed_connect_is_opened_once)
{
	struct agg a;
	struct cs_event e;
	struct proc_books *p;

	agg_init(&a, 0);
	e = ev(CS_EV_STATE, 0x1000, CLIENT, CS_OWNER_CONNECT, tup(40000, 9), CS_TCP_SYN_SENT,
	       CS_TCP_CLOSE);
	e.flags = CS_F_SUMMARY | CS_F_NEW_OWNER;
	e.sk_err = ECONNREFUSED;
	e.syn_ns = 500;
	agg_event(&a, &e);
	p = agg_find_proc(&a, CLIENT);
	ASSERT_TRUE(p != NULL, "books");
	ASSERT_EQ(p->total.opened, 1, "opened");
	ASSERT_EQ(p->total.connect_failed, 1, "failed");
	ASSERT_EQ(p->total.closed, 1, "closed");
	ASSERT_EQ(a.conns.count, 0, "gone");
	agg_free(&a);
}

/* A listener's child charged to the listener's owner, then taken by a
 * worker (CS_EV_OWNER): the connection and its accept move; taken by an
 * untraced process (tgid 0): they leave the books. */
TEST(owner_record_moves_the_accept)
{
	struct agg a;
	struct cs_event e;
	struct proc_books *srv, *w;
	const pid_t WORKER = 300;

	agg_init(&a, 0);
	for (int i = 0; i < 2; i++) {
		e = ev(CS_EV_STATE, 0x2000 + i * 64, SERVER, CS_OWNER_LISTENER,
		       tup(8080, 40000 + i), CS_TCP_SYN_RECV, CS_TCP_ESTABLISHED);
		e.flags = CS_F_SUMMARY | CS_F_NEW_OWNER | CS_F_ACCEPTED;
		e.syn_ns = 900;
		e.sum = CS_SUM_EST | CS_SUM_BORN | CS_SUM_PASSIVE | CS_SUM_PROVISIONAL;
		agg_event(&a, &e);
	}
	srv = agg_find_proc(&a, SERVER);
	ASSERT_EQ(srv->total.accepted, 2, "charged_to_the_listener");
	e = ev(CS_EV_OWNER, 0x2000, WORKER, CS_OWNER_ACCEPT, tup(8080, 40000), 0, 0);
	e.flags = CS_F_SUMMARY | CS_F_NEW_OWNER;
	agg_event(&a, &e);
	e = ev(CS_EV_OWNER, 0x2040, 0, 0, tup(8080, 40001), 0, 0);
	e.flags = CS_F_SUMMARY | CS_F_NEW_OWNER;
	agg_event(&a, &e);
	srv = agg_find_proc(&a, SERVER);
	w = agg_find_proc(&a, WORKER);
	ASSERT_TRUE(w != NULL, "worker_books");
	ASSERT_EQ(srv->total.accepted, 0, "listener_keeps_none");
	ASSERT_EQ(w->total.accepted, 1, "worker_accepted");
	ASSERT_EQ(w->live[CS_TCP_ESTABLISHED], 1, "worker_holds_it");
	ASSERT_EQ(srv->live[CS_TCP_ESTABLISHED], 0, "listener_holds_none");
	ASSERT_EQ(a.conns.count, 1, "untraced_one_left_the_books");
	agg_free(&a);
}

/* An accept charged to the listener's owner in one interval and moved to
 * a worker in the next: the listener's row for the later interval is 0,
 * never a wrapped-around 2^64 - 1 (nginx's master showed ACPT
 * 18446744073709551615 in attach's live table, and diff refused the JSON). */
/* The exporter deletes a gone process's books; the total of connection
 * ends over every process (connscope_traced_connections_total) is a
 * counter and must not fall with them (92_exporter saw 6573 -> 6242). */
TEST(dropped_books_keep_the_connection_total)
{
	struct proc_key key;
	struct proc_books *p;
	struct agg a;
	uint64_t before;

	agg_init(&a, 0);
	p = agg_proc(&a, 10);
	p->total.opened = 300, p->total.accepted = 31;
	agg_proc(&a, 11)->total.opened = 5;
	before = cost_connections(&a);
	ASSERT_EQ(before, 336, "sum");
	const struct proc_key *k;

	for (size_t i = 0; hmap_next(&a.procs, &i, (const void **)&k, (void **)&p);)
		if (p->pid == 10)
			key = *k;
	agg_drop_proc(&a, &key);
	ASSERT_TRUE(!agg_find_proc(&a, 10), "dropped");
	ASSERT_EQ(cost_connections(&a), before, "still_counted");
	agg_free(&a);
}

TEST(moved_accept_never_wraps_an_interval)
{
	struct agg a;
	struct cs_event e;
	struct proc_books *srv;
	const pid_t WORKER = 300;

	agg_init(&a, 0);
	a.t0_ns = 0;
	e = ev(CS_EV_STATE, 0x2000, SERVER, CS_OWNER_LISTENER, tup(8080, 40000),
	       CS_TCP_SYN_RECV, CS_TCP_ESTABLISHED);
	e.flags = CS_F_SUMMARY | CS_F_NEW_OWNER | CS_F_ACCEPTED;
	e.syn_ns = 900;
	e.sum = CS_SUM_EST | CS_SUM_BORN | CS_SUM_PASSIVE | CS_SUM_PROVISIONAL;
	agg_event(&a, &e);
	agg_tick(&a, 1000000000ULL);
	e = ev(CS_EV_OWNER, 0x2000, WORKER, CS_OWNER_ACCEPT, tup(8080, 40000), 0, 0);
	e.flags = CS_F_SUMMARY | CS_F_NEW_OWNER;
	agg_event(&a, &e);
	agg_tick(&a, 2000000000ULL);
	srv = agg_find_proc(&a, SERVER);
	ASSERT_EQ(srv->nrows, 2, "two_rows");
	ASSERT_EQ(srv->rows[0].delta.accepted, 1, "first_interval_shows_it");
	ASSERT_EQ(srv->rows[1].delta.accepted, 0, "second_interval_not_wrapped");
	ASSERT_EQ(srv->total.accepted, 0, "total_moved");
	agg_free(&a);
}

TEST(reset_is_not_time_wait)
{
	struct agg a;
	struct cs_event e;
	struct proc_books *p;

	agg_init(&a, 0);
	e = ev(CS_EV_STATE, 1, CLIENT, CS_OWNER_CONNECT, tup(0, 80), CS_TCP_CLOSE, CS_TCP_SYN_SENT);
	agg_event(&a, &e);
	e = ev(CS_EV_STATE, 1, CLIENT, CS_OWNER_CONNECT, tup(5000, 80), CS_TCP_SYN_SENT, CS_TCP_ESTABLISHED);
	agg_event(&a, &e);
	e = ev(CS_EV_STATE, 1, CLIENT, CS_OWNER_CONNECT, tup(5000, 80), CS_TCP_ESTABLISHED, CS_TCP_FIN_WAIT1);
	agg_event(&a, &e);
	e = ev(CS_EV_STATE, 1, CLIENT, CS_OWNER_CONNECT, tup(5000, 80), CS_TCP_FIN_WAIT1, CS_TCP_FIN_WAIT2);
	agg_event(&a, &e);
	e = ev(CS_EV_STATE, 1, CLIENT, CS_OWNER_CONNECT, tup(5000, 80), CS_TCP_FIN_WAIT2, CS_TCP_CLOSE);
	e.sk_err = ECONNRESET;
	agg_event(&a, &e);
	/* refused */
	e = ev(CS_EV_STATE, 2, CLIENT, CS_OWNER_CONNECT, tup(0, 81), CS_TCP_CLOSE, CS_TCP_SYN_SENT);
	agg_event(&a, &e);
	e = ev(CS_EV_STATE, 2, CLIENT, CS_OWNER_CONNECT, tup(0, 81), CS_TCP_SYN_SENT, CS_TCP_CLOSE);
	e.sk_err = ECONNREFUSED;
	agg_event(&a, &e);
	p = agg_find_proc(&a, CLIENT);
	ASSERT_EQ(p->total.opened, 2, "opened");
	ASSERT_EQ(p->total.closed, 2, "closed");
	ASSERT_EQ(p->total.resets, 1, "resets");
	ASSERT_EQ(p->total.connect_failed, 1, "connect_failed");
	ASSERT_EQ(p->total.tw_entered, 0, "no_tw");
	ASSERT_EQ(p->live[CS_TCP_SYN_SENT], 0, "no_live_syn_sent");
	agg_free(&a);
}

/* Listener child charged to the listener's owner, then accept() by
 * another process moves it (pre-fork servers). */
TEST(accept_moves_ownership)
{
	struct agg a;
	struct cs_event e;
	struct proc_books *srv, *worker;
	const pid_t WORKER = 300;

	agg_init(&a, 0);
	e = ev(CS_EV_STATE, 10, SERVER, CS_OWNER_LISTEN, tup(8080, 0), CS_TCP_CLOSE, CS_TCP_LISTEN);
	agg_event(&a, &e);
	e = ev(CS_EV_STATE, 11, SERVER, CS_OWNER_LISTENER, tup(8080, 40000), CS_TCP_LISTEN, CS_TCP_SYN_RECV);
	agg_event(&a, &e);
	e = ev(CS_EV_STATE, 11, SERVER, CS_OWNER_LISTENER, tup(8080, 40000), CS_TCP_SYN_RECV, CS_TCP_ESTABLISHED);
	agg_event(&a, &e);
	srv = agg_find_proc(&a, SERVER);
	ASSERT_EQ(srv->live[CS_TCP_LISTEN], 1, "listen");
	ASSERT_EQ(srv->live[CS_TCP_ESTABLISHED], 1, "provisional_estab");
	ASSERT_EQ(srv->live[CS_TCP_SYN_RECV], 0, "syn_recv_passed");
	e = ev(CS_EV_ACCEPT, 11, WORKER, CS_OWNER_ACCEPT, tup(8080, 40000), CS_TCP_ESTABLISHED, CS_TCP_ESTABLISHED);
	agg_event(&a, &e);
	worker = agg_find_proc(&a, WORKER);
	srv = agg_find_proc(&a, SERVER);
	ASSERT_EQ(worker->total.accepted, 1, "worker_accepted");
	ASSERT_EQ(worker->live[CS_TCP_ESTABLISHED], 1, "worker_estab");
	ASSERT_EQ(srv->live[CS_TCP_ESTABLISHED], 0, "moved_from_listener");
	ASSERT_EQ(srv->total.accepted, 0, "listener_not_accepted");
	e = ev(CS_EV_STATE, 11, WORKER, CS_OWNER_ACCEPT, tup(8080, 40000), CS_TCP_ESTABLISHED, CS_TCP_CLOSE_WAIT);
	agg_event(&a, &e);
	e = ev(CS_EV_STATE, 11, WORKER, CS_OWNER_ACCEPT, tup(8080, 40000), CS_TCP_CLOSE_WAIT, CS_TCP_LAST_ACK);
	agg_event(&a, &e);
	e = ev(CS_EV_STATE, 11, WORKER, CS_OWNER_ACCEPT, tup(8080, 40000), CS_TCP_LAST_ACK, CS_TCP_CLOSE);
	agg_event(&a, &e);
	worker = agg_find_proc(&a, WORKER);
	ASSERT_EQ(worker->total.closed, 1, "worker_closed");
	ASSERT_EQ(worker->total.tw_entered, 0, "passive_close_no_tw");
	ASSERT_EQ(worker->live[CS_TCP_LAST_ACK], 0, "no_live_last_ack");
	agg_free(&a);
}

TEST(seeded_socket_followed_to_its_end)
{
	struct agg a;
	struct cs_event e;
	struct sd_sock s = sd(tup(45000, 8080), CS_TCP_ESTABLISHED, 55);
	struct proc_books *p;

	agg_init(&a, 0);
	agg_seed(&a, CLIENT, &s);
	p = agg_find_proc(&a, CLIENT);
	ASSERT_EQ(p->seeded, 1, "seeded");
	ASSERT_EQ(p->live[CS_TCP_ESTABLISHED], 1, "seed_live");
	e = ev(CS_EV_STATE, 9, CLIENT, CS_OWNER_SEED, tup(45000, 8080), CS_TCP_ESTABLISHED, CS_TCP_FIN_WAIT1);
	agg_event(&a, &e);
	e = ev(CS_EV_STATE, 9, CLIENT, CS_OWNER_SEED, tup(45000, 8080), CS_TCP_FIN_WAIT1, CS_TCP_FIN_WAIT2);
	agg_event(&a, &e);
	e = ev(CS_EV_STATE, 9, CLIENT, CS_OWNER_SEED, tup(45000, 8080), CS_TCP_FIN_WAIT2, CS_TCP_CLOSE);
	agg_event(&a, &e);
	p = agg_find_proc(&a, CLIENT);
	ASSERT_EQ(p->live[CS_TCP_ESTABLISHED], 0, "seed_moved_on");
	ASSERT_EQ(p->live[CS_TCP_FIN_WAIT1], 0, "no_fin_wait1");
	ASSERT_EQ(p->total.opened, 0, "not_opened_by_us");
	ASSERT_EQ(p->total.closed, 1, "closed");
	ASSERT_EQ(p->total.tw_entered, 1, "tw");
	ASSERT_EQ(a.seeds.count, 0, "seed_consumed");
	agg_free(&a);
}

/* Held at the start, closed by its process and still closing when the
 * census comes (FIN_WAIT1, LAST_ACK: no file, no record yet): the census
 * charges it to the seed's process, whose books count it live. Before, a
 * file-less socket was looked for only among the connections the records
 * made, so it was unattributed and the books disagreed by 1 for each. */
TEST(seeded_orphan_charged_to_its_owner_by_the_census)
{
	struct agg a;
	struct sd_sock s = sd(tup(45000, 8080), CS_TCP_ESTABLISHED, 55);
	struct inode_map owners;
	struct proc_books *p;

	agg_init(&a, 0);
	inode_map_init(&owners);
	agg_seed(&a, CLIENT, &s);
	p = agg_find_proc(&a, CLIENT);
	p->target = true;
	s.state = CS_TCP_FIN_WAIT1;
	s.inode = 0;
	agg_reconcile(&a, &s, 1, &owners);
	p = agg_find_proc(&a, CLIENT);
	ASSERT_EQ(p->truth.state[CS_TCP_FIN_WAIT1], 1, "charged_to_owner");
	ASSERT_EQ(p->truth.orphan, 1, "orphan_counted");
	ASSERT_EQ(a.unattributed.state[CS_TCP_FIN_WAIT1], 0, "not_unattributed");
	ASSERT_EQ(a.mismatch_last, 0, "books_agree");
	inode_map_free(&owners);
	agg_free(&a);
}

TEST(time_wait_reuse_counted)
{
	struct agg a;
	struct cs_event e;

	agg_init(&a, 0);
	client_conn(&a, 1, 40001);
	/* tcp_tw_reuse: a new connect takes the same 4-tuple over. */
	e = ev(CS_EV_STATE, 2, CLIENT, CS_OWNER_CONNECT, tup(0, 8080), CS_TCP_CLOSE, CS_TCP_SYN_SENT);
	agg_event(&a, &e);
	e = ev(CS_EV_STATE, 2, CLIENT, CS_OWNER_CONNECT, tup(40001, 8080), CS_TCP_SYN_SENT, CS_TCP_ESTABLISHED);
	agg_event(&a, &e);
	ASSERT_EQ(a.tw_reused, 1, "reused");
	ASSERT_EQ(agg_tw_count(&a, CLIENT), 0, "tw_gone");
	agg_free(&a);
}

TEST(ticks_record_interval_deltas)
{
	struct agg a;
	struct proc_books *p;

	agg_init(&a, 1000000000ULL);
	client_conn(&a, 1, 40001);
	client_conn(&a, 2, 40002);
	agg_tick(&a, 2000000000ULL);
	client_conn(&a, 3, 40003);
	agg_tick(&a, 3000000000ULL);
	agg_tick(&a, 4000000000ULL);
	p = agg_find_proc(&a, CLIENT);
	ASSERT_EQ(p->nrows, 3, "rows");
	ASSERT_EQ(p->rows[0].delta.opened, 2, "first");
	ASSERT_EQ(p->rows[1].delta.opened, 1, "second");
	ASSERT_EQ(p->rows[2].delta.opened, 0, "third");
	ASSERT_EQ(p->rows[1].t_ns, 2000000000ULL, "t_relative");
	agg_free(&a);
}

TEST(unknown_owner_events_counted)
{
	struct agg a;
	struct cs_event e = ev(CS_EV_STATE, 1, 0, 0, tup(1, 2), CS_TCP_ESTABLISHED, CS_TCP_CLOSE_WAIT);

	agg_init(&a, 0);
	agg_event(&a, &e);
	ASSERT_EQ(a.unknown_events, 1, "unknown");
	ASSERT_EQ(a.procs.count, 0, "no_books");
	agg_free(&a);
}

TEST(hashmap_survives_churn)
{
	struct hmap m;
	uint64_t *v;

	hmap_init(&m, sizeof(uint64_t), sizeof(uint64_t));
	for (uint64_t round = 0; round < 4; round++) {
		for (uint64_t k = 0; k < 20000; k++) {
			uint64_t key = (k << 12) ^ round;

			v = hmap_upsert(&m, &key, NULL);
			ASSERT_TRUE(v != NULL, "upsert");
			*v = key + 1;
		}
		for (uint64_t k = 0; k < 20000; k += 2) {
			uint64_t key = (k << 12) ^ round;

			ASSERT_TRUE(hmap_del(&m, &key), "del");
		}
		for (uint64_t k = 1; k < 20000; k += 2) {
			uint64_t key = (k << 12) ^ round;

			v = hmap_get(&m, &key);
			ASSERT_TRUE(v && *v == key + 1, "survivor");
			hmap_del(&m, &key);
		}
		ASSERT_EQ(m.count, 0, "empty");
	}
	hmap_free(&m);
}

/* A pid reused by another process: books per (pid, start time). Events of
 * the first process that come late still go to its own books. */
TEST(reused_pid_gets_books_of_its_own)
{
	struct agg a;
	struct cs_event e;
	struct proc_books *p;
	size_t rows = 0;

	agg_init(&a, 0);
	e = ev(CS_EV_STATE, 1, CLIENT, CS_OWNER_CONNECT, tup(0, 8080), CS_TCP_CLOSE, CS_TCP_SYN_SENT);
	e.owner.start_ns = 5 * CS_TICK_NS;
	agg_event(&a, &e);
	e = ev(CS_EV_STATE, 2, CLIENT, CS_OWNER_CONNECT, tup(0, 8080), CS_TCP_CLOSE, CS_TCP_SYN_SENT);
	e.owner.start_ns = 9 * CS_TICK_NS;
	agg_event(&a, &e);
	agg_event(&a, &e);	/* no third process for the same start */
	e = ev(CS_EV_STATE, 3, CLIENT, CS_OWNER_CONNECT, tup(0, 8080), CS_TCP_CLOSE, CS_TCP_SYN_SENT);
	e.owner.start_ns = 5 * CS_TICK_NS;	/* the first one's, late */
	agg_event(&a, &e);
	for (size_t i = 0; hmap_next(&a.procs, &i, NULL, (void **)&p);) {
		rows++;
		if (p->start_ns == 5 * CS_TICK_NS) {
			ASSERT_EQ(p->total.opened, 2, "first_process_opened");
			ASSERT_EQ(p->exited, true, "first_process_exited");
		} else {
			ASSERT_EQ(p->total.opened, 2, "second_process_opened");
			ASSERT_EQ(p->exited, false, "second_process_alive");
		}
	}
	ASSERT_EQ(rows, 2, "two_rows");
	ASSERT_EQ(agg_find_proc(&a, CLIENT)->start_ns, 9 * CS_TICK_NS, "latest_is_found");
	agg_free(&a);
}

/* Socket-storage mode sends a connection's end alone when it ends within
 * an interval. When the birth pass and its CLOSE race, the end record may
 * say BORN and the birth arrive after it: the books count the connection
 * once and keep no live connection for the late birth. */
TEST(summary_end_alone_and_late_birth)
{
	struct agg a;
	struct cs_event e;
	struct proc_books *p;

	agg_init(&a, 0);
	/* The end alone, never born: everything from it. */
	e = ev(CS_EV_STATE, 0x5000, CLIENT, CS_OWNER_CONNECT, tup(42000, 8080),
	       CS_TCP_FIN_WAIT2, CS_TCP_CLOSE);
	e.flags = CS_F_SUMMARY | CS_F_ORPHAN;
	e.cookie = 11;
	e.syn_ns = 1000;
	e.est_ns = 2000;
	e.fin_ns = 3000;
	e.orphan_ns = 3500;
	e.ts_ns = 4000;
	e.sum = CS_SUM_EST | CS_SUM_ACTIVE_CLOSE | CS_SUM_ORPHAN;
	e.sk_shutdown = 3;
	agg_event(&a, &e);
	/* Another: its end says BORN, its birth comes after. */
	e.sk = 0x6000;
	e.cookie = 12;
	e.tuple = tup(42001, 8080);
	e.sum |= CS_SUM_BORN;
	agg_event(&a, &e);
	e = ev(CS_EV_STATE, 0x6000, CLIENT, CS_OWNER_CONNECT, tup(42001, 8080),
	       CS_TCP_SYN_SENT, CS_TCP_ESTABLISHED);
	e.flags = CS_F_SUMMARY;
	e.cookie = 12;
	e.syn_ns = 1000;
	e.est_ns = e.ts_ns = 2000;
	e.sum = CS_SUM_EST;
	agg_event(&a, &e);
	p = agg_find_proc(&a, CLIENT);
	ASSERT_EQ(p->total.opened, 2, "each_opened_once");
	ASSERT_EQ(p->total.closed, 2, "each_closed");
	ASSERT_EQ(p->total.tw_entered, 2, "each_time_wait");
	ASSERT_EQ(p->total.orphaned, 2, "each_orphaned");
	ASSERT_EQ(p->live[CS_TCP_ESTABLISHED], 0, "no_live_estab");
	ASSERT_EQ(a.conns.count, 0, "no_conn_left");
	ASSERT_EQ(a.births_late, 1, "late_birth_counted");
	ASSERT_EQ(a.births_pending.count, 0, "pending_cleared");
	agg_free(&a);
}

/* An orphan's time is kept apart from its connection (agg.orphans, #23
 * item 7): the time from orphaned to closed lands in the bucket it did
 * when it was a field, and the note leaves with the connection, by its
 * close or when another socket's record finds it at its address. */
static void orphan_conn(struct agg *a, uint64_t sk, uint16_t sport, uint64_t orphan_ns,
			uint64_t close_ns)
{
	struct cs_event e;

	e = ev(CS_EV_STATE, sk, CLIENT, CS_OWNER_CONNECT, tup(sport, 8080), CS_TCP_CLOSE,
	       CS_TCP_SYN_SENT);
	e.ts_ns = orphan_ns - 2000000;
	agg_event(a, &e);
	e = ev(CS_EV_STATE, sk, CLIENT, CS_OWNER_CONNECT, tup(sport, 8080), CS_TCP_SYN_SENT,
	       CS_TCP_ESTABLISHED);
	e.ts_ns = orphan_ns - 1500000;
	agg_event(a, &e);
	e = ev(CS_EV_STATE, sk, CLIENT, CS_OWNER_CONNECT, tup(sport, 8080), CS_TCP_ESTABLISHED,
	       CS_TCP_FIN_WAIT1);
	e.ts_ns = orphan_ns - 1000000;
	agg_event(a, &e);
	e = ev(CS_EV_STATE, sk, CLIENT, CS_OWNER_CONNECT, tup(sport, 8080), CS_TCP_FIN_WAIT1,
	       CS_TCP_FIN_WAIT2);
	e.flags = CS_F_ORPHAN;
	e.ts_ns = orphan_ns;
	agg_event(a, &e);
	if (!close_ns)
		return;
	e = ev(CS_EV_STATE, sk, CLIENT, CS_OWNER_CONNECT, tup(sport, 8080), CS_TCP_FIN_WAIT2,
	       CS_TCP_CLOSE);
	e.flags = CS_F_ORPHAN;
	e.ts_ns = close_ns;
	agg_event(a, &e);
}

TEST(orphan_time_kept_apart_and_dropped_with_its_connection)
{
	struct agg a;
	struct cs_event e;
	struct proc_books *p;
	struct conn *c;

	agg_init(&a, 0);
	orphan_conn(&a, 0x7000, 43000, 10000000, 10000000 + 300000000ULL);	/* 300 ms */
	orphan_conn(&a, 0x7040, 43001, 20000000, 20000000 + 5999999);	/* 5.99 ms */
	p = agg_find_proc(&a, CLIENT);
	ASSERT_TRUE(p != NULL, "client_books");
	ASSERT_EQ(p->total.orphaned, 2, "orphaned");
	ASSERT_EQ(p->orphan_ended, 2, "orphans_ended");
	ASSERT_EQ(p->orphan_ms_hist[8], 1, "300_ms_in_bucket_256");
	ASSERT_EQ(p->orphan_ms_hist[2], 1, "5_ms_in_bucket_4");
	ASSERT_EQ(a.orphans.count, 0, "closed_orphans_leave_no_note");
	/* Still orphaned: its note is there and says when. */
	orphan_conn(&a, 0x7080, 43002, 30000000, 0);
	ASSERT_EQ(a.orphans.count, 1, "open_orphan_noted");
	ASSERT_EQ(agg_orphan_since(&a, 0x7080), 30000000, "noted_when_orphaned");
	ASSERT_EQ(agg_orphan_since(&a, 0x7000), 0, "closed_one_not_noted");
	/* Its end lost: another socket's record at its address (another
	 * cookie) drops its books, and its note with them. */
	e = ev(CS_EV_STATE, 0x7080, CLIENT, CS_OWNER_CONNECT, tup(43003, 8080), CS_TCP_SYN_SENT,
	       CS_TCP_ESTABLISHED);
	e.flags = CS_F_SUMMARY | CS_F_NEW_OWNER;
	e.cookie = 99;
	e.syn_ns = 40000000;
	e.est_ns = e.ts_ns = 40050000;
	e.sum = CS_SUM_EST | CS_SUM_BORN;
	c = hmap_get(&a.conns, &e.sk);
	ASSERT_TRUE(c != NULL, "orphan_still_in_books");
	c->cookie = 98;	/* as if its books came from socket storage */
	agg_event(&a, &e);
	ASSERT_EQ(a.conns_replaced, 1, "stale_books_replaced");
	ASSERT_EQ(a.orphans.count, 0, "its_note_gone_with_it");
	ASSERT_EQ(agg_orphan_since(&a, 0x7080), 0, "the_new_socket_not_orphaned");
	/* Socket-storage mode: orphaned 0.9 ms before its end, told by the
	 * end record itself; no note made for it. */
	client_conn_summary(&a, 0x9000, 44000, 50000000);
	p = agg_find_proc(&a, CLIENT);
	ASSERT_EQ(p->orphan_ms_hist[0], 1, "0.9_ms_in_bucket_0");
	ASSERT_EQ(p->orphan_ended, 3, "three_orphans_ended");
	ASSERT_EQ(a.orphans.count, 0, "no_note_left");
	agg_free(&a);
}

/* A wrapper COMMAND of `connscope run` (ip netns exec, env, nice) execs
 * into the program that connects: its events carry the group leader's
 * comm, the new one. A target whose software is not known takes it and
 * is probed again; one whose software is known keeps its name. Before,
 * the first name stayed, and when the program ended before the next
 * interval (97_apache under `run -- ip netns exec NS ab`, 1 CI run) the
 * finding was on "ip" with no client fix. */
TEST(a_wrapper_takes_the_name_it_execs_into)
{
	struct proc_books *p;
	struct agg a;

	agg_init(&a, 0);
	p = agg_proc(&a, CLIENT);
	p->target = true;
	strcpy(p->comm, "ip");
	p->software_probed = true;	/* probed at the gate: unknown */
	client_conn(&a, 1, 40001);
	p = agg_find_proc(&a, CLIENT);
	ASSERT_STREQ(p->comm, "client", "renamed_by_its_events");
	ASSERT_TRUE(!p->software_probed, "probed_again");
	p->software = SW_NGINX;
	p->software_probed = true;
	strcpy(p->comm, "nginx");
	client_conn(&a, 2, 40002);
	ASSERT_STREQ(p->comm, "nginx", "known_software_keeps_its_name");
	agg_free(&a);
}

UNIT_MAIN()
