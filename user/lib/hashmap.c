// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* An index of 32-bit slots, linear probing with backward-shift deletion
 * (no tombstones, so lookups stay short however much churn the tables
 * see), over a dense array of entries. A slot holds its entry's number + 1
 * in the low log2(cap) bits and, above them, the same bits of the key's
 * hash's high word: a probe compares those before it reads the entry (a
 * 40-byte tuple: a memcmp a probe at up to 70% load was most of a lookup,
 * 180-430 instructions by callgrind), and a tag that matches by chance
 * costs one key comparison. The load stays under 70%, so an entry number
 * always fits below the tag (count < cap).
 *
 * Keys include 4-tuples whose remote half a peer chooses: with a fixed
 * hash anyone who can reach a traced server could precompute ports that
 * all land in one probe chain and turn every lookup linear. The hash is
 * keyed with a per-process secret from getrandom(), so chains depend on
 * something the peer cannot know. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include "hashmap.h"

#define SLOT_ALIGN 8

static size_t align_up(size_t n)
{
	return (n + SLOT_ALIGN - 1) & ~(size_t)(SLOT_ALIGN - 1);
}

void hmap_init(struct hmap *m, size_t key_size, size_t val_size)
{
	memset(m, 0, sizeof(*m));
	m->key_size = key_size;
	m->val_size = val_size;
	m->entry_size = align_up(key_size) + align_up(val_size);
	/* A key that leaves 4 bytes of its 8-byte alignment free (the
	 * 44-byte 4-tuple, the 20-byte endpoint, and the 4-byte pid and
	 * inode keys) keeps its hash's low word there: a delete finds the
	 * home slot of each entry it moves without hashing its key again,
	 * at no memory. */
	m->hash_kept = align_up(key_size) - key_size >= sizeof(uint32_t);
}

void hmap_free(struct hmap *m)
{
	free(m->index);
	free(m->entries);
	m->index = NULL;
	m->entries = NULL;
	m->cap = m->count = m->entries_cap = 0;
}

void hmap_clear(struct hmap *m)
{
	if (m->index)
		memset(m->index, 0, m->cap * sizeof(*m->index));
	m->count = 0;
}

static uint64_t hash_seed;

/* Before main() and before other constructors (priority 101, the first
 * one not reserved), so no map ever hashes with another seed and the hot
 * path needs no check. getrandom() does not block once the pool is
 * initialised, long before anyone runs an agent; should it fail anyway
 * (seccomp, an old kernel), time and pid still differ per run, which
 * beats a constant. */
__attribute__((constructor(101))) static void seed_init(void)
{
	uint64_t s = 0;

	if (getrandom(&s, sizeof(s), GRND_NONBLOCK) != sizeof(s)) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		s = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^ (uint64_t)ts.tv_sec << 32 ^
		    (uint64_t)getpid();
	}
	hash_seed = s | 1;
}

uint64_t hmap_seed(void)
{
	return hash_seed;
}

/* Eight bytes a step, each folded in with a multiply and a shift, started
 * from the secret seed, then a murmur-style finaliser so that keys
 * differing only in high bytes (kernel addresses) spread over the low bits.
 * A byte-wise FNV-1a made a 40-byte 4-tuple cost 40 dependent multiplies:
 * twice uthash's time per operation in tests/bench/hashbench.c. Not a MAC,
 * but the chains a key lands in are not computable from outside the
 * process. */
