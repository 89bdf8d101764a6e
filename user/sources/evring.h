/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Reading BPF ring buffers (BPF_MAP_TYPE_RINGBUF), several as one: the
 * calls of libbpf's ring_buffer, with each ring's data mapped once.
 *
 * libbpf maps a ring's data pages twice in a row, so that a record that
 * wraps round the end reads as one piece; the kernel inserts every page of
 * both mappings at mmap() time, so the agent's RSS carries twice the ring:
 * 16 MiB for the 8 MiB events ring, 8 MiB more for each 4 MiB one. Here
 * the data is mapped once and the rare record that wraps is copied out
 * whole first (#23 item 7: the agent's RSS at 1M sockets). */
#ifndef CONNSCOPE_EVRING_H
#define CONNSCOPE_EVRING_H

#include <stddef.h>
#include <stdint.h>

/* A record's callback: <0 stops the reading (that error is returned). As
 * libbpf's ring_buffer_sample_fn. */
typedef int (*evring_fn)(void *ctx, void *data, size_t size);

struct evring;

/* A reader of the ring map_fd, or NULL with errno set. */
struct evring *evring_new(int map_fd, evring_fn fn, void *ctx);
/* One more ring read with the others. 0 or -errno. */
int evring_add(struct evring *r, int map_fd, evring_fn fn, void *ctx);
/* Every record there now, of every ring: how many, or a callback's error. */
int evring_consume(struct evring *r);
/* Waits up to timeout_ms for a wakeup, then reads what is there. */
int evring_poll(struct evring *r, int timeout_ms);
/* An epoll fd that is readable when a ring has been woken. */
int evring_epoll_fd(const struct evring *r);
void evring_free(struct evring *r);

/* One ring's reading: visible for tests/unit/test_evring.c, which lays
 * out plain memory as the kernel lays out a ring and reads it. */
struct evring_one {
	evring_fn fn;
	void *ctx;
	size_t size;			/* data bytes: a power of two */
	unsigned long *consumer_pos;	/* page 0, read-write */
	void *producer_map;		/* page 1 and the data, read-only */
	unsigned long *producer_pos;
	uint8_t *data;
	uint8_t *wrapped;		/* a record that wraps, copied out whole */
	size_t wrapped_cap;
};

/* Every committed record from the consumer position on: how many, or the
 * callback's error. */
int64_t evring_read_one(struct evring_one *o);

#endif
