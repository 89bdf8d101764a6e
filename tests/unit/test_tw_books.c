// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* TIME_WAIT books that balance: every TIME_WAIT a process entered is
 * expired, ended early, gone with its end unseen, or still held
 * (entered = expired + ended early + end unseen + live), driven by the
 * event orders the kernel emits (timer_cancel / inet_sock_set_state traces
 * on loopback, kernel 6.18). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include "unit.h"
#include "tcp_books.h"
#include "inode_owners.h"

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

/* A newer TIME_WAIT at a tuple whose older one, followed by its timer,
 * ended unseen (no cancel: no timer events; the new connection's start
 * untraced): the older is
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
		e.tw = 0xa000 + i;	/* followed by its timer */
		agg_event(&a, &e);
	}
	p = agg_find_proc(&a, CLIENT);
	ASSERT_EQ(p->total.tw_entered, 2, "entered");
	ASSERT_EQ(p->total.tw_end_unseen, 1, "older_end_unseen");
	ASSERT_EQ(a.tw_gone_unknown, 1, "agent_end_unseen");
	ASSERT_TRUE(balanced(&a, CLIENT), "balanced");
	agg_free(&a);
}

#define SEC 1000000000ULL

/* The kernel's dump as the census reads it: TIME_WAIT at t, expires_ms
 * left on its timer. */
static struct sd_sock tw_sock(struct cs_tuple t, uint32_t expires_ms)
{
	struct sd_sock s = { .family = AF_INET, .state = CS_TCP_TIME_WAIT, .timer = 3,
			     .sport = t.sport, .dport = t.dport, .expires_ms = expires_ms };

	memcpy(s.saddr, t.saddr, 4);
	memcpy(s.daddr, t.daddr, 4);
	return s;
}

static void client_close(struct agg *a, uint64_t sk, struct cs_tuple t, uint64_t ts,
			 uint8_t flags)
{
	struct cs_event e = ev(CS_EV_STATE, sk, CLIENT, t, CS_TCP_FIN_WAIT2, CS_TCP_CLOSE);

	e.ts_ns = ts;
	e.flags = flags;
	agg_event(a, &e);
}

static void census(struct agg *a, uint64_t at, const struct sd_sock *socks, size_t n)
{
	struct inode_map owners;

	inode_map_init(&owners);
	a->snapshot_ns = at;
	agg_reconcile(a, socks, n, &owners);
	inode_map_free(&owners);
}

/* No tw hook (census mode): a TIME_WAIT gone from the dumps before its
 * 60 s ended early, one gone after them expired, one that began and
 * ended between two dumps ended early (none runs out sooner), and the
 * deadline follows the kernel's idiag_expires (a timer re-armed by the
 * peer's FIN again lives past 60 s from its start). Before, every one
 * was an end unseen. */
TEST(census_tells_expired_from_ended_early_by_age)
{
	struct cs_tuple a1 = tup(40001, 8080), a2 = tup(40002, 8080), a3 = tup(40003, 8080);
	struct cs_tuple a4 = tup(40004, 8080);
	struct sd_sock both[3] = { tw_sock(a1, 59000), tw_sock(a2, 59000), tw_sock(a4, 59000) };
	struct sd_sock rearmed = tw_sock(a4, 60000);
	const struct proc_books *p;
	struct agg a;

	agg_init(&a, 0);
	a.tw_census = true;
	agg_proc(&a, CLIENT)->target = true;
	client_close(&a, 1, a1, 1 * SEC, 0);
	client_close(&a, 2, a2, 1 * SEC, 0);
	client_close(&a, 4, a4, 1 * SEC, 0);
	census(&a, 2 * SEC, both, 3);
	client_close(&a, 3, a3, 3 * SEC, 0);	/* gone before the next dump */
	both[1].expires_ms = both[2].expires_ms = 57000;
	census(&a, 4 * SEC, both + 1, 2);	/* a1 killed (ss -K) at ~3 s */
	both[1].expires_ms = both[2].expires_ms = 56000;
	census(&a, 5 * SEC, both + 1, 2);
	p = agg_find_proc(&a, CLIENT);
	ASSERT_EQ(p->total.tw_killed, 2, "a1_and_a3_ended_early");
	ASSERT_EQ(p->total.tw_expired, 0, "none_expired_yet");
	both[1].expires_ms = 2000;
	both[2] = rearmed;
	census(&a, 59 * SEC, both + 1, 2);	/* a4's timer re-armed at 59 s */
	census(&a, 61 * SEC, &rearmed, 1);	/* a2 ran out at 61 s */
	census(&a, 62 * SEC, &rearmed, 1);
	ASSERT_EQ(p->total.tw_expired, 1, "a2_expired");
	census(&a, 100 * SEC, NULL, 0);		/* a4 gone at 100 s: before 119 s */
	census(&a, 101 * SEC, NULL, 0);
	ASSERT_EQ(p->total.tw_killed, 3, "a4_ended_before_its_rearmed_deadline");
	ASSERT_EQ(p->total.tw_end_unseen, 0, "no_end_unseen");
	ASSERT_EQ(p->total.tw_entered, 4, "entered");
	ASSERT_TRUE(balanced(&a, CLIENT), "balanced");
	agg_free(&a);
}

