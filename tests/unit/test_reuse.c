// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Reuse accounting driven by recorded events: exchange counts from turns,
 * lifetime and handshake buckets, per-endpoint concurrency, the churn
 * finding. */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include "unit.h"
#include "tcp_books.h"
#include "reuse.h"
#include "report_reuse.h"
#include "report_tw.h"

#define CLIENT 100
#define SERVER 200
#define MS 1000000ULL
#define US 1000ULL

static struct cs_tuple tup(uint16_t sport, uint16_t dport)
{
	struct cs_tuple t = { .family = AF_INET, .sport = sport, .dport = dport };

	t.saddr[0] = t.daddr[0] = 127;
	t.saddr[3] = t.daddr[3] = 1;
	return t;
}

static void ev(struct agg *a, uint8_t type, uint64_t sk, pid_t pid, struct cs_tuple t, int old,
	       int new, uint64_t ts, uint32_t turns)
{
	struct cs_event e = { .type = type, .sk = sk, .tuple = t, .oldstate = old,
			      .newstate = new, .ts_ns = ts };

	e.owner.tgid = pid;
	e.owner.flags = type == CS_EV_ACCEPT ? CS_OWNER_ACCEPT : CS_OWNER_CONNECT;
	e.io.turns = turns;
	agg_event(a, &e);
}

/* connect at t, established 50 us later, closed at t + life with turns. */
static void client_conn(struct agg *a, uint64_t sk, uint16_t sport, uint16_t dport, uint64_t t,
			uint64_t life, uint32_t turns)
{
	ev(a, CS_EV_STATE, sk, CLIENT, tup(0, dport), CS_TCP_CLOSE, CS_TCP_SYN_SENT, t, 0);
	ev(a, CS_EV_STATE, sk, CLIENT, tup(sport, dport), CS_TCP_SYN_SENT, CS_TCP_ESTABLISHED,
	   t + 50 * US, 0);
	ev(a, CS_EV_STATE, sk, CLIENT, tup(sport, dport), CS_TCP_ESTABLISHED, CS_TCP_FIN_WAIT1,
	   t + life - 1, 0);
	ev(a, CS_EV_STATE, sk, CLIENT, tup(sport, dport), CS_TCP_FIN_WAIT1, CS_TCP_FIN_WAIT2,
	   t + life - 1, 0);
	ev(a, CS_EV_STATE, sk, CLIENT, tup(sport, dport), CS_TCP_FIN_WAIT2, CS_TCP_CLOSE,
	   t + life, turns);
}

static struct endpoint_stats *ep(struct proc_books *p, int side, uint16_t port)
{
	struct endpoint_key k = { .family = AF_INET, .side = side, .port = port };

	/* A remote's address, or the listener's bound one (tup()'s 127.0.0.1). */
	k.addr[0] = 127, k.addr[3] = 1;
	return hmap_get(&p->endpoints, &k);
}

TEST(turns_make_requests_and_buckets)
{
	struct agg a;
	struct proc_books *p;
	struct endpoint_stats *es;

	agg_init(&a, 0);
	/* 7 turns (S R S R S R S): 4 requests; 8 ms life; 50 us handshake */
	client_conn(&a, 1, 40001, 8080, 1 * MS, 8 * MS, 7);
	/* 2 turns: 1 request; 1 ms */
	client_conn(&a, 2, 40002, 8080, 20 * MS, 1 * MS, 2);
	/* no data at all: 0 requests */
	client_conn(&a, 3, 40003, 8080, 30 * MS, 300 * US, 0);
	/* Concurrency is applied in time order at a tick (reuse_sweep). */
	agg_tick(&a, 0);
	p = agg_find_proc(&a, CLIENT);
	ASSERT_EQ(p->requests, 5, "requests");
	ASSERT_EQ(p->lifetime_ms_hist[3], 1, "8ms_in_8_15");
	ASSERT_EQ(p->lifetime_ms_hist[0], 2, "1ms_and_0ms_in_0_1");
	ASSERT_EQ(p->rpc_hist[2], 1, "4_requests_bucket_4_7");
	ASSERT_EQ(p->rpc_hist[0], 2, "0_and_1_requests");
	ASSERT_EQ(p->handshake_us_hist[5], 3, "50us_in_32_63");
	es = ep(p, EP_REMOTE, 8080);
	ASSERT_TRUE(es != NULL, "endpoint");
	ASSERT_EQ(es->opened, 3, "opened");
	ASSERT_EQ(es->closed, 3, "closed");
	ASSERT_EQ(es->requests, 5, "ep_requests");
	ASSERT_EQ(es->live, 0, "none_live");
	ASSERT_EQ(es->live_peak, 1, "peak_one");
	ASSERT_EQ(reuse_hist_quantile(p->lifetime_ms_hist, 0.5), 1, "p50_edge");
	ASSERT_EQ(reuse_hist_quantile(p->lifetime_ms_hist, 0.99), 15, "p99_edge");
	agg_tick(&a, 40 * MS);
	ASSERT_STREQ(heatmap_label(&p->hm_lifetime, 3), "8-15 ms", "lifetime_row");
	ASSERT_EQ(heatmap_cell(&p->hm_lifetime, 0, 0), 2, "lifetime_cell");
	ASSERT_STREQ(heatmap_label(&p->hm_rpc, 2), "4-7 req", "rpc_row");
	agg_free(&a);
}

