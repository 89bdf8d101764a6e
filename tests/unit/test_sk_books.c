// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The storages' books (sk_books.c): connections whose end the kernel ran
 * no program for, counted from made - ended - alive, and only once two
 * passes in a row agree. Recorded figures, no kernel. */
#include "unit.h"
#include "sk_books.h"

#define NS 4026531840u

struct got {
	uint32_t tgid[8];
	bool passive[8];
	uint64_t n[8];
	int calls;
};

static void count(void *ctx, uint32_t tgid, bool passive, uint64_t n)
{
	struct got *g = ctx;

	if (g->calls < 8) {
		g->tgid[g->calls] = tgid;
		g->passive[g->calls] = passive;
		g->n[g->calls] = n;
	}
	g->calls++;
}

static struct skb_line line(uint32_t ns, uint32_t tgid, uint32_t passive, uint64_t made,
			    uint64_t ended)
{
	return (struct skb_line){ { ns, tgid, passive }, made, ended };
}

/* One pass where nothing moves meanwhile: before = after. */
static uint64_t pass(struct sk_books *b, struct skb_line l, uint64_t alive, struct got *g)
{
	uint32_t ns = NS;
	struct skb_line al = line(l.k.netns, l.k.tgid, l.k.passive, alive, 0);

	return skb_pass(b, &l, 1, &l, 1, &al, alive ? 1 : 0, &ns, 1, count, g);
}

TEST(balanced_books_count_nothing)
{
	struct sk_books b;
	struct got g = { 0 };

	skb_init(&b);
	/* 2,401 made, 2,390 ended, 11 alive. */
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(pass(&b, line(NS, 100, 0, 2401, 2390), 11, &g), 0, "nothing lost");
	ASSERT_EQ(g.calls, 0, "no count");
	ASSERT_EQ(b.counted, 0, "counted");
	ASSERT_EQ(b.pending, false, "nothing pending");
	skb_free(&b);
}

TEST(lost_counted_once_two_passes_agree)
{
	struct sk_books b;
	struct got g = { 0 };

	skb_init(&b);
	/* 3 of 2,401 sent no end: first pass only pending. */
	ASSERT_EQ(pass(&b, line(NS, 100, 0, 2401, 2398), 0, &g), 0, "one pass: not yet");
	ASSERT_EQ(b.pending, true, "pending");
	ASSERT_EQ(pass(&b, line(NS, 100, 0, 2401, 2398), 0, &g), 3, "second pass: 3");
	ASSERT_EQ(g.calls, 1, "one call");
	ASSERT_EQ(g.tgid[0], 100, "its owner");
	ASSERT_EQ(g.passive[0], false, "opened side");
	ASSERT_EQ(g.n[0], 3, "3 lost");
	ASSERT_EQ(b.pending, false, "settled");
	/* Later passes with the same books count nothing more. */
	ASSERT_EQ(pass(&b, line(NS, 100, 0, 2401, 2398), 0, &g), 0, "not again");
	ASSERT_EQ(pass(&b, line(NS, 100, 0, 3000, 2996), 1, &g), 0, "still 3 (one alive)");
	ASSERT_EQ(b.counted, 3, "3 in all");
	skb_free(&b);
}

TEST(socket_in_flight_once_is_not_counted)
{
	struct sk_books b;
	struct got g = { 0 };

	skb_init(&b);
	/* A socket between its unhashing and its CLOSE when the pass went by:
	 * neither alive nor ended at one pass, ended at the next. */
	ASSERT_EQ(pass(&b, line(NS, 100, 0, 50, 40), 9, &g), 0, "first");
	ASSERT_EQ(pass(&b, line(NS, 100, 0, 60, 50), 10, &g), 0, "gone by the next");
	ASSERT_EQ(pass(&b, line(NS, 100, 0, 70, 59), 10, &g), 0, "another, at another pass");
	ASSERT_EQ(pass(&b, line(NS, 100, 0, 70, 60), 10, &g), 0, "gone again");
	ASSERT_EQ(b.counted, 0, "none counted");
	skb_free(&b);
}

TEST(made_before_ended_after)
{
	struct sk_books b;
	struct got g = { 0 };
	uint32_t ns = NS;
	/* Sockets made during the passes are in after's made, not before's;
	 * their ends in after's ended: never a deficit. */
	struct skb_line before = line(NS, 7, 1, 100, 90), after = line(NS, 7, 1, 140, 120),
			alive = line(NS, 7, 1, 15, 0);

	skb_init(&b);
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(skb_pass(&b, &before, 1, &after, 1, &alive, 1, &ns, 1, count, &g), 0,
			  "negative deficit counts nothing");
	ASSERT_EQ(b.pending, false, "nothing pending");
	skb_free(&b);
}

TEST(namespaces_not_passed_left_alone)
{
	struct sk_books b;
	struct got g = { 0 };
	uint32_t ns = NS;
	/* A namespace the pass did not visit (targets left it, --all without
	 * its process): its alive are unknown, so nothing is judged there. */
	struct skb_line l[2] = { line(NS, 1, 0, 10, 10), line(NS + 1, 2, 0, 500, 0) };

	skb_init(&b);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(skb_pass(&b, l, 2, l, 2, NULL, 0, &ns, 1, count, &g), 0, "other ns");
	ASSERT_EQ(b.counted, 0, "none counted");
	skb_free(&b);
}

TEST(passes_must_be_consecutive)
{
	struct sk_books b;
	struct got g = { 0 };
	uint32_t other = NS + 9;
	struct skb_line l = line(NS, 100, 0, 10, 8);

	skb_init(&b);
	ASSERT_EQ(pass(&b, l, 0, &g), 0, "first");
	/* A round that did not pass NS: its next pass is a first again. */
	ASSERT_EQ(skb_pass(&b, &l, 1, &l, 1, NULL, 0, &other, 1, count, &g), 0, "not passed");
	ASSERT_EQ(pass(&b, l, 0, &g), 0, "first again");
	ASSERT_EQ(pass(&b, l, 0, &g), 2, "then counted");
	skb_free(&b);
}

TEST(per_owner_and_side)
{
	struct sk_books b;
	struct got g = { 0 };
	uint32_t ns = NS;
	struct skb_line l[3] = { line(NS, 100, 0, 10, 9), line(NS, 200, 1, 10, 8),
				 line(NS, 300, 0, 10, 10) };

	skb_init(&b);
	ASSERT_EQ(skb_pass(&b, l, 3, l, 3, NULL, 0, &ns, 1, count, &g), 0, "first");
	ASSERT_EQ(skb_pass(&b, l, 3, l, 3, NULL, 0, &ns, 1, count, &g), 3, "1 + 2");
	ASSERT_EQ(g.calls, 2, "two owners");
	ASSERT_EQ(g.tgid[0] + g.tgid[1], 300, "100 and 200");
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(g.n[i], g.tgid[i] == 100 ? 1 : 2, "each its own");
	ASSERT_EQ(g.passive[g.tgid[0] == 200 ? 0 : 1], true, "200's are accepted");
	skb_free(&b);
}

TEST(frozen_books_count_nothing)
{
	struct sk_books b;
	struct got g = { 0 };

	skb_init(&b);
	b.frozen = true;
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(pass(&b, line(NS, 100, 0, 10, 5), 0, &g), 0, "frozen");
	skb_free(&b);
}

UNIT_MAIN()
