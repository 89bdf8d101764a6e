// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Linear probing with backward-shift deletion (no tombstones, so lookups
 * stay short however much churn the tables see). Each slot's header holds
 * the low 32 bits of its key's hash: a probe compares those before the
 * key (a 40-byte tuple: a memcmp a probe at up to 70% load was most of a
 * lookup, 180-430 instructions by callgrind), and deletion and growth
 * take a slot's home from them instead of hashing its key again.
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
	m->slot_size = SLOT_ALIGN + align_up(key_size) + align_up(val_size);
}

void hmap_free(struct hmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->count = 0;
}

void hmap_clear(struct hmap *m)
{
	if (m->slots)
		memset(m->slots, 0, m->cap * m->slot_size);
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
static uint64_t hash_bytes(const void *key, size_t n)
{
	const uint8_t *p = key;
	uint64_t h = hash_seed ^ (n * 0x9e3779b97f4a7c15ULL), w;

	for (; n >= 8; n -= 8, p += 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	if (n) {
		w = 0;
		memcpy(&w, p, n);
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

static uint8_t *slot_at(const struct hmap *m, size_t i)
{
	return m->slots + i * m->slot_size;
}

/* Slot header: byte 0 says used, bytes 4-7 hold the hash's low 32 bits
 * (enough for every index: a table of 2^32 slots is out of reach). */
static uint32_t slot_hash(const uint8_t *s)
{
	uint32_t h;

	memcpy(&h, s + 4, sizeof(h));
	return h;
}

static void *slot_key(const struct hmap *m, uint8_t *s)
{
	return s + SLOT_ALIGN;
}

static void *slot_val(const struct hmap *m, uint8_t *s)
{
	return s + SLOT_ALIGN + align_up(m->key_size);
}

/* Index of key (hashed to h)'s slot, or of the empty slot where it would go. */
static size_t find_hashed(const struct hmap *m, const void *key, uint32_t h)
{
	size_t mask = m->cap - 1, i = h & mask;
	uint8_t *s;

	while ((s = slot_at(m, i))[0] &&
	       (slot_hash(s) != h || memcmp(slot_key(m, s), key, m->key_size)))
		i = (i + 1) & mask;
	return i;
}

static size_t find(const struct hmap *m, const void *key)
{
	return find_hashed(m, key, (uint32_t)hash_bytes(key, m->key_size));
}

/* The first empty slot from h's home: where a key not in m goes. */
static size_t find_empty(const struct hmap *m, uint32_t h)
{
	size_t mask = m->cap - 1, i = h & mask;

	while (slot_at(m, i)[0])
		i = (i + 1) & mask;
	return i;
}

void *hmap_get(const struct hmap *m, const void *key)
{
	uint8_t *s;

	if (!m->cap)
		return NULL;
	s = slot_at(m, find(m, key));
	return s[0] ? slot_val(m, s) : NULL;
}

static int grow(struct hmap *m)
{
	size_t old_cap = m->cap, new_cap = old_cap ? old_cap * 2 : 64;
	uint8_t *old = m->slots, *fresh = calloc(new_cap, m->slot_size);

	if (!fresh)
		return -1;
	m->slots = fresh;
	m->cap = new_cap;
	for (size_t i = 0; i < old_cap; i++) {
		uint8_t *s = old + i * m->slot_size;

		if (s[0])
			memcpy(slot_at(m, find_empty(m, slot_hash(s))), s, m->slot_size);
	}
	free(old);
	return 0;
}

void *hmap_upsert(struct hmap *m, const void *key, bool *created)
{
	uint32_t h = (uint32_t)hash_bytes(key, m->key_size);
	uint8_t *s;

	if (created)
		*created = false;
	if (m->cap) {
		s = slot_at(m, find_hashed(m, key, h));
		if (s[0])
			return slot_val(m, s);
	}
	/* Keep the load under 70% so probe chains stay short. */
	if ((m->count + 1) * 10 > m->cap * 7 && grow(m))
		return NULL;
	s = slot_at(m, find_empty(m, h));
	memset(s, 0, m->slot_size);
	s[0] = 1;
	memcpy(s + 4, &h, sizeof(h));
	memcpy(slot_key(m, s), key, m->key_size);
	m->count++;
	if (created)
		*created = true;
	return slot_val(m, s);
}

bool hmap_del(struct hmap *m, const void *key)
{
	size_t mask, i, j;

	if (!m->cap)
		return false;
	mask = m->cap - 1;
	i = find(m, key);
	if (!slot_at(m, i)[0])
		return false;
	/* Shift back every later entry of the chain that may move into the hole. */
	for (j = (i + 1) & mask; slot_at(m, j)[0]; j = (j + 1) & mask) {
		size_t home = slot_hash(slot_at(m, j)) & mask;

		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			memcpy(slot_at(m, i), slot_at(m, j), m->slot_size);
			i = j;
		}
	}
	memset(slot_at(m, i), 0, m->slot_size);
	m->count--;
	return true;
}

bool hmap_next(const struct hmap *m, size_t *iter, const void **key, void **val)
{
	for (; *iter < m->cap; (*iter)++) {
		uint8_t *s = slot_at(m, *iter);

		if (s[0]) {
			if (key)
				*key = slot_key(m, s);
			if (val)
				*val = slot_val(m, s);
			(*iter)++;
			return true;
		}
	}
	return false;
}
