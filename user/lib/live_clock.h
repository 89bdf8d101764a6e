/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The TIME column of the live tables (attach, fdleak): each row is
 * labelled with the end of its interval as scheduled (start + k x
 * interval), not with the wall clock when it was printed, so a tick that
 * runs late under load never repeats or skips a second, and the last,
 * shorter interval at the end of a run gets the next label, never the
 * one before again. */
#ifndef CONNSCOPE_LIVE_CLOCK_H
#define CONNSCOPE_LIVE_CLOCK_H

#include <stddef.h>
#include <stdint.h>

struct live_clock {
	uint64_t t0_ns;		/* CLOCK_MONOTONIC at the start */
	double t0_wall_s;	/* the same moment on the wall clock */
	double interval_s;
	long last_k;		/* the last interval labelled */
};

/* Starts at t0_ns (now_ns() clock) with the wall clock read now. */
void live_clock_init(struct live_clock *c, uint64_t t0_ns, double interval_s);

/* The label for a row of the tick due at now_ns (run_loop's due_ns: a
 * tick run late, even by more than half an interval, keeps its own time),
 * or of the run's end at now_ns: "HH:MM:SS" (local time), or "MM:SS.d"
 * with tenths when the interval is not whole seconds. k is the nearest
 * interval end, and always one more than the last. */
void live_clock_label(struct live_clock *c, uint64_t now_ns, char *buf, size_t len);

#endif