/* Census mode, the namespace's table full at the close (CS_F_TW_MAYBE):
 * not entered until a dump shows it; never shown, not made (the kernel's
 * TcpExtTCPTimeWaitOverflow); the run's last dump decides alone; a
 * takeover shows the kernel made it. */
TEST(census_decides_time_wait_in_doubt)
{
	struct cs_tuple made = tup(40001, 8080), refused = tup(40002, 8080);
	struct cs_tuple last = tup(40003, 8080), taken = tup(40004, 8080);
	struct sd_sock dump = tw_sock(made, 59000);
	const struct proc_books *p;
	struct cs_event e;
	struct agg a;

	agg_init(&a, 0);
	a.tw_census = true;
	agg_proc(&a, CLIENT)->target = true;
	agg_proc(&a, SERVER)->target = true;
	client_close(&a, 1, made, 1 * SEC, CS_F_TW_MAYBE);
	client_close(&a, 2, refused, 1 * SEC, CS_F_TW_MAYBE);
	p = agg_find_proc(&a, CLIENT);
	ASSERT_EQ(p->total.tw_entered, 0, "in_doubt_not_entered");
	ASSERT_EQ(agg_tw_count(&a, CLIENT), 0, "in_doubt_not_live");
	census(&a, 2 * SEC, &dump, 1);
	ASSERT_EQ(p->total.tw_entered, 1, "shown_made");
	census(&a, 3 * SEC, &dump, 1);
	ASSERT_EQ(p->total.tw_not_made, 1, "never_shown_not_made");
	client_close(&a, 3, last, 4 * SEC, CS_F_TW_MAYBE);
	/* A client reconnecting from the port of a server's TIME_WAIT in
	 * doubt: the kernel had made it. */
	e = ev(CS_EV_STATE, 4, SERVER, taken, CS_TCP_FIN_WAIT2, CS_TCP_CLOSE);
	e.ts_ns = 4 * SEC, e.flags = CS_F_TW_MAYBE;
	agg_event(&a, &e);
	e = ev(CS_EV_STATE, 5, SERVER, taken, CS_TCP_LISTEN, CS_TCP_SYN_RECV);
	e.ts_ns = 5 * SEC;
	agg_event(&a, &e);
	ASSERT_EQ(agg_find_proc(&a, SERVER)->total.tw_entered, 1, "taken_over_was_made");
	ASSERT_EQ(agg_find_proc(&a, SERVER)->total.tw_killed, 1, "taken_over_ended_early");
	a.final_reconcile = true;
	census(&a, 6 * SEC, &dump, 1);
	ASSERT_EQ(p->total.tw_not_made, 2, "last_dump_decides");
	ASSERT_EQ(p->total.tw_entered, 1, "entered");
	ASSERT_EQ(agg_tw_count(&a, CLIENT), 1, "made_one_live");
	ASSERT_TRUE(balanced(&a, CLIENT), "client_balanced");
	ASSERT_TRUE(balanced(&a, SERVER), "server_balanced");
	agg_free(&a);
}

/* Census mode, a namespace no dump reads any more (its traced processes
 * gone): its TIME_WAIT is not ended by being absent; past its deadline
 * and a margin it ended, how not known (end unseen). */
