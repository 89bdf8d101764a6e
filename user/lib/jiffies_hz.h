/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The kernel's HZ from two (jiffies, clock) pairs (#23 item 6): the census
 * walk's timers come in jiffies, and a wrong HZ would make every expiry
 * wrong, so an answer is given only where no other HZ could explain the
 * pairs. */
#ifndef CONNSCOPE_JIFFIES_HZ_H
#define CONNSCOPE_JIFFIES_HZ_H

#include <stddef.h>
#include <stdint.h>

struct jiffies_pair {
	uint64_t jiffies;
	uint64_t ns;		/* CLOCK_MONOTONIC, read with the jiffies */
};

/* Jiffies counted may differ from a true HZ's ticks over the span by
 * less than one (where each pair fell between two ticks) plus the ticks
 * the timekeeping CPU handled late: SLACK allows 2 late. Candidates'
 * ticks over the span must lie APART from each other, so that a wrong
 * one fits only where the count is off by 7 or more. */
#define JIFFIES_HZ_SLACK 3
#define JIFFIES_HZ_APART 10

#define JIFFIES_HZ_WAIT 0	/* the span is too short to tell them apart */
#define JIFFIES_HZ_NONE (-1)	/* no one candidate fits: start again */

/* The HZ values this architecture's kernels can have. */
const uint32_t *jiffies_hz_candidates(size_t *n);

/* The candidate whose ticks over the span from a to b lie within SLACK
 * of the jiffies counted, or JIFFIES_HZ_WAIT / JIFFIES_HZ_NONE. */
int jiffies_hz_choose(const struct jiffies_pair *a, const struct jiffies_pair *b,
		      const uint32_t *cand, size_t n);

#endif