TEST(accepted_side_counts_under_listen_port)
{
	struct agg a;
	struct proc_books *srv;
	struct endpoint_stats *es;
	const pid_t WORKER = 300;

	agg_init(&a, 0);
	ev(&a, CS_EV_STATE, 10, SERVER, tup(8080, 0), CS_TCP_CLOSE, CS_TCP_LISTEN, 1, 0);
	ev(&a, CS_EV_STATE, 11, SERVER, tup(8080, 40000), CS_TCP_LISTEN, CS_TCP_SYN_RECV, 2, 0);
	ev(&a, CS_EV_STATE, 11, SERVER, tup(8080, 40000), CS_TCP_SYN_RECV, CS_TCP_ESTABLISHED, 3, 0);
	ev(&a, CS_EV_ACCEPT, 11, WORKER, tup(8080, 40000), CS_TCP_ESTABLISHED, CS_TCP_ESTABLISHED, 4, 0);
	ev(&a, CS_EV_STATE, 11, WORKER, tup(8080, 40000), CS_TCP_ESTABLISHED, CS_TCP_CLOSE_WAIT, 5 * MS, 0);
	ev(&a, CS_EV_STATE, 11, WORKER, tup(8080, 40000), CS_TCP_CLOSE_WAIT, CS_TCP_LAST_ACK, 5 * MS, 0);
	ev(&a, CS_EV_STATE, 11, WORKER, tup(8080, 40000), CS_TCP_LAST_ACK, CS_TCP_CLOSE, 6 * MS, 4);
	srv = agg_find_proc(&a, SERVER);
	es = ep(srv, EP_LISTEN, 8080);
	ASSERT_TRUE(!es || (es->accepted == 0 && es->live == 0), "moved_off_listener");
	es = ep(agg_find_proc(&a, WORKER), EP_LISTEN, 8080);
	ASSERT_TRUE(es != NULL, "worker_endpoint");
	ASSERT_EQ(es->accepted, 1, "accepted");
	ASSERT_EQ(es->requests, 2, "server_requests");
	ASSERT_EQ(es->live, 0, "closed");
	agg_free(&a);
}

/* Who closed first, per endpoint: a server closes the connection it
 * accepted on its listener first, and the database it connects to closes
 * first on it. The process's totals hold one of each; each endpoint its
 * own (the doctor quotes a listener's closes, not its process's). */
