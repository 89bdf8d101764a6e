// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The hmap API of user/lib/hashmap.h backed by Debian's uthash, for the
 * benchmark only: aggbench-uthash links this object in place of
 * user/lib/hashmap.o, so `aggbench replay` measures the books on either
 * table with nothing else changed (tests/bench/run.sh, comparison 8).
 *
 * struct hmap keeps its layout (the books embed it and are compiled
 * against the header once): `entries` holds the uthash head, `count` the
 * entry count, `cap` stays 0. An entry is one allocation: uthash's handle,
 * then the key and the value inline, as hmap stores them. uthash hashes
 * with its default (Jenkins, unseeded), as Debian ships it. */
#include <stdlib.h>
#include <string.h>
#include <uthash.h>
#include "hashmap.h"

struct ent {
	UT_hash_handle hh;
	uint64_t data[];	/* key, then the value, each 8-byte aligned */
};

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static void *ent_val(const struct hmap *m, struct ent *e)
{
	return (uint8_t *)e->data + align8(m->key_size);
}

static struct ent *find(const struct hmap *m, const void *key)
{
	struct ent *head = (struct ent *)m->entries, *e = NULL;

	HASH_FIND(hh, head, key, (unsigned)m->key_size, e);
	return e;
}

void hmap_init(struct hmap *m, size_t key_size, size_t val_size)
{
	memset(m, 0, sizeof(*m));
	m->key_size = key_size;
	m->val_size = val_size;
}

void hmap_clear(struct hmap *m)
{
	struct ent *head = (struct ent *)m->entries, *e, *tmp;

	HASH_ITER(hh, head, e, tmp) {
		HASH_DEL(head, e);
		free(e);
	}
	m->entries = NULL;
	m->count = 0;
}

void hmap_free(struct hmap *m)
{
	hmap_clear(m);
}

void *hmap_get(const struct hmap *m, const void *key)
{
	struct ent *e = find(m, key);

	return e ? ent_val(m, e) : NULL;
}

/* The run of lookups (hashmap.h): uthash hashes inside its own find. */
uint64_t hmap_hash(const struct hmap *m, const void *key)
{
	return 0;
}

void hmap_prefetch_slot(const struct hmap *m, uint64_t h)
{
}

void hmap_prefetch_entry(const struct hmap *m, uint64_t h)
{
}

void *hmap_get_hashed(const struct hmap *m, const void *key, uint64_t h)
{
	return hmap_get(m, key);
}

void *hmap_upsert(struct hmap *m, const void *key, bool *created)
{
	struct ent *head = (struct ent *)m->entries, *e = find(m, key);

	if (created)
		*created = false;
	if (e)
		return ent_val(m, e);
	e = calloc(1, sizeof(*e) + align8(m->key_size) + align8(m->val_size));
	if (!e)
		return NULL;
	memcpy(e->data, key, m->key_size);
	HASH_ADD_KEYPTR(hh, head, e->data, (unsigned)m->key_size, e);
	m->entries = (uint8_t *)head;
	m->count++;
	if (created)
		*created = true;
	return ent_val(m, e);
}

/* uthash has no entry numbers to hint at: every call is the lookup, as
 * the books did before the hint (912b5de). */
void *hmap_upsert_hint(struct hmap *m, const void *key, bool *created, size_t *hint)
{
	(void)hint;
	return hmap_upsert(m, key, created);
}

bool hmap_del(struct hmap *m, const void *key)
{
	return hmap_take(m, key, NULL);
}

bool hmap_take(struct hmap *m, const void *key, void *val)
{
	struct ent *head = (struct ent *)m->entries, *e = find(m, key);

	if (!e)
		return false;
	if (val)
		memcpy(val, ent_val(m, e), m->val_size);
	HASH_DEL(head, e);
	free(e);
	m->entries = (uint8_t *)head;
	m->count--;
	return true;
}

/* *iter: 0 before the first entry, then the address of the next one, or
 * SIZE_MAX past the last. */
bool hmap_next(const struct hmap *m, size_t *iter, const void **key, void **val)
{
	struct ent *e;

	if (*iter == SIZE_MAX)
		return false;
	e = *iter ? (struct ent *)*iter : (struct ent *)m->entries;
	if (!e)
		return false;
	*iter = e->hh.next ? (size_t)e->hh.next : SIZE_MAX;
	if (key)
		*key = e->data;
	if (val)
		*val = ent_val(m, e);
	return true;
}
