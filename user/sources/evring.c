// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The kernel's ring layout (kernel/bpf/ringbuf.c): page 0 of the map is
 * the consumer position, the only page user space may write; page 1 the
 * producer position; the data from page 2, its size a power of two. A
 * record is an 8-byte header (length, with BUSY while the producer still
 * writes it and DISCARD for one given up) and its bytes, rounded up to 8,
 * at position & mask: the header never wraps (the data's size is a
 * multiple of 8), the bytes after it may. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "evring.h"

struct evring {
	struct evring_one *rings;
	int nrings;
	int epoll_fd;
	struct epoll_event *events;	/* one a ring, for epoll_wait */
	size_t page_size;
};

struct evring *evring_new(int map_fd, evring_fn fn, void *ctx)
{
	struct evring *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return NULL;
	r->page_size = (size_t)sysconf(_SC_PAGESIZE);
	r->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (r->epoll_fd < 0) {
		err = -errno;
		goto fail;
	}
	err = evring_add(r, map_fd, fn, ctx);
	if (!err)
		return r;
fail:
	evring_free(r);
	errno = -err;
	return NULL;
}

static void ring_unmap(const struct evring *r, struct evring_one *o)
{
	if (o->consumer_pos)
		munmap(o->consumer_pos, r->page_size);
	if (o->producer_map)
		munmap(o->producer_map, r->page_size + o->size);
	free(o->wrapped);
	memset(o, 0, sizeof(*o));
}

int evring_add(struct evring *r, int map_fd, evring_fn fn, void *ctx)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct evring_one *rings, *o;
	struct epoll_event *events;
	struct epoll_event ev = { .events = EPOLLIN };
	void *m;
	int err;

	if (bpf_obj_get_info_by_fd(map_fd, &info, &len))
		return -errno;
	if (info.type != BPF_MAP_TYPE_RINGBUF || !info.max_entries ||
	    (info.max_entries & (info.max_entries - 1)))
		return -EINVAL;
	rings = realloc(r->rings, (r->nrings + 1) * sizeof(*rings));
	if (!rings)
		return -ENOMEM;
	r->rings = rings;
	events = realloc(r->events, (r->nrings + 1) * sizeof(*events));
	if (!events)
		return -ENOMEM;
	r->events = events;
	o = &r->rings[r->nrings];
	memset(o, 0, sizeof(*o));
	o->fn = fn;
	o->ctx = ctx;
	o->size = info.max_entries;
	m = mmap(NULL, r->page_size, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	o->consumer_pos = m;
	/* The producer page and the data once: the kernel maps any length
	 * up to its double view (remap_vmalloc_range checks the bounds). */
	m = mmap(NULL, r->page_size + o->size, PROT_READ, MAP_SHARED, map_fd,
		 (off_t)r->page_size);
	if (m == MAP_FAILED) {
		err = -errno;
		ring_unmap(r, o);
		return err;
	}
	o->producer_map = m;
	o->producer_pos = m;
	o->data = (uint8_t *)m + r->page_size;
	ev.data.u32 = (uint32_t)r->nrings;
	if (epoll_ctl(r->epoll_fd, EPOLL_CTL_ADD, map_fd, &ev)) {
		err = -errno;
		ring_unmap(r, o);
		return err;
	}
	r->nrings++;
	return 0;
}

/* A record's bytes in one piece: in place, or copied out when they run
 * past the data's end. NULL when no memory is left for the copy. */
static void *record_bytes(struct evring_one *o, unsigned long pos, size_t len)
{
	size_t off = (pos + BPF_RINGBUF_HDR_SZ) & (o->size - 1), first;

	if (off + len <= o->size)
		return o->data + off;
	if (len > o->wrapped_cap) {
		uint8_t *w = realloc(o->wrapped, len);

		if (!w)
			return NULL;
		o->wrapped = w;
		o->wrapped_cap = len;
	}
	first = o->size - off;
	memcpy(o->wrapped, o->data + off, first);
	memcpy(o->wrapped + first, o->data, len - first);
	return o->wrapped;
}

/* Every committed record from the consumer position on, each position
 * given back as soon as its record is read (the producer reuses the
 * space); stops at one still being written. */
int64_t evring_read_one(struct evring_one *o)
{
	unsigned long cons = __atomic_load_n(o->consumer_pos, __ATOMIC_ACQUIRE), prod;
	int64_t n = 0;
	bool more;

	do {
		more = false;
		prod = __atomic_load_n(o->producer_pos, __ATOMIC_ACQUIRE);
		while (cons < prod) {
			uint32_t *hdr = (uint32_t *)(o->data + (cons & (o->size - 1)));
			uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE), bytes;

			if (len & BPF_RINGBUF_BUSY_BIT)
				return n;
			more = true;
			bytes = len & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
			if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
				void *rec = record_bytes(o, cons, bytes);
				int err = rec ? o->fn(o->ctx, rec, bytes) : -ENOMEM;

				if (err < 0) {
					/* As libbpf: the failed record counts read. */
					cons += (bytes + BPF_RINGBUF_HDR_SZ + 7) & ~7UL;
					__atomic_store_n(o->consumer_pos, cons, __ATOMIC_RELEASE);
					return err;
				}
				n++;
			}
			cons += (bytes + BPF_RINGBUF_HDR_SZ + 7) & ~7UL;
			__atomic_store_n(o->consumer_pos, cons, __ATOMIC_RELEASE);
		}
	} while (more);
	return n;
}

int evring_consume(struct evring *r)
{
	int64_t total = 0, n;

	for (int i = 0; i < r->nrings; i++) {
		n = evring_read_one(&r->rings[i]);
		if (n < 0)
			return (int)n;
		total += n;
	}
	return total > INT_MAX ? INT_MAX : (int)total;
}

int evring_poll(struct evring *r, int timeout_ms)
{
	int64_t total = 0, n;
	int ready = epoll_wait(r->epoll_fd, r->events, r->nrings, timeout_ms);

	if (ready < 0)
		return -errno;
	for (int i = 0; i < ready; i++) {
		n = evring_read_one(&r->rings[r->events[i].data.u32]);
		if (n < 0)
			return (int)n;
		total += n;
	}
	return total > INT_MAX ? INT_MAX : (int)total;
}

int evring_epoll_fd(const struct evring *r)
{
	return r->epoll_fd;
}

void evring_free(struct evring *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->nrings; i++)
		ring_unmap(r, &r->rings[i]);
	if (r->epoll_fd >= 0)
		close(r->epoll_fd);
	free(r->rings);
	free(r->events);
	free(r);
}