TEST(closes_first_counted_per_endpoint)
{
	struct proc_books *srv;
	struct endpoint_stats *es;
	struct agg a;

	agg_init(&a, 0);
	ev(&a, CS_EV_STATE, 10, SERVER, tup(8080, 0), CS_TCP_CLOSE, CS_TCP_LISTEN, 1, 0);
	ev(&a, CS_EV_STATE, 11, SERVER, tup(8080, 40000), CS_TCP_LISTEN, CS_TCP_SYN_RECV, 2, 0);
	ev(&a, CS_EV_STATE, 11, SERVER, tup(8080, 40000), CS_TCP_SYN_RECV, CS_TCP_ESTABLISHED, 3, 0);
	ev(&a, CS_EV_ACCEPT, 11, SERVER, tup(8080, 40000), CS_TCP_ESTABLISHED, CS_TCP_ESTABLISHED, 4, 0);
	ev(&a, CS_EV_STATE, 11, SERVER, tup(8080, 40000), CS_TCP_ESTABLISHED, CS_TCP_FIN_WAIT1, 5 * MS, 0);
	ev(&a, CS_EV_STATE, 11, SERVER, tup(8080, 40000), CS_TCP_FIN_WAIT1, CS_TCP_FIN_WAIT2, 5 * MS, 0);
	ev(&a, CS_EV_STATE, 11, SERVER, tup(8080, 40000), CS_TCP_FIN_WAIT2, CS_TCP_CLOSE, 6 * MS, 2);
	ev(&a, CS_EV_STATE, 12, SERVER, tup(0, 5432), CS_TCP_CLOSE, CS_TCP_SYN_SENT, 7 * MS, 0);
	ev(&a, CS_EV_STATE, 12, SERVER, tup(41000, 5432), CS_TCP_SYN_SENT, CS_TCP_ESTABLISHED, 8 * MS, 0);
	ev(&a, CS_EV_STATE, 12, SERVER, tup(41000, 5432), CS_TCP_ESTABLISHED, CS_TCP_CLOSE_WAIT, 9 * MS, 0);
	ev(&a, CS_EV_STATE, 12, SERVER, tup(41000, 5432), CS_TCP_CLOSE_WAIT, CS_TCP_LAST_ACK, 9 * MS, 0);
	ev(&a, CS_EV_STATE, 12, SERVER, tup(41000, 5432), CS_TCP_LAST_ACK, CS_TCP_CLOSE, 10 * MS, 2);
	srv = agg_find_proc(&a, SERVER);
	ASSERT_TRUE(srv != NULL, "books");
	ASSERT_EQ(srv->total.closed_active, 1, "process_closed_first");
	ASSERT_EQ(srv->total.closed_passive, 1, "process_peer_closed_first");
	es = ep(srv, EP_LISTEN, 8080);
	ASSERT_TRUE(es != NULL, "listener_endpoint");
	ASSERT_EQ(es->closed_active, 1, "listener_closed_first");
	ASSERT_EQ(es->closed_passive, 0, "listener_peer_closed_none");
	es = ep(srv, EP_REMOTE, 5432);
	ASSERT_TRUE(es != NULL, "database_endpoint");
	ASSERT_EQ(es->closed_active, 0, "database_closed_none_first");
	ASSERT_EQ(es->closed_passive, 1, "database_closed_first");
	agg_free(&a);
}

/* A client that asks the server to close (Connection: close, a Node agent
 * with keepAlive: false) and closes its own end late: each of 8 workers
 * opens its next connection while the last one sits in CLOSE_WAIT (its
 * answer read, the server's FIN in), and closes that one only after the
 * next answer. 8 requests in flight, 16 sockets open: the pool it needs
 * is 8. Per-transition records and socket-storage summaries alike. */
static void lagging_client(struct agg *a, bool summary)
{
	for (int w = 0; w < 8; w++)
		for (int k = 0; k < 4; k++) {
			uint64_t sk = 1000 + w * 10 + k, t = MS + (k * 1000 + w) * US;
			uint16_t sport = 40000 + w * 10 + k;
			struct cs_tuple t0 = tup(0, 8080), t1 = tup(sport, 8080);
			/* Answered with the server's FIN at +0.9 ms (CLOSE_WAIT);
			 * the next connection opens at +1 ms and is answered at
			 * +1.9 ms; this one closes at +1.95 ms, before the one
			 * after opens at +2 ms: two sockets a worker. */
			uint64_t est = t + 50 * US, fin = t + 900 * US, end = t + 1950 * US;

			if (summary) {
				struct cs_event e = { .type = CS_EV_STATE, .sk = sk, .tuple = t1,
						      .oldstate = CS_TCP_LAST_ACK,
						      .newstate = CS_TCP_CLOSE, .ts_ns = end,
						      .flags = CS_F_SUMMARY, .syn_ns = t,
						      .est_ns = est, .fin_ns = fin,
						      .sum = CS_SUM_EST | CS_SUM_PASSIVE_CLOSE,
						      .cookie = sk };

				e.owner.tgid = CLIENT;
				e.owner.flags = CS_OWNER_CONNECT;
				e.io.turns = 2;
				agg_event(a, &e);
				continue;
			}
			ev(a, CS_EV_STATE, sk, CLIENT, t0, CS_TCP_CLOSE, CS_TCP_SYN_SENT, t, 0);
			ev(a, CS_EV_STATE, sk, CLIENT, t1, CS_TCP_SYN_SENT, CS_TCP_ESTABLISHED, est, 0);
			ev(a, CS_EV_STATE, sk, CLIENT, t1, CS_TCP_ESTABLISHED, CS_TCP_CLOSE_WAIT, fin, 0);
			ev(a, CS_EV_STATE, sk, CLIENT, t1, CS_TCP_CLOSE_WAIT, CS_TCP_LAST_ACK, end, 0);
			ev(a, CS_EV_STATE, sk, CLIENT, t1, CS_TCP_LAST_ACK, CS_TCP_CLOSE, end + US, 2);
		}
}

