/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Growing an array by doubling: the one copy of what user/ wrote by hand
 * in a dozen places (grow.c says how). */
#ifndef CONNSCOPE_GROW_H
#define CONNSCOPE_GROW_H

#include <stddef.h>
#include <stdint.h>

/* Room in *arr (*cap elements of size bytes, the first used of them in
 * use) for more elements after them. The capacity starts at first and
 * doubles until used + more fit, never past max elements. Returns 0, or
 * -ENOMEM with *arr and *cap untouched: memory ran out, or the count or
 * the bytes would overflow or pass max. Whoever counts drops counts them
 * on a nonzero return. The new room is not zeroed. */
int grow_room_max(void **arr, size_t *cap, size_t used, size_t more, size_t size,
		  size_t first, size_t max);

/* The same without a bound of its own (the bytes still must fit). */
static inline int grow_room(void **arr, size_t *cap, size_t used, size_t more, size_t size,
			    size_t first)
{
	return grow_room_max(arr, cap, used, more, size, first, SIZE_MAX);
}

#endif
