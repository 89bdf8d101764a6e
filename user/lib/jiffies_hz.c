// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "jiffies_hz.h"

const uint32_t *jiffies_hz_candidates(size_t *n)
{
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)
	/* kernel/Kconfig.hz's choices, the only ones these architectures
	 * offer: 50 ticks a second apart at least, told apart in 0.2 s. */
	static const uint32_t hz[] = { 100, 250, 300, 1000 };
#else
	/* Elsewhere some kernels have their own (mips, alpha, ...): 250
	 * and 256 need a span of 1.7 s. */
	static const uint32_t hz[] = { 24, 32, 48, 64, 100, 128, 200, 250, 256, 300,
				       512, 1000, 1024, 1200 };
#endif
	*n = sizeof(hz) / sizeof(hz[0]);
	return hz;
}

static double dist(double x, double y)
{
	return x > y ? x - y : y - x;
}

int jiffies_hz_choose(const struct jiffies_pair *a, const struct jiffies_pair *b,
		      const uint32_t *cand, size_t n)
{
	double span, counted;
	int fit = JIFFIES_HZ_NONE;

	if (b->ns <= a->ns || b->jiffies < a->jiffies)
		return JIFFIES_HZ_NONE;
	span = (double)(b->ns - a->ns) / 1e9;
	counted = (double)(b->jiffies - a->jiffies);
	for (size_t i = 0; i < n; i++)
		for (size_t k = i + 1; k < n; k++)
			if (dist(cand[i] * span, cand[k] * span) < JIFFIES_HZ_APART)
				return JIFFIES_HZ_WAIT;
	/* APART > 2 * SLACK: at most one fits. */
	for (size_t i = 0; i < n; i++)
		if (dist(counted, cand[i] * span) <= JIFFIES_HZ_SLACK)
			fit = (int)cand[i];
	return fit;
}