static inline __attribute__((always_inline)) uint64_t hash_bytes(const void *key, size_t n)
{
	const uint8_t *p = key;
	uint64_t h = hash_seed ^ (n * 0x9e3779b97f4a7c15ULL), w;

	/* The sock tables' keys, the most hashed: no loop (the same value). */
	if (n == 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
		n = 0;
	}
	for (; n >= 8; n -= 8, p += 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	/* The tail in fixed-size loads, where a memcpy of n bytes was a
	 * call of ~37 instructions (a 44-byte 4-tuple's and a 20-byte
	 * endpoint's last 4; #23 item 6). The same word as memcpy(&w, p, n)
	 * on a little-endian machine; any word will do on another, the hash
	 * being this process's own. */
	if (n) {
		unsigned int shift = 0;

		w = 0;
		if (n & 4) {
			uint32_t x;

			memcpy(&x, p, 4);
			w = x;
			p += 4;
			shift = 32;
		}
		if (n & 2) {
			uint16_t x;

			memcpy(&x, p, 2);
			w |= (uint64_t)x << shift;
			p += 2;
			shift += 16;
		}
		if (n & 1)
			w |= (uint64_t)*p << shift;
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	h ^= hash_seed;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/* m's keys hashed, the sizes of the books' busiest tables (a 4-tuple, 44
 * bytes; an endpoint, 20) with their length known to the compiler, which
 * then unrolls the loop: a record hashes four or five such keys (#23 item
 * 6). Any other size, the loop. */
static inline __attribute__((always_inline)) uint64_t hash_key(const struct hmap *m,
							       const void *key)
{
	switch (m->key_size) {
	case 8:
		return hash_bytes(key, 8);
	case 20:
		return hash_bytes(key, 20);
	case 44:
		return hash_bytes(key, 44);
	default:
		return hash_bytes(key, m->key_size);
	}
}

/* Index slots at or below this load (of 10): longer chains past it. */
#define MAX_LOAD_10 7
#define INDEX_MIN 16
#define ENTRIES_MIN 4

static uint8_t *entry_at(const struct hmap *m, size_t n)
{
	return m->entries + n * m->entry_size;
}

static void *entry_val(const struct hmap *m, uint8_t *e)
{
	return e + align_up(m->key_size);
}

static bool key_eq(const struct hmap *m, const uint8_t *e, const void *key)
{
	/* The books' key sizes (hash_key) compared as loads the compiler
	 * inlines, not a memcmp call: an endpoint's 20 bytes are compared
	 * four times a record (the hint's check). Any other size, memcmp. */
	switch (m->key_size) {
	case 8: {
		uint64_t a, b;

		memcpy(&a, e, 8);
		memcpy(&b, key, 8);
		return a == b;
	}
	case 20:
		return !memcmp(e, key, 20);
	case 44:
		return !memcmp(e, key, 44);
	default:
		return !memcmp(e, key, m->key_size);
	}
}

/* The bits of a slot above the entry number: the hash's high word's. */
static uint32_t tag_mask(const struct hmap *m)
{
	return ~(uint32_t)(m->cap - 1);
}

static uint32_t tag_of(const struct hmap *m, uint64_t h)
{
	return (uint32_t)(h >> 32) & tag_mask(m);
}

/* Index slot of key (hashed to h), or of the empty slot where it would go. */
static size_t find_hashed(const struct hmap *m, const void *key, uint64_t h)
{
	size_t mask = m->cap - 1, i = h & mask;
	uint32_t tmask = tag_mask(m), tag = tag_of(m, h), s;

	while ((s = m->index[i]) &&
	       ((s & tmask) != tag || !key_eq(m, entry_at(m, (s & ~tmask) - 1), key)))
		i = (i + 1) & mask;
	return i;
}

/* The first empty slot from h's home: where a key not in m goes. */
static size_t find_empty(const struct hmap *m, uint64_t h)
{
	size_t mask = m->cap - 1, i = h & mask;

	while (m->index[i])
		i = (i + 1) & mask;
	return i;
}

/* Where an entry keeps its hash's low word (hash_kept). */
static uint8_t *kept_hash_at(const struct hmap *m, uint8_t *e)
{
	return e + m->key_size;
}

/* The home slot of entry n: its kept hash, else its key hashed again
 * (the slot keeps too few of the hash's bits). The index has at most
 * 2^31 slots: the low word holds every bit of a home. */
static size_t home_of(const struct hmap *m, size_t n)
{
	if (m->hash_kept) {
		uint32_t h;

		memcpy(&h, kept_hash_at(m, entry_at(m, n)), sizeof(h));
		return h & (m->cap - 1);
	}
	return hash_key(m, entry_at(m, n)) & (m->cap - 1);
}

void *hmap_get(const struct hmap *m, const void *key)
{
	uint32_t s;

	if (!m->cap)
		return NULL;
	s = m->index[find_hashed(m, key, hash_key(m, key))];
	return s ? entry_val(m, entry_at(m, (s & ~tag_mask(m)) - 1)) : NULL;
}

uint64_t hmap_hash(const struct hmap *m, const void *key)
{
	return hash_key(m, key);
}

void hmap_prefetch_slot(const struct hmap *m, uint64_t h)
{
	if (m->cap)
		__builtin_prefetch(&m->index[h & (m->cap - 1)]);
}

void hmap_prefetch_entry(const struct hmap *m, uint64_t h)
{
	uint32_t s, tmask;

	if (!m->cap)
		return;
	s = m->index[h & (m->cap - 1)];
	tmask = tag_mask(m);
	if (s && (s & tmask) == tag_of(m, h))
		__builtin_prefetch(entry_at(m, (s & ~tmask) - 1));
}

void *hmap_get_hashed(const struct hmap *m, const void *key, uint64_t h)
{
	uint32_t s;

	if (!m->cap)
		return NULL;
	s = m->index[find_hashed(m, key, h)];
	return s ? entry_val(m, entry_at(m, (s & ~tag_mask(m)) - 1)) : NULL;
}

/* A new index of twice the slots, filled from the entries. */
static int grow_index(struct hmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : INDEX_MIN;
	uint32_t *fresh;

	/* An entry number + 1 and at least one tag bit in 32 bits. */
	if (cap > (1UL << 31))
		return -1;
	fresh = calloc(cap, sizeof(*fresh));
	if (!fresh)
		return -1;
	free(m->index);
	m->index = fresh;
	m->cap = cap;
	for (size_t n = 0; n < m->count; n++) {
		uint64_t h = hash_key(m, entry_at(m, n));

		m->index[find_empty(m, h)] = tag_of(m, h) | (uint32_t)(n + 1);
	}
	return 0;
}

/* Room for entries_cap entries (realloc: the entries may move). */
static int resize_entries(struct hmap *m, size_t entries_cap)
{
	uint8_t *e = realloc(m->entries, entries_cap * m->entry_size);

	if (!e)
		return -1;
	m->entries = e;
	m->entries_cap = entries_cap;
	return 0;
}

void *hmap_upsert(struct hmap *m, const void *key, bool *created)
{
	uint64_t h = hash_key(m, key);
	uint8_t *e;
	size_t i;

	if (created)
		*created = false;
	if (m->cap) {
		i = find_hashed(m, key, h);
		if (m->index[i])
			return entry_val(m, entry_at(m, (m->index[i] & ~tag_mask(m)) - 1));
	}
	if ((m->count + 1) * 10 > m->cap * MAX_LOAD_10 && grow_index(m))
		return NULL;
	if (m->count == m->entries_cap &&
	    resize_entries(m, m->entries_cap ? m->entries_cap * 2 : ENTRIES_MIN))
		return NULL;
	e = entry_at(m, m->count);
	memset(e, 0, m->entry_size);
	memcpy(e, key, m->key_size);
	if (m->hash_kept) {
		uint32_t lo = (uint32_t)h;

		memcpy(kept_hash_at(m, e), &lo, sizeof(lo));
	}
	m->index[find_empty(m, h)] = tag_of(m, h) | (uint32_t)(m->count + 1);
	m->count++;
	if (created)
		*created = true;
	return entry_val(m, e);
}

void *hmap_upsert_hint(struct hmap *m, const void *key, bool *created, size_t *hint)
{
	uint8_t *v;

	if (*hint < m->count && key_eq(m, entry_at(m, *hint), key)) {
		if (created)
			*created = false;
		return entry_val(m, entry_at(m, *hint));
	}
	v = hmap_upsert(m, key, created);
	if (v)
		*hint = (size_t)(v - align_up(m->key_size) - m->entries) / m->entry_size;
	return v;
}

/* The index slot that holds entry n. */
static size_t slot_of(const struct hmap *m, size_t n)
{
	size_t mask = m->cap - 1, i = home_of(m, n);

	while ((m->index[i] & ~tag_mask(m)) != n + 1)
		i = (i + 1) & mask;
	return i;
}

bool hmap_del(struct hmap *m, const void *key)
{
	return hmap_take(m, key, NULL);
}

bool hmap_take(struct hmap *m, const void *key, void *val)
{
	size_t mask, i, j, n, last;
	uint32_t tmask;

	if (!m->cap)
		return false;
	mask = m->cap - 1;
	tmask = tag_mask(m);
	i = find_hashed(m, key, hash_key(m, key));
	if (!m->index[i])
		return false;
	n = (m->index[i] & ~tmask) - 1;
	if (val)
		memcpy(val, entry_val(m, entry_at(m, n)), m->val_size);
	/* Shift back every later slot of the chain that may move into the hole. */
	for (j = (i + 1) & mask; m->index[j]; j = (j + 1) & mask) {
		size_t home = home_of(m, (m->index[j] & ~tmask) - 1);

		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			m->index[i] = m->index[j];
			i = j;
		}
	}
	m->index[i] = 0;
	/* The last entry fills the hole: the array stays dense. */
	last = m->count - 1;
	if (n != last) {
		size_t s = slot_of(m, last);

		memcpy(entry_at(m, n), entry_at(m, last), m->entry_size);
		m->index[s] = (m->index[s] & tmask) | (uint32_t)(n + 1);
	}
	m->count--;
	/* Give back what a burst left: a quarter used, halve the array. */
	if (m->entries_cap > 64 && m->count * 4 < m->entries_cap)
		resize_entries(m, m->entries_cap / 2);
	return true;
}

bool hmap_next(const struct hmap *m, size_t *iter, const void **key, void **val)
{
	uint8_t *e;

	if (*iter >= m->count)
		return false;
	e = entry_at(m, (*iter)++);
	if (key)
		*key = e;
	if (val)
		*val = entry_val(m, e);
	return true;
}
