/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* grow: the first size, the doubling, the jump past several doublings, no
 * realloc while there is room, the bound, and every failure (count or
 * bytes overflowing, memory running out) leaving the array and its
 * capacity as they were. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "grow.h"

/* Under AddressSanitizer an impossible malloc() returns NULL, as it does
 * without it, instead of ending the test: the out-of-memory case below
 * needs it. */
__attribute__((used, visibility("default"))) const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

TEST(first_size_then_doubling)
{
	int *v = NULL;
	size_t cap = 0;

	ASSERT_EQ(grow_room((void **)&v, &cap, 0, 1, sizeof(*v), 64), 0, "first");
	ASSERT_TRUE(v != NULL, "allocated");
	ASSERT_EQ(cap, 64, "first size");
	for (int i = 0; i < 64; i++)
		v[i] = i;
	/* Room while used + more fit: nothing moves. */
	ASSERT_EQ(grow_room((void **)&v, &cap, 63, 1, sizeof(*v), 64), 0, "room");
	ASSERT_EQ(cap, 64, "no growth while there is room");
	ASSERT_EQ(grow_room((void **)&v, &cap, 64, 1, sizeof(*v), 64), 0, "full");
	ASSERT_EQ(cap, 128, "doubled");
	for (int i = 0; i < 64; i++)
		ASSERT_EQ(v[i], i, "kept across the realloc");
	v[127] = 127;	/* the whole new room is usable (asan says if not) */
	free(v);
}

TEST(many_more_at_once_doubles_until_they_fit)
{
	char *v = NULL;
	size_t cap = 0;

	ASSERT_EQ(grow_room((void **)&v, &cap, 0, 1000, 1, 16), 0, "first");
	ASSERT_EQ(cap, 1024, "16 doubled six times");
	ASSERT_EQ(grow_room((void **)&v, &cap, 1024, 5000, 1, 16), 0, "more");
	ASSERT_EQ(cap, 8192, "1024 doubled three times");
	memset(v, 1, cap);
	free(v);
}

TEST(first_size_zero_starts_at_one)
{
	char *v = NULL;
	size_t cap = 0;

	ASSERT_EQ(grow_room((void **)&v, &cap, 0, 1, 1, 0), 0, "grow");
	ASSERT_EQ(cap, 1, "one");
	ASSERT_EQ(grow_room((void **)&v, &cap, 1, 2, 1, 0), 0, "grow");
	ASSERT_EQ(cap, 4, "1 doubled twice");
	free(v);
}

TEST(bound_clamps_the_last_doubling_and_refuses_past_it)
{
	char *v = NULL;
	size_t cap = 0;

	ASSERT_EQ(grow_room_max((void **)&v, &cap, 0, 1, 1, 16, 40), 0, "first");
	ASSERT_EQ(cap, 16, "first");
	ASSERT_EQ(grow_room_max((void **)&v, &cap, 16, 1, 1, 16, 40), 0, "second");
	ASSERT_EQ(cap, 32, "doubled");
	ASSERT_EQ(grow_room_max((void **)&v, &cap, 32, 1, 1, 16, 40), 0, "third");
	ASSERT_EQ(cap, 40, "clamped to the bound");
	ASSERT_EQ(grow_room_max((void **)&v, &cap, 40, 1, 1, 16, 40), -ENOMEM, "past it");
	ASSERT_EQ(cap, 40, "capacity untouched");
	memset(v, 1, cap);
	free(v);
}

/* Every failure leaves the old block and its capacity as they were. */
static void refused(size_t used, size_t more, size_t size, const char *what)
{
	char *v = NULL, *old;
	size_t cap = 0;

	ASSERT_EQ(grow_room((void **)&v, &cap, 0, 8, 1, 8), 0, "setup");
	memcpy(v, "kept it", 8);
	old = v;
	ASSERT_EQ(grow_room((void **)&v, &cap, used, more, size, 8), -ENOMEM, what);
	ASSERT_TRUE(v == old, "array untouched");
	ASSERT_EQ(cap, 8, "capacity untouched");
	ASSERT_TRUE(memcmp(v, "kept it", 8) == 0, "contents untouched");
	free(v);
}

TEST(count_overflow_refused)
{
	refused(SIZE_MAX, 1, 1, "used + more overflows");
}

TEST(bytes_overflow_refused)
{
	refused(8, 1, SIZE_MAX / 8, "16 elements of SIZE_MAX / 8 bytes");
}

TEST(out_of_memory_refused)
{
	/* 2^62 bytes: no overflow, no machine has it. */
	refused(8, 1, (size_t)1 << 58, "2^62 bytes");
}

UNIT_MAIN()
