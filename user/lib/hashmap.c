// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Linear probing with backward-shift deletion (no tombstones, so lookups
 * stay short however much churn the tables see). */
#include <stdlib.h>
#include <string.h>
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

/* FNV-1a, then a murmur-style finaliser so that keys differing only in
 * high bytes (kernel addresses) spread over the low bits. */
static uint64_t hash_bytes(const void *key, size_t n)
{
	const uint8_t *p = key;
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

static uint8_t *slot_at(const struct hmap *m, size_t i)
{
	return m->slots + i * m->slot_size;
}

static void *slot_key(const struct hmap *m, uint8_t *s)
{
	return s + SLOT_ALIGN;
}

static void *slot_val(const struct hmap *m, uint8_t *s)
{
	return s + SLOT_ALIGN + align_up(m->key_size);
}

/* Index of key's slot, or of the empty slot where it would go. */
static size_t find(const struct hmap *m, const void *key)
{
	size_t mask = m->cap - 1, i = hash_bytes(key, m->key_size) & mask;

	while (slot_at(m, i)[0] && memcmp(slot_key(m, slot_at(m, i)), key, m->key_size))
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
			memcpy(slot_at(m, find(m, slot_key(m, s))), s, m->slot_size);
	}
	free(old);
	return 0;
}

void *hmap_upsert(struct hmap *m, const void *key, bool *created)
{
	uint8_t *s;

	if (created)
		*created = false;
	if (m->cap) {
		s = slot_at(m, find(m, key));
		if (s[0])
			return slot_val(m, s);
	}
	/* Keep the load under 70% so probe chains stay short. */
	if ((m->count + 1) * 10 > m->cap * 7 && grow(m))
		return NULL;
	s = slot_at(m, find(m, key));
	memset(s, 0, m->slot_size);
	s[0] = 1;
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
		size_t home = hash_bytes(slot_key(m, slot_at(m, j)), m->key_size) & mask;

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
