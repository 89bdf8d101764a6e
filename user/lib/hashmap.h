/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Open-addressing hash map with fixed-size keys and values stored inline:
 * the aggregator's tables (sock -> connection, 4-tuple -> TIME_WAIT owner,
 * tgid -> process books) are all of this shape and live for the whole run.
 *
 * Ours rather than Debian's uthash (issue #12), by measurement: the books on
 * this API backed by uthash (tests/bench/hashmap_uthash.c, aggbench-uthash)
 * replayed at a median 0.67-0.79 of our events/s with 1.36-1.46x our CPU
 * time (three runs of 9 alternated rounds; `tests/bench/run.sh 8`). uthash
 * with SuperFastHash for Jenkins was no closer, so the cost is its chaining:
 * an allocation and a pointer chase per entry where this table probes inline
 * slots. */
#ifndef CONNSCOPE_HASHMAP_H
#define CONNSCOPE_HASHMAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

struct hmap {
	size_t key_size, val_size, slot_size;
	size_t cap;		/* power of two, or 0 before the first insert */
	size_t count;
	uint8_t *slots;		/* per slot: used byte, key, value (aligned) */
};

void hmap_init(struct hmap *m, size_t key_size, size_t val_size);
void hmap_free(struct hmap *m);
/* The value stored under key, or NULL. */
void *hmap_get(const struct hmap *m, const void *key);
/* The value under key, inserted zeroed when absent (*created says which);
 * NULL only when memory runs out. Pointers stay valid until the next insert
 * or delete. */
void *hmap_upsert(struct hmap *m, const void *key, bool *created);
/* Removes key; returns whether it was there. */
bool hmap_del(struct hmap *m, const void *key);
void hmap_clear(struct hmap *m);

/* Iteration: for (size_t i = 0; hmap_next(m, &i, &k, &v); ) ...
 * Deleting during iteration is not allowed, and neither is keeping a
 * pointer across a delete: a delete shifts later entries of the probe
 * chain back into the hole (no tombstones), so entries move on delete as
 * well as on insert. Collect the keys, delete after the walk. The order
 * differs from one process to the next: the hash is seeded per process
 * (hmap_seed()), so that peers cannot choose colliding 4-tuples. */
bool hmap_next(const struct hmap *m, size_t *iter, const void **key, void **val);

/* This process's hash secret (from getrandom(), made on first use). */
uint64_t hmap_seed(void);

#endif