TEST(census_keeps_time_wait_of_an_unread_namespace_until_its_deadline)
{
	struct cs_tuple t = tup(40001, 8080);
	uint32_t other = 4026531999u;
	const struct proc_books *p;
	struct agg a;

	t.netns = 4026532000u;
	agg_init(&a, 0);
	a.tw_census = true;
	agg_proc(&a, CLIENT)->target = true;
	client_close(&a, 1, t, 1 * SEC, 0);
	p = agg_find_proc(&a, CLIENT);
	for (uint64_t at = 2; at <= 64; at += 31) {
		agg_set_dumped(&a, &other, 1);
		census(&a, at * SEC, NULL, 0);
	}
	ASSERT_EQ(agg_tw_count(&a, CLIENT), 1, "kept_while_unread");
	agg_set_dumped(&a, &other, 1);
	census(&a, 67 * SEC, NULL, 0);
	ASSERT_EQ(agg_tw_count(&a, CLIENT), 0, "gone_past_its_deadline");
	ASSERT_EQ(p->total.tw_end_unseen, 1, "end_unseen");
	ASSERT_EQ(p->total.tw_killed + p->total.tw_expired, 0, "not_classified");
	ASSERT_TRUE(balanced(&a, CLIENT), "balanced");
	agg_free(&a);
}

/* Timer mode (--tw-timers), a close whose tw timer was not matched (the
 * record's tw 0: CS_STAT_TW_UNMATCHED): no timer event will end it, so
 * the dumps judge it by its age as the census does. An orphaned FIN_WAIT2
 * parked for tcp_fin_timeout (1 s, the dump's idiag_expires) gone after
 * it expired; one gone long before its deadline ended early. Before, both
 * were ends unseen (51_tw_expiry_fast, timer mode, 1 CI run in ~12: all 6
 * an end unseen). */
TEST(timer_mode_unmatched_time_wait_judged_by_age)
{
	struct cs_tuple a1 = tup(40001, 8080), a2 = tup(40002, 8080);
	struct sd_sock both[2] = { tw_sock(a1, 1000), tw_sock(a2, 59000) };
	const struct proc_books *p;
	struct agg a;

	agg_init(&a, 0);
	a.tw_census = false;
	agg_proc(&a, CLIENT)->target = true;
	client_close(&a, 1, a1, 1 * SEC, 0);
	client_close(&a, 2, a2, 1 * SEC, 0);
	census(&a, 1 * SEC + SEC / 10, both, 2);
	census(&a, 2 * SEC + SEC / 5, NULL, 0);	/* both gone: a1 ran out */
	census(&a, 2 * SEC + SEC / 2, NULL, 0);
	p = agg_find_proc(&a, CLIENT);
	ASSERT_EQ(p->total.tw_expired, 1, "a1_expired");
	ASSERT_EQ(p->total.tw_killed, 1, "a2_ended_early");
	ASSERT_EQ(p->total.tw_end_unseen, 0, "no_end_unseen");
	ASSERT_TRUE(balanced(&a, CLIENT), "balanced");
	agg_free(&a);
}

/* The run's last census with a second look at hand (attach's sock_diag
 * exact look, agg.tw_look): a TIME_WAIT the census lacked is asked about
 * at once, where a second census used to follow. One the kernel still has
 * is not ended (shown, its timer as the look says); one it has not ended
 * (early or expired by its age when the census began, as a second census
 * would have said); one without an answer, or whose device no census
 * showed (a look naming none misses a socket bound to one), waits for a
 * second census as before. */
struct fake_look {
	int calls;
	size_t asked;
	uint32_t bound_if;	/* the look at port 40001 named it */
	uint16_t there;		/* the local port the kernel still has */
	uint16_t mute;		/* the one it gives no answer for */
	uint64_t at_ns;		/* when it says it looked (0: not said) */
	uint64_t cookie;	/* the look at port 40001 named it */
};

static void fake_look(void *ctx, struct agg_tw_look *q, size_t n)
{
	struct fake_look *f = ctx;

	f->calls++;
	for (size_t i = 0; i < n; i++) {
		if (q[i].t.sport == 40001) {
			f->bound_if = q[i].bound_if;
			f->cookie = q[i].cookie;
		}
		f->asked++;
		q[i].found = q[i].t.sport == f->mute ? -EIO : q[i].t.sport == f->there;
		q[i].expires_ms = 50000;
		q[i].at_ns = f->at_ns;
	}
}