TEST(concurrency_counts_connections_carrying_requests)
{
	for (int summary = 0; summary < 2; summary++) {
		const char *mode = summary ? "summary" : "per_transition";
		struct endpoint_stats *es;
		char label[64];
		struct agg a;

		agg_init(&a, 0);
		lagging_client(&a, summary);
		agg_tick(&a, 10 * MS);
		es = ep(agg_find_proc(&a, CLIENT), EP_REMOTE, 8080);
		snprintf(label, sizeof(label), "%s/endpoint", mode);
		ASSERT_TRUE(es != NULL, label);
		snprintf(label, sizeof(label), "%s/opened", mode);
		ASSERT_EQ(es->opened, 32, label);
		snprintf(label, sizeof(label), "%s/peak_is_requests_in_flight_not_sockets", mode);
		ASSERT_EQ(es->live_peak, 8, label);
		snprintf(label, sizeof(label), "%s/none_live_at_the_end", mode);
		ASSERT_EQ(es->live, 0, label);
		agg_free(&a);
	}
}

/* A server that accepts slowly (#26): 8 connections wait in its accept
 * queue from 1 ms, and it accepts and serves them one at a time from 10
 * ms, closing each before the next accept. One connection at a time
 * carries a request; the queued ones carry none yet. Before, concurrency
 * counted each from its SYN: 8 (a prefork child's peak_concurrent 8). The
 * time accept() returned is the per-transition record's (socket-storage
 * summaries carry none: from the handshake's end there). */
TEST(server_concurrency_counts_from_accept)
{
	struct endpoint_stats *es;
	struct agg a;

	agg_init(&a, 0);
	ev(&a, CS_EV_STATE, 10, SERVER, tup(8080, 0), CS_TCP_CLOSE, CS_TCP_LISTEN, 1, 0);
	for (int k = 0; k < 8; k++) {
		uint64_t syn = MS + k * 10 * US;
		struct cs_tuple t = tup(8080, 40000 + k);

		ev(&a, CS_EV_STATE, 100 + k, SERVER, t, CS_TCP_LISTEN, CS_TCP_SYN_RECV, syn, 0);
		ev(&a, CS_EV_STATE, 100 + k, SERVER, t, CS_TCP_SYN_RECV, CS_TCP_ESTABLISHED,
		   syn + 10 * US, 0);
	}
	for (int k = 0; k < 8; k++) {
		uint64_t sk = 100 + k, acc = 10 * MS + k * 2 * MS, fin = acc + MS;
		struct cs_tuple t = tup(8080, 40000 + k);

		ev(&a, CS_EV_ACCEPT, sk, SERVER, t, CS_TCP_ESTABLISHED, CS_TCP_ESTABLISHED, acc, 0);
		ev(&a, CS_EV_STATE, sk, SERVER, t, CS_TCP_ESTABLISHED, CS_TCP_FIN_WAIT1, fin, 0);
		ev(&a, CS_EV_STATE, sk, SERVER, t, CS_TCP_FIN_WAIT1, CS_TCP_FIN_WAIT2, fin, 0);
		ev(&a, CS_EV_STATE, sk, SERVER, t, CS_TCP_FIN_WAIT2, CS_TCP_CLOSE, fin + 500 * US, 2);
	}
	agg_tick(&a, 40 * MS);
	es = ep(agg_find_proc(&a, SERVER), EP_LISTEN, 8080);
	ASSERT_TRUE(es != NULL, "endpoint");
	if (es) {
		ASSERT_EQ(es->accepted, 8, "accepted");
		ASSERT_EQ(es->live_peak, 1, "peak_is_accepted_and_carrying_not_queued");
		ASSERT_EQ(es->live, 0, "none_live_at_the_end");
	}
	agg_free(&a);
}

