// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Sorting u64 in place: a least-significant-digit radix sort over the bits
 * in which the values differ (their span), 11 bits a pass. The books'
 * queued concurrency changes (reuse.c: a time in ns and a bit each, tens
 * of thousands an interval in a churn) span about a second, 31 bits: three
 * passes of a count and a scatter, where qsort compared through a callback
 * n log n times (the sort was 3-4.5% of the agent's CPU in a churn: #23
 * item 6). Already sorted (an interval with nothing new): one look. A few,
 * or no room for the second buffer: qsort. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "u64sort.h"

#define DIGIT_BITS 11
#define RADIX_MIN 64	/* below this, qsort's own (insertion) sort is as quick */

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

void u64_sort(uint64_t *v, size_t n)
{
	size_t count[1u << DIGIT_BITS];
	uint64_t lo, hi, span, *src = v, *dst, *tmp;
	bool sorted = true;

	if (n < 2)
		return;
	lo = hi = v[0];
	for (size_t i = 1; i < n; i++) {
		if (v[i] < v[i - 1])
			sorted = false;
		if (v[i] < lo)
			lo = v[i];
		if (v[i] > hi)
			hi = v[i];
	}
	if (sorted)
		return;
	tmp = n >= RADIX_MIN ? malloc(n * sizeof(*tmp)) : NULL;
	if (!tmp) {
		qsort(v, n, sizeof(*v), cmp_u64);
		return;
	}
	dst = tmp;
	span = hi - lo;
	/* Stable passes, low digit first: the order is by every digit. */
	for (unsigned int shift = 0; shift < 64 && (span >> shift); shift += DIGIT_BITS) {
		uint64_t *swap;
		size_t at = 0;

		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[((src[i] - lo) >> shift) & ((1u << DIGIT_BITS) - 1)]++;
		for (size_t d = 0; d < (1u << DIGIT_BITS); d++) {
			size_t c = count[d];

			count[d] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[((src[i] - lo) >> shift) & ((1u << DIGIT_BITS) - 1)]++] = src[i];
		swap = src;
		src = dst;
		dst = swap;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
}