TEST(census_second_look_by_exact_lookup)
{
	struct cs_tuple a1 = tup(40001, 8080), a2 = tup(40002, 8080), a3 = tup(40003, 8080);
	struct cs_tuple a4 = tup(40004, 8080), a5 = tup(40005, 8080);
	struct sd_sock shown[4] = { tw_sock(a1, 59000), tw_sock(a2, 59000), tw_sock(a3, 59000),
				    tw_sock(a5, 59000) };
	struct sd_sock later[2] = { tw_sock(a1, 49000), tw_sock(a5, 56000) };
	struct fake_look f = { .there = 40001, .mute = 40003 };
	const struct proc_books *p;
	struct agg a;

	agg_init(&a, 0);
	a.tw_census = true;
	agg_proc(&a, CLIENT)->target = true;
	client_close(&a, 1, a1, 1 * SEC, 0);
	client_close(&a, 2, a2, 1 * SEC, 0);
	client_close(&a, 3, a3, 1 * SEC, 0);
	client_close(&a, 5, a5, 1 * SEC, 0);
	shown[0].bound_if = 7;	/* a1 bound to a device: the look names it */
	census(&a, 2 * SEC, shown, 4);
	client_close(&a, 4, a4, 3 * SEC, 0);	/* no census shows it */
	p = agg_find_proc(&a, CLIENT);
	/* The last census lacks all but a5: a1 is there (a skipped entry),
	 * a2 gone (killed at ~4 s), a3 unanswered, a4 never shown. */
	a.final_reconcile = true;
	a.tw_look = fake_look;
	a.tw_look_ctx = &f;
	census(&a, 5 * SEC, shown + 3, 1);
	ASSERT_EQ(f.calls, 1, "one_look_for_all");
	ASSERT_EQ(f.asked, 3, "a1_a2_a3_looked_at");
	ASSERT_EQ(f.bound_if, 7, "look_names_the_device");
	ASSERT_EQ(a.tw_looked, 3, "looked");
	ASSERT_EQ(a.tw_looked_there, 1, "a1_there");
	ASSERT_EQ(p->total.tw_killed, 1, "a2_ended_early");
	ASSERT_EQ(p->total.tw_expired, 0, "none_expired");
	ASSERT_EQ(agg_tw_count(&a, CLIENT), 4, "a1_a3_a4_a5_live");
	ASSERT_EQ(a.tw_absent_once, 2, "a3_a4_wait_for_a_second_census");
	ASSERT_EQ(p->truth.state[CS_TCP_TIME_WAIT], 2, "a1_and_a5_shown");
	/* a1's timer as the look said: 50 s from the census. */
	ASSERT_EQ(agg_tw_find(&a, &a1)->deadline_ns, 55 * SEC, "a1_deadline_from_the_look");
	ASSERT_EQ(agg_tw_find(&a, &a1)->missed, 0, "a1_not_missed");
	/* The second census (what attach still runs for a3 and a4): both
	 * gone, ended early; a1 and a5 shown. Both lacked at 62 s, at or
	 * past their deadlines (55 s, 62 s): expired, by the look alone. */
	f.there = 0;
	f.mute = 0;
	census(&a, 6 * SEC, later, 2);
	ASSERT_EQ(p->total.tw_killed, 3, "a3_a4_ended_early");
	census(&a, 62 * SEC, NULL, 0);
	ASSERT_EQ(p->total.tw_expired, 2, "a1_a5_expired_by_the_look");
	ASSERT_EQ(agg_tw_count(&a, CLIENT), 0, "none_left");
	ASSERT_EQ(a.tw_absent_once, 0, "none_waits");
	ASSERT_EQ(p->total.tw_end_unseen, 0, "no_end_unseen");
	ASSERT_TRUE(balanced(&a, CLIENT), "balanced");
	agg_free(&a);
}

/* A TIME_WAIT the kernel took over for a new connection at its very
 * tuple, whose own TIME_WAIT then sits there (an untraced process's: no
 * end record of the books replaces the entry), is told apart by its
 * socket cookie (review-hagent H3): a census showing another cookie at
 * the tuple does not show the books' one (gone once two censuses lack
 * it: ended early, the newcomer's unattributed), and the exact look names
 * the cookie the census showed (the kernel answers "none" for another). */
