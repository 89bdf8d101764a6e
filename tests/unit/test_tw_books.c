// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* TIME_WAIT books that balance: every TIME_WAIT a process entered is
 * expired, ended early, gone with its end unseen, or still held
 * (entered = expired + ended early + end unseen + live), driven by the
 * event orders the kernel emits (timer_cancel / inet_sock_set_state traces
 * on loopback, kernel 6.18). */
#include <string.h>
#include <sys/socket.h>
#include "unit.h"
#include "tcp_books.h"

#define CLIENT 100
#define SERVER 200

static struct cs_tuple tup(uint16_t sport, uint16_t dport)
{
	struct cs_tuple t = { .family = AF_INET, .sport = sport, .dport = dport };

	t.saddr[0] = t.daddr[0] = 127;
	t.saddr[3] = t.daddr[3] = 1;
	return t;
}

static struct cs_event ev(uint8_t type, uint64_t sk, pid_t owner, struct cs_tuple t, int old,
			  int new)
{
	struct cs_event e = { .type = type, .sk = sk, .tuple = t, .oldstate = old,
			      .newstate = new, .ts_ns = 1000 };

	e.owner.tgid = owner;
	e.owner.flags = owner == SERVER ? CS_OWNER_LISTENER : CS_OWNER_CONNECT;
	strcpy(e.owner.comm, owner == CLIENT ? "client" : "server");
	return e;
}

static bool balanced(struct agg *a, pid_t pid)
{
	const struct proc_books *p = agg_find_proc(a, pid);
	const struct proc_counters *t = &p->total;

	return t->tw_entered == t->tw_expired + t->tw_killed + t->tw_end_unseen +
				agg_tw_count(a, pid);
}

/* One server-side connection on tuple t (server 8080 <- client port): a
 * listener's child that closes first and enters TIME_WAIT at tw. take:
 * the SYN that made it took over a TIME_WAIT of the tuple (the kernel
 * cancels that one's timer first, in the same softirq). */
static void server_conn(struct agg *a, uint64_t sk, struct cs_tuple t, uint64_t tw, bool take,
			bool per_transition)
{
	struct cs_event e;

	if (take) {
		e = ev(CS_EV_TW_CANCEL, tw, SERVER, t, CS_TCP_TIME_WAIT, CS_TCP_TIME_WAIT);
		e.tw = tw;
		agg_event(a, &e);
	}
	if (per_transition) {
		static const int path[][2] = {
			{ CS_TCP_LISTEN, CS_TCP_SYN_RECV }, { CS_TCP_SYN_RECV, CS_TCP_ESTABLISHED },
			{ CS_TCP_ESTABLISHED, CS_TCP_FIN_WAIT1 }, { CS_TCP_FIN_WAIT1, CS_TCP_FIN_WAIT2 },
			{ CS_TCP_FIN_WAIT2, CS_TCP_CLOSE } };

		for (size_t i = 0; i < sizeof(path) / sizeof(path[0]); i++) {
			e = ev(CS_EV_STATE, sk, SERVER, t, path[i][0], path[i][1]);
			if (path[i][1] == CS_TCP_CLOSE)
				e.tw = tw;
			agg_event(a, &e);
		}
		return;
	}
	/* Socket storage: the whole life in its CLOSE record. */
	e = ev(CS_EV_STATE, sk, SERVER, t, CS_TCP_FIN_WAIT2, CS_TCP_CLOSE);
	e.flags = CS_F_SUMMARY | CS_F_NEW_OWNER;
	e.sum = CS_SUM_EST | CS_SUM_ACTIVE_CLOSE | CS_SUM_PASSIVE;
	e.syn_ns = 100, e.est_ns = 200, e.fin_ns = 300;
	e.cookie = sk;
	e.tw = tw;
	agg_event(a, &e);
}

/* A client reconnecting from one port to a server that closes first: each
 * SYN takes over the server's TIME_WAIT of the connection before (and the
 * kernel reuses the freed tw socket's memory for the next). Before, the
 * next TIME_WAIT at the tuple replaced the older in the books without a
 * count: 20 entered, 1 live, 0 ended early. */
TEST(time_wait_taken_over_by_a_syn_ends_early)
{
	for (int pt = 0; pt < 2; pt++) {
		struct agg a;
		const struct proc_books *p;

		agg_init(&a, 0);
		agg_proc(&a, SERVER)->target = true;
		for (int i = 0; i < 20; i++)
			server_conn(&a, 1 + i, tup(8080, 40001), 0xa000, i > 0, pt);
		p = agg_find_proc(&a, SERVER);
		ASSERT_EQ(p->total.tw_entered, 20, pt ? "pt/entered" : "sk/entered");
		ASSERT_EQ(p->total.tw_killed, 19, pt ? "pt/ended_early" : "sk/ended_early");
		ASSERT_EQ(p->total.tw_end_unseen, 0, pt ? "pt/no_end_unseen" : "sk/no_end_unseen");
		ASSERT_EQ(agg_tw_count(&a, SERVER), 1, pt ? "pt/one_live" : "sk/one_live");
		ASSERT_TRUE(balanced(&a, SERVER), pt ? "pt/balanced" : "sk/balanced");
		agg_free(&a);
	}
}

/* A newer TIME_WAIT at a tuple whose older one ended unseen (no cancel:
 * no timer events; the new connection's start untraced): the older is
 * counted as an end unseen, to its holder, not dropped. */
TEST(time_wait_replaced_without_a_cancel_is_end_unseen)
{
	struct agg a;
	struct cs_event e;
	const struct proc_books *p;

	agg_init(&a, 0);
	agg_proc(&a, CLIENT)->target = true;
	for (int i = 0; i < 2; i++) {
		e = ev(CS_EV_STATE, 1 + i, CLIENT, tup(40001, 8080), CS_TCP_FIN_WAIT2, CS_TCP_CLOSE);
		agg_event(&a, &e);
	}
	p = agg_find_proc(&a, CLIENT);
	ASSERT_EQ(p->total.tw_entered, 2, "entered");
	ASSERT_EQ(p->total.tw_end_unseen, 1, "older_end_unseen");
	ASSERT_EQ(a.tw_gone_unknown, 1, "agent_end_unseen");
	ASSERT_TRUE(balanced(&a, CLIENT), "balanced");
	agg_free(&a);
}

UNIT_MAIN()