/* Queued and never accepted (ended in the queue): never carried one. */
TEST(server_concurrency_leaves_out_the_never_accepted)
{
	struct endpoint_stats *es;
	struct agg a;

	agg_init(&a, 0);
	ev(&a, CS_EV_STATE, 10, SERVER, tup(8080, 0), CS_TCP_CLOSE, CS_TCP_LISTEN, 1, 0);
	for (int k = 0; k < 4; k++) {
		struct cs_tuple t = tup(8080, 40000 + k);
		struct cs_event e = { .type = CS_EV_STATE, .sk = 100 + k, .tuple = t,
				      .oldstate = CS_TCP_ESTABLISHED, .newstate = CS_TCP_CLOSE,
				      .ts_ns = 5 * MS, .flags = CS_F_SUMMARY | CS_F_NOT_ACCEPTED,
				      .syn_ns = MS, .est_ns = MS + 10 * US,
				      .sum = CS_SUM_EST | CS_SUM_PASSIVE, .cookie = 100 + k,
				      .sk_err = 104 };

		e.owner.tgid = SERVER;
		e.owner.flags = CS_OWNER_LISTENER;
		agg_event(&a, &e);
	}
	agg_tick(&a, 10 * MS);
	es = ep(agg_find_proc(&a, SERVER), EP_LISTEN, 8080);
	ASSERT_TRUE(!es || es->live_peak == 0, "never_accepted_not_concurrent");
	agg_free(&a);
}

TEST(churn_finding_fires_only_for_churn)
{
	struct agg a;
	struct churn_finding f[4];
	char text[256];
	size_t n;

	agg_init(&a, 0);
	/* 20 connections to :8080, one at a time, one request each */
	for (int i = 0; i < 20; i++)
		client_conn(&a, 100 + i, 41000 + i, 8080, (uint64_t)i * 10 * MS, 2 * MS, 2);
	/* 4 connections to :9090 with 100 requests each */
	for (int i = 0; i < 4; i++)
		client_conn(&a, 200 + i, 42000 + i, 9090, (uint64_t)i * 10 * MS, 5 * MS, 199);
	agg_tick(&a, 0);
	n = reuse_findings(&a, f, 4);
	ASSERT_EQ(n, 1, "one_finding");
	ASSERT_EQ(f[0].ep.port, 8080, "churning_endpoint");
	ASSERT_EQ(f[0].connections, 20, "connections");
	ASSERT_EQ(f[0].requests, 20, "requests");
	ASSERT_EQ(f[0].concurrency, 1, "concurrency");
	churn_finding_text(text, sizeof(text), &f[0]);
	ASSERT_STREQ(text, "pool to 127.0.0.1:8080 churns: 20 connections for 20 requests at "
			   "concurrency 1; a pool that keeps >= 1 idle connections would open 1",
		     "text");
	agg_free(&a);
}

TEST(open_connections_count_their_requests_at_the_end)
{
	struct agg a;
	struct proc_books *p;
	struct cs_conn_io io = { .turns = 9 };

	agg_init(&a, 0);
	ev(&a, CS_EV_STATE, 5, CLIENT, tup(0, 8080), CS_TCP_CLOSE, CS_TCP_SYN_SENT, 1, 0);
	ev(&a, CS_EV_STATE, 5, CLIENT, tup(40005, 8080), CS_TCP_SYN_SENT, CS_TCP_ESTABLISHED, 2, 0);
	agg_add_live_io(&a, 5, &io);
	agg_add_live_io(&a, 5, &io);	/* once only */
	a.final_tick = true;	/* the end: an open connection stays live */
	agg_tick(&a, 3);
	p = agg_find_proc(&a, CLIENT);
	ASSERT_EQ(p->requests, 5, "requests_of_open_conn");
	ASSERT_EQ(ep(p, EP_REMOTE, 8080)->live, 1, "still_live");
	agg_free(&a);
}