TEST(time_wait_replaced_at_its_tuple_told_by_cookie)
{
	struct cs_tuple a1 = tup(40001, 8080), a2 = tup(40002, 8080);
	struct sd_sock shown[2] = { tw_sock(a1, 59000), tw_sock(a2, 59000) };
	struct sd_sock other[2] = { tw_sock(a1, 59000), tw_sock(a2, 59000) };
	struct fake_look f = { .there = 40002 };
	const struct proc_books *p;
	struct agg a;

	agg_init(&a, 0);
	a.tw_census = true;
	agg_proc(&a, CLIENT)->target = true;
	client_close(&a, 1, a1, 1 * SEC, 0);
	client_close(&a, 2, a2, 1 * SEC, 0);
	shown[0].cookie = 0xa1;
	shown[1].cookie = other[1].cookie = 0xa2;
	other[0].cookie = 0xb1;		/* another connection's, at a1's tuple */
	census(&a, 2 * SEC, shown, 2);
	p = agg_find_proc(&a, CLIENT);
	census(&a, 3 * SEC, other, 2);
	ASSERT_EQ(p->truth.state[CS_TCP_TIME_WAIT], 1, "only_a2_shown");
	ASSERT_EQ(a.unattributed.state[CS_TCP_TIME_WAIT], 1, "the_newcomer_unattributed");
	ASSERT_EQ(agg_tw_find(&a, &a1)->missed, 1, "a1_absent_once");
	census(&a, 4 * SEC, other, 2);
	ASSERT_EQ(p->total.tw_killed, 1, "a1_ended_early");
	ASSERT_TRUE(agg_tw_find(&a, &a1) == NULL, "a1_gone");
	ASSERT_EQ(agg_tw_count(&a, CLIENT), 1, "a2_live");
	/* The look names the cookie the first census showed. */
	client_close(&a, 3, a1, 5 * SEC, 0);
	shown[0].cookie = 0xc1;
	census(&a, 6 * SEC, shown, 2);
	a.final_reconcile = true;
	a.tw_look = fake_look;
	a.tw_look_ctx = &f;
	census(&a, 7 * SEC, NULL, 0);
	ASSERT_EQ(f.cookie, 0xc1, "look_names_its_cookie");
	ASSERT_EQ(a.tw_looked, 2, "looked");
	ASSERT_EQ(p->total.tw_killed, 2, "a1_again_ended_early");
	ASSERT_TRUE(balanced(&a, CLIENT), "balanced");
	agg_free(&a);
}

/* A TIME_WAIT whose close record is newer than the census's start: the
 * census may show its predecessor at the tuple (taken over after the walk
 * passed it), with the predecessor's cookie. That cookie is not the books'
 * entry's: not learned, and no mismatch judged on it. Before, the next
 * census's own cookie differed, the entry was taken for replaced and
 * ended early while the kernel held it (50_census_cut: books and kernel
 * apart by 33-1,792 at a reconcile). */
TEST(time_wait_newer_than_the_census_learns_no_cookie)
{
	struct cs_tuple a1 = tup(40001, 8080);
	struct sd_sock old = tw_sock(a1, 59000), mine = tw_sock(a1, 59000);
	const struct proc_books *p;
	struct agg a;

	agg_init(&a, 0);
	a.tw_census = true;
	agg_proc(&a, CLIENT)->target = true;
	client_close(&a, 1, a1, 3 * SEC, 0);	/* closed after the census began */
	old.cookie = 0xa0;
	mine.cookie = 0xa1;
	census(&a, 2 * SEC, &old, 1);
	p = agg_find_proc(&a, CLIENT);
	ASSERT_EQ(agg_tw_find(&a, &a1)->cookie, 0, "predecessors_cookie_not_learned");
	census(&a, 4 * SEC, &mine, 1);
	ASSERT_EQ(p->truth.state[CS_TCP_TIME_WAIT], 1, "its_own_shown");
	ASSERT_EQ(agg_tw_find(&a, &a1)->cookie, 0xa1, "its_own_cookie_learned");
	census(&a, 5 * SEC, &mine, 1);
	ASSERT_EQ(p->total.tw_killed, 0, "not_ended");
	ASSERT_EQ(agg_tw_count(&a, CLIENT), 1, "live");
	ASSERT_TRUE(balanced(&a, CLIENT), "balanced");
	agg_free(&a);
}

