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

/* Entries are kept dense, in insertion order (a delete moves the last one
 * into the hole), and found through an index of 32-bit slots: entry number
 * + 1 in the low bits, the rest of the slot a tag of the key's hash. A
 * slot-per-entry table of inline keys and values at 70% load held 2.1x
 * the entries' bytes at 1M sockets and touched every page of it; the
 * index costs 4 bytes a slot, and the entries' array grows by realloc(),
 * which moves large blocks by mremap() and leaves unused capacity
 * untouched (`tests/bench/run.sh 5`, the books at 1M sockets). */
struct hmap {
	size_t key_size, val_size, entry_size;
	size_t cap;		/* index slots: a power of two, or 0 before the first insert */
	size_t count;		/* entries */
	size_t entries_cap;	/* entries the array has room for */
	uint32_t *index;
	uint8_t *entries;	/* per entry: key, value (each 8-byte aligned) */
	bool hash_kept;		/* each key's alignment padding holds the low
				 * word of its hash (hashmap.c, home_of) */
};

void hmap_init(struct hmap *m, size_t key_size, size_t val_size);
void hmap_free(struct hmap *m);
/* The value stored under key, or NULL. */
void *hmap_get(const struct hmap *m, const void *key);
/* Lookups in a run (a reconcile's, of every TIME_WAIT a census shows),
 * their cache misses overlapped: each key hashed once (hmap_hash), its
 * index slot fetched some keys ahead (hmap_prefetch_slot), its entry
 * fewer keys ahead (hmap_prefetch_entry, which reads the slot), then
 * hmap_get_hashed, hmap_get's answer. The prefetches are hints: any
 * insert or delete between them costs only their use. */
uint64_t hmap_hash(const struct hmap *m, const void *key);
void hmap_prefetch_slot(const struct hmap *m, uint64_t h);
void hmap_prefetch_entry(const struct hmap *m, uint64_t h);
void *hmap_get_hashed(const struct hmap *m, const void *key, uint64_t h);
/* The value under key, inserted zeroed when absent (*created says which);
 * NULL only when memory runs out. Pointers stay valid until the next insert
 * or delete. */
void *hmap_upsert(struct hmap *m, const void *key, bool *created);
/* hmap_upsert, the entry number *hint names tried first: one comparison
 * of the key where a caller asks for the same key again and again (the
 * endpoint of a process's every connection), no hash and no probe. Any
 * hint is safe: one naming another key, or none, falls back to the
 * lookup, which sets it. */
void *hmap_upsert_hint(struct hmap *m, const void *key, bool *created, size_t *hint);
/* Removes key; returns whether it was there. */
bool hmap_del(struct hmap *m, const void *key);
/* Removes key, its value copied to val first (val may be NULL): a lookup
 * and a delete in one probe. Returns whether it was there. */
bool hmap_take(struct hmap *m, const void *key, void *val);
void hmap_clear(struct hmap *m);

/* Iteration: for (size_t i = 0; hmap_next(m, &i, &k, &v); ) ...
 * Deleting during iteration is not allowed, and neither is keeping a
 * pointer across a delete: a delete moves the last entry into the hole,
 * and an insert may move them all (realloc), so entries move on delete as
 * well as on insert. Collect the keys, delete after the walk. The order is
 * insertion order as changed by deletes; nothing may rely on it. */
bool hmap_next(const struct hmap *m, size_t *iter, const void **key, void **val);

/* This process's hash secret (from getrandom(), made on first use). */
uint64_t hmap_seed(void);

#endif
