// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Growing an array by doubling (grow.h). realloc() leaves the old block
 * as it was when it fails, so a caller that keeps its old pointer and
 * capacity on -ENOMEM loses nothing it held. */
#include <errno.h>
#include <stdlib.h>
#include "grow.h"

int grow_room_max(void **arr, size_t *cap, size_t used, size_t more, size_t size,
		  size_t first, size_t max)
{
	size_t need, ncap, bytes;
	void *m;

	if (__builtin_add_overflow(used, more, &need) || need > max)
		return -ENOMEM;
	if (need <= *cap)
		return 0;
	/* A first size of 0 would never double. */
	ncap = *cap ? *cap : first ? first : 1;
	if (ncap > max)
		ncap = max;
	while (ncap < need)
		ncap = ncap > max / 2 ? max : ncap * 2;
	if (__builtin_mul_overflow(ncap, size, &bytes))
		return -ENOMEM;
	m = realloc(*arr, bytes ? bytes : 1);
	if (!m)
		return -ENOMEM;
	*arr = m;
	*cap = ncap;
	return 0;
}