/* A close into TIME_WAIT with its socket's cookie: as socket storage
 * sends it (whole: its life in one record), or a per-transition record.
 * cookie_before: the socket had that cookie before the record
 * (CS_SUM_COOKIE_BEFORE), so its TIME_WAIT carries the same one. */
static void client_close_cookie(struct agg *a, uint64_t sk, struct cs_tuple t, uint64_t ts,
				uint64_t cookie, bool cookie_before, bool whole)
{
	struct cs_event e = ev(CS_EV_STATE, sk, CLIENT, t, CS_TCP_FIN_WAIT2, CS_TCP_CLOSE);

	e.ts_ns = ts;
	e.sum = cookie_before ? CS_SUM_COOKIE_BEFORE : 0;
	e.cookie = cookie;
	if (whole) {
		e.flags = CS_F_SUMMARY | CS_F_NEW_OWNER;
		e.sum |= CS_SUM_EST | CS_SUM_ACTIVE_CLOSE;
		e.syn_ns = ts - 3000, e.est_ns = ts - 2000, e.fin_ns = ts - 1000;
	}
	agg_event(a, &e);
}

/* A TIME_WAIT taken over at its tuple before any census showed it
 * (review-s40 C1): an untraced connection took the tuple (a SYN, or
 * tcp_tw_reuse after 1 s on loopback) and closed into TIME_WAIT there
 * within the interval. The books' entry has its close record's cookie,
 * which the kernel's TIME_WAIT carries too (made before tcp_time_wait()
 * copied it into the tw socket): the successor's cookie at the tuple is
 * another connection's, so the entry is absent, and ended early at the
 * second census. Before, the entry had no cookie until a census, learned
 * the successor's from the first census that showed the tuple, and the
 * newcomer's TIME_WAIT was charged to it, kept live for its 60 s. */
TEST(time_wait_taken_over_before_any_census_has_its_close_cookie)
{
	for (int whole = 0; whole < 2; whole++) {
		struct cs_tuple a1 = tup(40001, 8080);
		struct sd_sock successor = tw_sock(a1, 59500);
		const struct proc_books *p;
		struct agg a;

		agg_init(&a, 0);
		a.tw_census = true;
		agg_proc(&a, CLIENT)->target = true;
		client_close_cookie(&a, 1, a1, 1 * SEC, 0xa1, true, whole);
		ASSERT_EQ(agg_tw_find(&a, &a1)->cookie, 0xa1,
			  whole ? "sk/close_records_cookie" : "pt/close_records_cookie");
		successor.cookie = 0xb1;
		census(&a, 2 * SEC, &successor, 1);
		p = agg_find_proc(&a, CLIENT);
		ASSERT_EQ(agg_tw_find(&a, &a1)->cookie, 0xa1, "successors_cookie_not_learned");
		ASSERT_EQ(p->truth.state[CS_TCP_TIME_WAIT], 0, "successor_not_charged_to_it");
		ASSERT_EQ(a.unattributed.state[CS_TCP_TIME_WAIT], 1, "successor_unattributed");
		census(&a, 3 * SEC, &successor, 1);
		ASSERT_EQ(p->total.tw_killed, 1, "ended_early");
		ASSERT_EQ(agg_tw_count(&a, CLIENT), 0, "not_kept_live");
		ASSERT_TRUE(balanced(&a, CLIENT), "balanced");
		agg_free(&a);
	}
}

/* A close record whose cookie was made for the record itself (no
 * CS_SUM_COOKIE_BEFORE: the TIME_WAIT socket had copied none and gets one
 * of its own) gives the entry no cookie: the first census older than it
 * does, as before, and the TIME_WAIT stays its holder's. */
TEST(time_wait_close_cookie_made_at_the_close_is_not_taken)
{
	struct cs_tuple a1 = tup(40001, 8080);
	struct sd_sock own = tw_sock(a1, 59500);
	const struct proc_books *p;
	struct agg a;

	agg_init(&a, 0);
	a.tw_census = true;
	agg_proc(&a, CLIENT)->target = true;
	client_close_cookie(&a, 1, a1, 1 * SEC, 0xa1, false, true);
	ASSERT_EQ(agg_tw_find(&a, &a1)->cookie, 0, "no_cookie_yet");
	own.cookie = 0xc1;	/* the tw socket's own */
	census(&a, 2 * SEC, &own, 1);
	census(&a, 3 * SEC, &own, 1);
	p = agg_find_proc(&a, CLIENT);
	ASSERT_EQ(agg_tw_find(&a, &a1)->cookie, 0xc1, "learned_from_the_census");
	ASSERT_EQ(p->truth.state[CS_TCP_TIME_WAIT], 1, "shown");
	ASSERT_EQ(p->total.tw_killed, 0, "not_ended");
	ASSERT_EQ(agg_tw_count(&a, CLIENT), 1, "live");
	ASSERT_TRUE(balanced(&a, CLIENT), "balanced");
	agg_free(&a);
}