/* A socket of the start-up snapshot at tuple t. */
static struct sd_sock snap_sock(struct cs_tuple t, int state, uint32_t inode)
{
	struct sd_sock s = { .family = t.family, .state = state, .sport = t.sport,
			     .dport = t.dport, .inode = inode };

	memcpy(s.saddr, t.saddr, 16);
	memcpy(s.daddr, t.daddr, 16);
	return s;
}

/* nginx's master holds the listener, a worker the connections it accepted
 * before the attach (an upstream keep-alive pool, 127.0.0.1:8081 <- the
 * pool's ports). The worker's held connections are its listen endpoint's:
 * `connscope diff` after an nginx keepalive fix listed nine "endpoint
 * 127.0.0.1:43020"-like rows, one a pool connection, each booked as a
 * connection the worker made to its peer's ephemeral port. */
TEST(held_accepted_connection_is_the_listeners)
{
	struct sd_sock lsn = snap_sock(tup(8081, 0), CS_TCP_LISTEN, 10);
	struct sd_sock held = snap_sock(tup(8081, 43020), CS_TCP_ESTABLISHED, 11);
	struct sd_sock mine = snap_sock(tup(43022, 8081), CS_TCP_ESTABLISHED, 12);
	struct proc_books *w;
	struct endpoint_stats *es;
	struct endpoint_key k = { .family = AF_INET, .side = EP_REMOTE, .port = 43020 };
	struct agg a;

	agg_init(&a, 0);
	agg_seed(&a, SERVER, &lsn);		/* the master */
	agg_seed(&a, CLIENT, &held);		/* a worker: accepted, before us */
	agg_seed(&a, CLIENT, &mine);		/* the same worker's own pool connection */
	w = agg_find_proc(&a, CLIENT);
	ASSERT_TRUE(w != NULL, "worker");
	es = ep(w, EP_LISTEN, 8081);
	ASSERT_TRUE(es != NULL, "listen_endpoint");
	ASSERT_EQ(es ? es->held : 0, 1, "held_under_listen");
	k.addr[0] = 127, k.addr[3] = 1;
	ASSERT_TRUE(hmap_get(&w->endpoints, &k) == NULL, "no_peer_port_endpoint");
	es = ep(w, EP_REMOTE, 8081);
	ASSERT_EQ(es ? es->held : 0, 1, "own_connection_still_remote");
	agg_free(&a);
}

/* The same, the listener held by no target (`attach -p` of the workers,
 * the master not traced; or a master that accepts and hands each
 * connection to a worker): noted from the snapshot all the same, with no
 * books of its own, and the worker's held connection is its listen
 * endpoint's. */
TEST(held_accepted_connection_untraced_listener)
{
	struct sd_sock lsn = snap_sock(tup(8081, 0), CS_TCP_LISTEN, 10);
	struct sd_sock held = snap_sock(tup(8081, 43020), CS_TCP_ESTABLISHED, 11);
	struct sd_sock other = snap_sock(tup(8082, 43021), CS_TCP_ESTABLISHED, 12);
	struct endpoint_key k = { .family = AF_INET, .side = EP_REMOTE, .port = 43020 };
	struct endpoint_stats *es;
	struct proc_books *w;
	struct agg a;

	agg_init(&a, 0);
	agg_seed_listener(&a, &lsn);		/* the master's, not traced */
	agg_seed_listener(&a, &held);		/* not a listener: passed over */
	agg_seed(&a, CLIENT, &held);		/* a worker's, accepted before us */
	agg_seed(&a, CLIENT, &other);		/* no listener at 8082: its own */
	ASSERT_TRUE(agg_find_proc(&a, SERVER) == NULL, "no_books_for_the_listeners_owner");
	w = agg_find_proc(&a, CLIENT);
	ASSERT_TRUE(w != NULL, "worker");
	es = ep(w, EP_LISTEN, 8081);
	ASSERT_EQ(es ? es->held : 0, 1, "held_under_listen");
	k.addr[0] = 127, k.addr[3] = 1;
	ASSERT_TRUE(hmap_get(&w->endpoints, &k) == NULL, "no_peer_port_endpoint");
	es = ep(w, EP_REMOTE, 43021);
	ASSERT_EQ(es ? es->held : 0, 1, "no_listener_stays_remote");
	ASSERT_EQ(w->seeded, 2, "both_seeded");
	agg_free(&a);
}

