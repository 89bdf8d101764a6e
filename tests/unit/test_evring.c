/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* evring: the ring reader over plain memory laid out as the kernel lays
 * out a BPF ring (8-byte headers with BUSY and DISCARD, lengths rounded up
 * to 8, positions that only grow and wrap by the mask), the data mapped
 * once: every record read whole and in order, also one whose bytes run
 * past the data's end; a discarded one skipped, a busy one ends the read
 * and is read once done; the consumer position given back. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>

#include "unit.h"
#include "evring.h"

#define RING_SIZE 256

struct fake {
	struct evring_one o;
	unsigned long cons, prod;
	uint8_t data[RING_SIZE];
	/* What the callback saw: each record's first byte and length. */
	uint8_t first[64];
	size_t len[64];
	int n;
	bool intact;	/* every byte of every record as written */
	int stop_at;	/* the callback fails on this record (-1: never) */
};

static int on_record(void *ctx, void *data, size_t size)
{
	struct fake *f = ctx;
	const uint8_t *b = data;

	if (f->n == f->stop_at)
		return -42;
	for (size_t i = 0; i < size; i++)
		if (b[i] != (uint8_t)(b[0] + i))
			f->intact = false;
	f->first[f->n] = b[0];
	f->len[f->n] = size;
	f->n++;
	return 0;
}

static void fake_init(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	f->o.fn = on_record;
	f->o.ctx = f;
	f->o.size = RING_SIZE;
	f->o.consumer_pos = &f->cons;
	f->o.producer_pos = &f->prod;
	f->o.data = f->data;
	f->intact = true;
	f->stop_at = -1;
}

/* The producer's side: a record of len bytes counting up from tag at the
 * producer position, its header flags as given; returns where it is. */
static unsigned long put(struct fake *f, uint8_t tag, uint32_t len, uint32_t flags)
{
	unsigned long at = f->prod;
	uint32_t hdr = len | flags;

	memcpy(f->data + (at & (RING_SIZE - 1)), &hdr, sizeof(hdr));
	for (uint32_t i = 0; i < len; i++)
		f->data[(at + BPF_RINGBUF_HDR_SZ + i) & (RING_SIZE - 1)] = (uint8_t)(tag + i);
	f->prod += (len + BPF_RINGBUF_HDR_SZ + 7) & ~7UL;
	return at;
}

static void set_flags(struct fake *f, unsigned long at, uint32_t len, uint32_t flags)
{
	uint32_t hdr = len | flags;

	memcpy(f->data + (at & (RING_SIZE - 1)), &hdr, sizeof(hdr));
}

TEST(records_read_in_order_and_position_given_back)
{
	struct fake f;

	fake_init(&f);
	put(&f, 10, 20, 0);
	put(&f, 50, 3, 0);
	put(&f, 90, 64, 0);
	ASSERT_EQ(evring_read_one(&f.o), 3, "records read");
	ASSERT_EQ(f.first[0], 10, "first");
	ASSERT_EQ(f.len[1], 3, "second's length");
	ASSERT_EQ(f.first[2], 90, "third");
	ASSERT_TRUE(f.intact, "bytes as written");
	ASSERT_EQ(f.cons, f.prod, "consumer position at the producer's");
	ASSERT_EQ(evring_read_one(&f.o), 0, "nothing more");
}

TEST(record_that_wraps_is_read_whole)
{
	struct fake f;

	fake_init(&f);
	/* Past the first lap, then records of 60 bytes (68 with the header,
	 * 72 rounded) until one runs over the end of the data. */
	f.cons = f.prod = 3 * RING_SIZE + 100;
	put(&f, 1, 60, 0);	/* header at 100, bytes 108..167 */
	put(&f, 2, 60, 0);	/* 172, 180..239 */
	put(&f, 3, 60, 0);	/* 244, bytes 252..255 then 0..55 */
	put(&f, 4, 8, 0);	/* 60 of the next lap */
	ASSERT_EQ(evring_read_one(&f.o), 4, "records read");
	ASSERT_EQ(f.first[2], 3, "the wrapped one");
	ASSERT_EQ(f.len[2], 60, "its length");
	ASSERT_TRUE(f.intact, "every byte of the wrapped one in order");
	ASSERT_EQ(f.first[3], 4, "the one after");
	ASSERT_EQ(f.cons, f.prod, "consumer position at the producer's");
	free(f.o.wrapped);	/* the reader's copy (evring_free's, in a real one) */
}

TEST(header_in_the_last_bytes_reads_from_the_start)
{
	struct fake f;

	fake_init(&f);
	f.cons = f.prod = RING_SIZE - BPF_RINGBUF_HDR_SZ;
	put(&f, 7, 16, 0);
	ASSERT_EQ(evring_read_one(&f.o), 1, "records read");
	ASSERT_EQ(f.first[0], 7, "its bytes from the data's start");
	ASSERT_TRUE(f.intact, "bytes as written");
	free(f.o.wrapped);
}

TEST(discarded_skipped_busy_waits)
{
	struct fake f;
	unsigned long busy;

	fake_init(&f);
	put(&f, 1, 8, 0);
	put(&f, 2, 8, BPF_RINGBUF_DISCARD_BIT);
	busy = put(&f, 3, 8, BPF_RINGBUF_BUSY_BIT);
	put(&f, 4, 8, 0);
	ASSERT_EQ(evring_read_one(&f.o), 1, "read up to the busy one");
	ASSERT_EQ(f.first[0], 1, "the committed one");
	ASSERT_EQ(f.cons, busy, "consumer position at the busy one");
	set_flags(&f, busy, 8, 0);
	ASSERT_EQ(evring_read_one(&f.o), 2, "the rest once committed");
	ASSERT_EQ(f.first[1], 3, "the busy one, now committed");
	ASSERT_EQ(f.first[2], 4, "the last");
	ASSERT_EQ(f.cons, f.prod, "consumer position at the producer's");
}

TEST(callback_error_stops_past_its_record)
{
	struct fake f;

	fake_init(&f);
	put(&f, 1, 8, 0);
	put(&f, 2, 8, 0);
	put(&f, 3, 8, 0);
	f.stop_at = 1;
	ASSERT_EQ(evring_read_one(&f.o), -42, "the callback's error");
	ASSERT_EQ(f.cons, 32UL, "past the failed record, as libbpf");
	f.stop_at = -1;
	ASSERT_EQ(evring_read_one(&f.o), 1, "the rest");
	ASSERT_EQ(f.first[1], 3, "the third");
}

UNIT_MAIN()