/* The timer's ms left that the look reads are from the look's time, not
 * the census's start (review-hagent H2): a census of 800 ms, then the
 * look, puts the deadline 800 ms later than the census's start would. */
TEST(census_second_look_deadline_from_the_look_time)
{
	struct cs_tuple a1 = tup(40001, 8080);
	struct sd_sock shown = tw_sock(a1, 59000);
	struct fake_look f = { .there = 40001, .at_ns = 5 * SEC + 800000000ULL };
	struct agg a;

	agg_init(&a, 0);
	a.tw_census = true;
	agg_proc(&a, CLIENT)->target = true;
	client_close(&a, 1, a1, 1 * SEC, 0);
	shown.bound_if = 1;
	census(&a, 2 * SEC, &shown, 1);
	a.final_reconcile = true;
	a.tw_look = fake_look;
	a.tw_look_ctx = &f;
	census(&a, 5 * SEC, NULL, 0);
	ASSERT_EQ(a.tw_looked_there, 1, "there");
	ASSERT_EQ(agg_tw_find(&a, &a1)->deadline_ns, 55 * SEC + 800000000ULL,
		  "deadline_from_the_look_time");
	agg_free(&a);
}

/* What the exact look found, judged against the tuple it looked at
 * (agg_tw_look_is_tw): only a tw socket at that very tuple, of its family,
 * is the TIME_WAIT. The kernel's look answers a listener of the local
 * address where the tuple holds no connection, and a connection that took
 * the tuple over (tw reuse) is there with a file, or none yet and no tw
 * timer. */
TEST(exact_look_answer_is_the_time_wait_only_at_its_tuple)
{
	struct cs_tuple t4 = tup(40001, 8080), t6 = { .family = AF_INET6, .sport = 40001,
						      .dport = 8080 }, tm = t6;
	struct sd_sock tw4 = tw_sock(t4, 59000), tw6 = tw4, mapped = tw4;

	t4.netns = t6.netns = tm.netns = 4026531992u;	/* the look's, not said in got */
	t6.saddr[15] = t6.daddr[15] = 1;		/* ::1 */
	tm.saddr[10] = tm.saddr[11] = tm.daddr[10] = tm.daddr[11] = 0xff;
	memcpy(tm.saddr + 12, t4.saddr, 4);		/* ::ffff:127.0.0.1 */
	memcpy(tm.daddr + 12, t4.daddr, 4);
	tw6.family = mapped.family = AF_INET6;
	memcpy(tw6.saddr, t6.saddr, 16);
	memcpy(tw6.daddr, t6.daddr, 16);
	memcpy(mapped.saddr, tm.saddr, 16);
	memcpy(mapped.daddr, tm.daddr, 16);
	struct {
		const char *name;
		const struct cs_tuple *t;
		struct sd_sock got;
		bool is_tw;
	} cases[] = {
		{ "time_wait_at_the_tuple", &t4, tw4, true },
		{ "fin_wait2_substate_tw", &t4, tw4, true },
		{ "listener_fallback", &t4, tw4, false },
		{ "established_took_the_tuple", &t4, tw4, false },
		{ "no_file_yet_no_tw_timer", &t4, tw4, false },
		{ "time_wait_at_another_port", &t4, tw4, false },
		{ "ipv6_time_wait", &t6, tw6, true },
		{ "v4_mapped_time_wait", &tm, mapped, true },
		{ "time_wait_of_another_family", &t4, mapped, false },
		{ "ipv4_for_a_mapped_tuple", &tm, tw4, false },
	};

	cases[1].got.state = CS_TCP_FIN_WAIT2;
	/* inet_diag of a listener: LISTEN, a file, no peer. */
	cases[2].got.state = CS_TCP_LISTEN;
	cases[2].got.timer = 0;
	cases[2].got.inode = 1234;
	cases[2].got.dport = 0;
	memset(cases[2].got.daddr, 0, sizeof(cases[2].got.daddr));
	cases[3].got.state = CS_TCP_ESTABLISHED;
	cases[3].got.timer = 0;
	cases[3].got.inode = 5678;
	cases[4].got.state = CS_TCP_ESTABLISHED;
	cases[4].got.timer = 0;
	cases[5].got.dport = 8081;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ASSERT_EQ(agg_tw_look_is_tw(cases[i].t, &cases[i].got), cases[i].is_tw,
			  cases[i].name);
}