/* Every census notes every listener it shows, none is dropped: on a host
 * whose listeners come and go, a long run fills the table with listeners
 * no target holds. A target's own listener, made later, still finds room,
 * and its accepted connections stay its listen endpoint's (review s43
 * R13: the table was full for everyone at 65,536). */
TEST(untraced_listeners_leave_room_for_a_targets)
{
	struct cs_tuple late = tup(8090, 0), child = tup(8090, 43050);
	struct sd_sock s;
	struct endpoint_stats *es;
	struct proc_books *w;
	struct agg a;

	agg_init(&a, 0);
	for (uint32_t i = 0; i < 70000; i++) {
		struct cs_tuple t = tup((uint16_t)(10000 + i % 50000), 0);

		t.saddr[2] = (uint8_t)(i / 50000);	/* 127.0.x.1: distinct keys */
		s = snap_sock(t, CS_TCP_LISTEN, 0);
		agg_seed_listener(&a, &s);
	}
	ASSERT_TRUE(a.listen_addrs.count <= 32768, "untraced_listeners_take_half_at_most");
	s = snap_sock(late, CS_TCP_LISTEN, 20);
	agg_seed(&a, CLIENT, &s);		/* the target's own listener */
	s = snap_sock(child, CS_TCP_ESTABLISHED, 21);
	agg_seed(&a, CLIENT, &s);		/* a connection it accepted */
	w = agg_find_proc(&a, CLIENT);
	ASSERT_TRUE(w != NULL, "target");
	es = ep(w, EP_LISTEN, 8090);
	ASSERT_EQ(es ? es->held : 0, 1, "targets_child_under_its_listener");
	agg_free(&a);
}

UNIT_MAIN()

/* A listening endpoint names its listener's bound address: a child of a
 * wildcard listener is counted under the wildcard (it carries the address
 * it was reached at), one of a listener bound to its address under that
 * address; printed as ss does, with * for IPv4's wildcard. */
TEST(listen_endpoint_names_the_bound_address)
{
	struct endpoint_key k = { .family = AF_INET, .side = EP_LISTEN, .port = 8080 };
	struct cs_tuple any = tup(8081, 0);
	struct agg a;
	struct proc_books *srv;
	char buf[80];

	endpoint_format(buf, sizeof(buf), &k);
	ASSERT_STREQ(buf, "listen *:8080", "v4_any");
	k.addr[0] = 127, k.addr[3] = 1;
	endpoint_format(buf, sizeof(buf), &k);
	ASSERT_STREQ(buf, "listen 127.0.0.1:8080", "v4");
	memset(k.addr, 0, sizeof(k.addr));
	k.family = AF_INET6;
	endpoint_format(buf, sizeof(buf), &k);
	ASSERT_STREQ(buf, "listen [::]:8080", "v6_any");
	k.addr[15] = 1;
	endpoint_format(buf, sizeof(buf), &k);
	ASSERT_STREQ(buf, "listen [::1]:8080", "v6");
	endpoint_listen_address(buf, sizeof(buf), &k);
	ASSERT_STREQ(buf, "::1", "v6_address");

	agg_init(&a, 0);
	memset(any.saddr, 0, sizeof(any.saddr));
	ev(&a, CS_EV_STATE, 10, SERVER, any, CS_TCP_CLOSE, CS_TCP_LISTEN, 1, 0);
	ev(&a, CS_EV_STATE, 20, SERVER, tup(8080, 0), CS_TCP_CLOSE, CS_TCP_LISTEN, 1, 0);
	ev(&a, CS_EV_STATE, 11, SERVER, tup(8081, 40000), CS_TCP_LISTEN, CS_TCP_SYN_RECV, 2, 0);
	ev(&a, CS_EV_STATE, 21, SERVER, tup(8080, 40001), CS_TCP_LISTEN, CS_TCP_SYN_RECV, 2, 0);
	srv = agg_find_proc(&a, SERVER);
	k = (struct endpoint_key){ .family = AF_INET, .side = EP_LISTEN, .port = 8081 };
	ASSERT_TRUE(hmap_get(&srv->endpoints, &k) != NULL, "wildcard_child_under_wildcard");
	k.port = 8080;
	k.addr[0] = 127, k.addr[3] = 1;
	ASSERT_TRUE(hmap_get(&srv->endpoints, &k) != NULL, "bound_child_under_its_address");
	agg_free(&a);
}

