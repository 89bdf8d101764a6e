/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* u64sort: u64_sort against qsort on the same arrays: sizes on both sides
 * of its radix threshold, spans from none (all equal) through a second of
 * nanoseconds (reuse.c's queued changes) to the whole 64 bits, input sorted,
 * reversed, random and nearly sorted. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "u64sort.h"

static uint64_t rnd_state = 0x2545f4914f6cdd1dULL;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static int cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

enum shape { RANDOM, SORTED, REVERSED, NEARLY };

/* n values base + [0, span) (span 0: the whole 64 bits) in shape, sorted
 * by both; the two must agree element by element. */
static void check(size_t n, uint64_t base, uint64_t span, enum shape shape)
{
	uint64_t *a = malloc((n ? n : 1) * sizeof(*a)), *b = malloc((n ? n : 1) * sizeof(*b));

	ASSERT_TRUE(a && b, "malloc");
	for (size_t i = 0; i < n; i++)
		a[i] = base + (span ? rnd() % span : rnd());
	if (shape != RANDOM)
		qsort(a, n, sizeof(*a), cmp);
	if (shape == REVERSED)
		for (size_t i = 0; i < n / 2; i++) {
			uint64_t t = a[i];

			a[i] = a[n - 1 - i];
			a[n - 1 - i] = t;
		}
	if (shape == NEARLY)	/* an open queued after the closes that follow it */
		for (size_t i = 0; i + 40 < n; i += 97) {
			uint64_t t = a[i];

			memmove(a + i, a + i + 1, 40 * sizeof(*a));
			a[i + 40] = t;
		}
	memcpy(b, a, n * sizeof(*a));
	u64_sort(a, n);
	qsort(b, n, sizeof(*b), cmp);
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i]) {
			char label[128];

			snprintf(label, sizeof(label), "n=%zu span=%llu shape=%d: [%zu] against qsort",
				 n, (unsigned long long)span, (int)shape, i);
			ASSERT_EQ(a[i], b[i], label);
		}
	free(a);
	free(b);
}

TEST(sizes_around_the_threshold)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 63, 64, 65, 1000, 4099 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (int s = RANDOM; s <= NEARLY; s++)
			check(sizes[i], 1ULL << 40, 2000000000ULL, s);
}

TEST(spans_from_none_to_all_bits)
{
	/* 1: all equal; 2047/2048: one pass's digit; 2^31: a second's ns
	 * (three passes); 0: all 64 bits (six, the last of 9 bits). */
	static const uint64_t spans[] = { 1, 2, 2047, 2048, 2049, 1ULL << 31, 1ULL << 53, 0 };

	for (size_t i = 0; i < sizeof(spans) / sizeof(spans[0]); i++)
		for (int s = RANDOM; s <= NEARLY; s++)
			check(20000, spans[i] ? 7 : 0, spans[i], s);
}

TEST(extremes_of_the_range)
{
	uint64_t v[100];

	for (size_t i = 0; i < 100; i++)
		v[i] = i % 3 == 0 ? UINT64_MAX : i % 3 == 1 ? 0 : UINT64_MAX / 2 + i;
	u64_sort(v, 100);
	for (size_t i = 1; i < 100; i++)
		ASSERT_TRUE(v[i - 1] <= v[i], "ascending");
	ASSERT_TRUE(v[0] == 0, "0 first");
	ASSERT_TRUE(v[99] == UINT64_MAX, "UINT64_MAX last");
}

UNIT_MAIN()
