// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include "live_clock.h"
#include "timeutil.h"

void live_clock_init(struct live_clock *c, uint64_t t0_ns, double interval_s)
{
	struct timespec ts;
	uint64_t mono = now_ns();

	clock_gettime(CLOCK_REALTIME, &ts);
	c->t0_ns = t0_ns;
	c->t0_wall_s = ts.tv_sec + ts.tv_nsec / 1e9 - (mono > t0_ns ? (mono - t0_ns) / 1e9 : 0);
	c->interval_s = interval_s > 0 ? interval_s : 1;
	c->last_k = 0;
}

/* Nearest integer of x >= 0 (no libm in the link). */
static long near(double x)
{
	return (long)(x + 0.5);
}

void live_clock_label(struct live_clock *c, uint64_t now, char *buf, size_t len)
{
	double el = now > c->t0_ns ? (now - c->t0_ns) / 1e9 : 0;
	long k = near(el / c->interval_s);
	double t, whole, off = c->interval_s - near(c->interval_s);
	time_t secs;
	struct tm tm;
	bool tenths = off > 1e-9 || off < -1e-9;

	if (k <= c->last_k)
		k = c->last_k + 1;
	c->last_k = k;
	t = c->t0_wall_s + k * c->interval_s;
	/* Tenths are rounded, whole seconds truncated, as clocks show them. */
	if (tenths)
		t = near(t * 10) / 10.0;
	whole = (double)(long long)t;
	secs = (time_t)whole;
	localtime_r(&secs, &tm);
	/* Tenths take the hour's place, so the label keeps 8 columns at most
	 * and the live rows their 80. */
	strftime(buf, len, tenths ? "%M:%S" : "%H:%M:%S", &tm);
	if (tenths) {
		size_t n = 0;

		while (n < len && buf[n])
			n++;
		snprintf(buf + n, len - n, ".%d", (int)(near((t - whole) * 10) % 10));
	}
}