/* The text table's endpoint column keeps each endpoint's port: a long
 * address loses its middle, not its end ("listen 127.0.0.1:39179" read
 * "listen 127.0.0.1:391" in `make demo`), within 80 columns. */
TEST(reuse_table_keeps_the_port)
{
	struct tw_report_opts o = { .top = 5, .width = 80 };
	struct agg a;
	struct cs_tuple t = tup(40001, 39179);
	char *out = NULL, *line;
	size_t len = 0;
	FILE *f;

	agg_init(&a, 0);
	t.family = AF_INET6;
	memset(t.daddr, 0, sizeof(t.daddr));
	t.daddr[0] = 0xfd, t.daddr[2] = 0x12, t.daddr[3] = 0x34, t.daddr[4] = 0x56;
	t.daddr[5] = 0x78, t.daddr[6] = 0x9a, t.daddr[7] = 0xbc, t.daddr[15] = 1;
	ev(&a, CS_EV_STATE, 1, CLIENT, t, CS_TCP_CLOSE, CS_TCP_SYN_SENT, 1 * MS, 0);
	ev(&a, CS_EV_STATE, 1, CLIENT, t, CS_TCP_SYN_SENT, CS_TCP_ESTABLISHED, 2 * MS, 0);
	ev(&a, CS_EV_STATE, 1, CLIENT, t, CS_TCP_ESTABLISHED, CS_TCP_FIN_WAIT1, 3 * MS, 0);
	ev(&a, CS_EV_STATE, 1, CLIENT, t, CS_TCP_FIN_WAIT1, CS_TCP_FIN_WAIT2, 3 * MS, 0);
	ev(&a, CS_EV_STATE, 1, CLIENT, t, CS_TCP_FIN_WAIT2, CS_TCP_CLOSE, 4 * MS, 2);
	agg_tick(&a, 0);
	f = open_memstream(&out, &len);
	ASSERT_TRUE(f != NULL, "memstream");
	format_reuse_text(f, agg_find_proc(&a, CLIENT), &o, false);
	fclose(f);
	ASSERT_TRUE(strstr(out, "reuse by endpoint") != NULL, "table");
	ASSERT_TRUE(strstr(out, "~]:39179 ") != NULL, "port_kept");
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
		ASSERT_TRUE(strlen(line) <= 80, "width");
	free(out);
	/* After the TIME_WAIT heatmap its lines start a block of their own
	 * (`make demo` read "scale: ... @ 363-408" then "  reuse" unparted). */
	out = NULL;
	f = open_memstream(&out, &len);
	ASSERT_TRUE(f != NULL, "memstream");
	format_reuse_text(f, agg_find_proc(&a, CLIENT), &o, true);
	fclose(f);
	ASSERT_TRUE(strncmp(out, "\n  reuse ", 9) == 0, "gap_after_heatmap");
	free(out);
	agg_free(&a);
}

/* Connections that opened and closed before the run's clock started (the
 * ring keeps what the programs saw while the agent set up: attach to a
 * busy process) are clamped to its start, the open and the close at one
 * time. The close came first in the sweep and was dropped (nothing open
 * yet), the open then stayed: attaching to `connscope demo` mid-run read
 * "peak 113, mean 112" open at once for a pool of 5. */
TEST(connections_before_the_start_leave_nothing_open)
{
	struct agg a;
	struct proc_books *p;
	struct endpoint_stats *es;

	agg_init(&a, 100 * MS);
	for (int i = 0; i < 20; i++)
		client_conn(&a, 10 + i, 40010 + i, 8080, (1 + 4 * i) * MS, 2 * MS, 2);
	/* One after the start, alone. */
	client_conn(&a, 99, 40099, 8080, 200 * MS, 5 * MS, 2);
	agg_tick(&a, 300 * MS);
	p = agg_find_proc(&a, CLIENT);
	es = ep(p, EP_REMOTE, 8080);
	ASSERT_TRUE(es != NULL, "endpoint");
	ASSERT_EQ(es->opened, 21, "opened");
	ASSERT_EQ(es->live, 0, "none_open_at_the_end");
	ASSERT_EQ(es->live_peak, 1, "peak_one");
	agg_free(&a);
}