/* More looks than the census's time pays for (a burst of expiries that
 * is most of the books): a second census instead, as before. */
TEST(census_second_look_not_dearer_than_a_census)
{
	struct cs_tuple a1 = tup(40001, 8080), a2 = tup(40002, 8080);
	struct sd_sock shown[2] = { tw_sock(a1, 59000), tw_sock(a2, 59000) };
	struct fake_look f = { 0 };
	struct agg a;

	agg_init(&a, 0);
	a.tw_census = true;
	agg_proc(&a, CLIENT)->target = true;
	client_close(&a, 1, a1, 1 * SEC, 0);
	client_close(&a, 2, a2, 1 * SEC, 0);
	census(&a, 2 * SEC, shown, 2);
	a.final_reconcile = true;
	a.tw_look = fake_look;
	a.tw_look_ctx = &f;
	/* Two looks cost 3 us; the census took 2.9. */
	a.cut.end_ns = 3 * SEC + 2 * AGG_TW_LOOK_NS - 100;
	census(&a, 3 * SEC, NULL, 0);
	ASSERT_EQ(f.calls, 0, "not_looked");
	ASSERT_EQ(a.tw_absent_once, 2, "both_wait_for_a_second_census");
	/* The census took 3 us: looked. */
	a.cut.end_ns = 4 * SEC + 2 * AGG_TW_LOOK_NS;
	census(&a, 4 * SEC, shown, 2);
	census(&a, 4 * SEC, NULL, 0);
	ASSERT_EQ(f.calls, 1, "looked");
	ASSERT_EQ(agg_find_proc(&a, CLIENT)->total.tw_killed, 2, "both_gone");
	ASSERT_TRUE(balanced(&a, CLIENT), "balanced");
	agg_free(&a);
}

/* The report's one pass over the table (agg_tw_counts) counts each
 * holder's TIME_WAIT as a pass a holder (agg_tw_count) does: holders in
 * runs and in turns, and those in doubt (CS_F_TW_MAYBE) left out. */
TEST(tw_counts_one_pass_as_each)
{
	static const struct {
		pid_t pid;
		uint8_t flags;
	} closes[] = {
		{ 101, 0 }, { 101, 0 }, { 102, 0 }, { 101, CS_F_TW_MAYBE }, { 103, 0 },
		{ 103, 0 }, { 104, CS_F_TW_MAYBE }, { 103, 0 }, { 102, 0 }, { 101, 0 },
	};
	static const uint32_t want[] = { [101 - 100] = 3, [102 - 100] = 2, [103 - 100] = 3 };
	struct hmap by_pid;
	struct agg a;

	agg_init(&a, 0);
	a.tw_census = true;
	for (size_t i = 0; i < sizeof(closes) / sizeof(closes[0]); i++) {
		struct cs_event e = ev(CS_EV_STATE, i + 1, closes[i].pid, tup(40001 + i, 8080),
				       CS_TCP_FIN_WAIT2, CS_TCP_CLOSE);

		e.ts_ns = 1 * SEC;
		e.flags = closes[i].flags;
		agg_event(&a, &e);
	}
	ASSERT_EQ(agg_tw_counts(&a, &by_pid), 0, "counted");
	for (pid_t pid = 100; pid <= 105; pid++) {
		const uint32_t *got = hmap_get(&by_pid, &pid);
		uint32_t n = got ? *got : 0;

		ASSERT_EQ(n, agg_tw_count(&a, pid), "one_pass_as_each");
		ASSERT_EQ(n, pid - 100 < 4 ? want[pid - 100] : 0, "held");
	}
	hmap_free(&by_pid);
	agg_free(&a);
}

UNIT_MAIN()
