/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* live_clock: the live tables' TIME column never repeats or skips a
 * second, however late the ticks run (fdleak printed 16:24:56 twice and
 * never 16:24:55 under load; attach printed its last row's time twice). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unit.h"
#include "live_clock.h"

#define S 1000000000ULL

/* A clock started at 12:00:00.7 UTC at monotonic 100 s. */
static void start(struct live_clock *c, double interval_s)
{
	setenv("TZ", "UTC", 1);
	tzset();
	live_clock_init(c, 100 * S, interval_s);
	c->t0_wall_s = 1700049600.7;	/* 2023-11-15 12:00:00.7 UTC */
}

static void label_at(struct live_clock *c, double el_s, char *buf)
{
	live_clock_label(c, 100 * S + (uint64_t)(el_s * 1e9), buf, 16);
}

TEST(jittered_ticks_get_consecutive_seconds)
{
	/* Ticks early, late, very late, and the end 0.3 s after the last. */
	static const double at[] = { 0.98, 2.02, 2.97, 4.45, 5.0, 5.3 };
	static const char *want[] = { "12:00:01", "12:00:02", "12:00:03", "12:00:04",
				      "12:00:05", "12:00:06" };
	struct live_clock c;
	char buf[16];

	start(&c, 1);
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		label_at(&c, at[i], buf);
		ASSERT_STREQ(buf, want[i], "label");
	}
}

/* A wall-clock label would have said 12:00:11 twice: the tick due at
 * 10 s ran at 10.25 s (12:00:10.95) and the run ended at 10.4 s. */
TEST(end_right_after_a_late_tick_is_the_next_second)
{
	struct live_clock c;
	char a[16], b[16];

	start(&c, 1);
	for (int k = 1; k < 10; k++)
		label_at(&c, k, a);
	label_at(&c, 10.25, a);
	label_at(&c, 10.4, b);
	ASSERT_STREQ(a, "12:00:10", "last_tick");
	ASSERT_STREQ(b, "12:00:11", "end");
}

/* In the hour's place: 8 columns, as HH:MM:SS. */
TEST(sub_second_intervals_show_tenths)
{
	struct live_clock c;
	char a[16], b[16], d[16];

	start(&c, 0.5);
	label_at(&c, 0.5, a);
	label_at(&c, 1.02, b);
	label_at(&c, 1.4, d);
	ASSERT_STREQ(a, "00:01.2", "first");
	ASSERT_STREQ(b, "00:01.7", "second");
	ASSERT_STREQ(d, "00:02.2", "third");
}

UNIT_MAIN()
