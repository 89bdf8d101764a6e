/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* jiffies_hz: the kernel's HZ from two (jiffies, clock) pairs, for the
 * census walk's timers (#23 item 6). It must be learnt within a fraction
 * of a second, or the first intervals' census is a second walk of the
 * host's tables (the dump), and it must never be wrong: every expiry the
 * walk reports would be. */
#include "unit.h"
#include "jiffies_hz.h"

#define MS 1000000ULL

static const uint32_t x86[] = { 100, 250, 300, 1000 };
static const uint32_t wide[] = { 24, 32, 48, 64, 100, 128, 200, 250, 256, 300,
				 512, 1000, 1024, 1200 };

/* Pairs span_ms apart on a kernel of HZ hz, the second's jiffies off by
 * `off` ticks (a phase, or ticks handled late). */
static int choose(const uint32_t *cand, size_t n, uint32_t hz, uint64_t span_ms, int off)
{
	struct jiffies_pair a = { .jiffies = 4294967296ULL + 12345, .ns = 5000 * MS };
	struct jiffies_pair b = { .jiffies = a.jiffies + hz * span_ms / 1000 + off,
				  .ns = a.ns + span_ms * MS };

	return jiffies_hz_choose(&a, &b, cand, n);
}

TEST(each_hz_learnt_in_a_fifth_of_a_second)
{
	for (size_t i = 0; i < 4; i++)
		for (int off = -JIFFIES_HZ_SLACK; off <= JIFFIES_HZ_SLACK; off++)
			ASSERT_EQ(choose(x86, 4, x86[i], 200, off), (int)x86[i], "hz");
}

TEST(too_short_a_span_waits)
{
	/* 250 and 300 lie 5 ticks apart in 0.1 s: not told apart yet. */
	ASSERT_EQ(choose(x86, 4, 250, 100, 0), JIFFIES_HZ_WAIT, "0.1s");
	ASSERT_EQ(choose(x86, 4, 250, 0, 0), JIFFIES_HZ_NONE, "no_span");
}

/* Ticks handled late beyond the slack give no answer, never a wrong one:
 * 300 with 7 ticks short over 0.2 s would sit within 3 of 250's 50. */
TEST(a_count_off_by_more_than_the_slack_is_no_answer)
{
	for (size_t i = 0; i < 4; i++) {
		ASSERT_EQ(choose(x86, 4, x86[i], 200, JIFFIES_HZ_SLACK + 1), JIFFIES_HZ_NONE, "over");
		ASSERT_EQ(choose(x86, 4, x86[i], 200, -JIFFIES_HZ_SLACK - 1), JIFFIES_HZ_NONE,
			  "under");
	}
	ASSERT_EQ(choose(x86, 4, 300, 200, -7), 250, "seven_off_is_the_limit");
}

TEST(pairs_running_backwards_are_no_answer)
{
	struct jiffies_pair a = { .jiffies = 1000, .ns = 10 * MS * 1000 };
	struct jiffies_pair b = { .jiffies = 999, .ns = 11 * MS * 1000 };

	ASSERT_EQ(jiffies_hz_choose(&a, &b, x86, 4), JIFFIES_HZ_NONE, "jiffies_back");
	b.jiffies = 1250;
	b.ns = 9 * MS * 1000;
	ASSERT_EQ(jiffies_hz_choose(&a, &b, x86, 4), JIFFIES_HZ_NONE, "clock_back");
}

/* Where HZ can be 250 or 256 (6 ticks a second apart) the pairs must lie
 * 1.7 s apart; a second is too short. */
TEST(wide_candidates_need_a_longer_span)
{
	ASSERT_EQ(choose(wide, sizeof(wide) / sizeof(wide[0]), 256, 1000, 0), JIFFIES_HZ_WAIT,
		  "1s");
	ASSERT_EQ(choose(wide, sizeof(wide) / sizeof(wide[0]), 256, 1700, 1), 256, "1.7s");
	ASSERT_EQ(choose(wide, sizeof(wide) / sizeof(wide[0]), 250, 2000, -2), 250, "2s");
}

TEST(this_architecture_has_candidates)
{
	size_t n;
	const uint32_t *c = jiffies_hz_candidates(&n);

	ASSERT_EQ(n >= 4, 1, "n");
	for (size_t i = 0; i < n; i++)
		ASSERT_EQ(c[i] >= 24 && c[i] <= 1200, 1, "range");
}

UNIT_MAIN()
