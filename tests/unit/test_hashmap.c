/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* hashmap: the books' table against a plain array that holds the same
 * keys, through random inserts and deletes that make long probe chains,
 * wrap the index, grow it and shrink the entries' array: every key found
 * with its value, none found that was deleted, iteration sees each entry
 * once. Keys of 4 bytes (a pid, an inode), of 8 (the sock tables), of 20
 * (an endpoint) and of 44 (a 4-tuple): every one but the 8-byte keeps its
 * hash in its padding (4 bytes or more of its 8-byte alignment free). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "hashmap.h"

struct tkey {
	uint8_t b[44];
};

struct tval {
	uint64_t id;
	uint32_t pad[5];
};

/* The model: keys[i] present with id ids[i] for i < n. */
struct model {
	uint64_t *keys, *ids;
	size_t n, cap;
};

static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* Key k as the map stores it: its low 4 bytes for a 4-byte key (keys
 * are < 2^32), 8 bytes, or at the end of a wider key. */
static void key_of(uint64_t k, size_t ksize, void *out)
{
	if (ksize == 4) {
		uint32_t k32 = (uint32_t)k;

		memcpy(out, &k32, 4);
		return;
	}
	if (ksize == 8) {
		memcpy(out, &k, 8);
		return;
	}
	memset(out, 0, ksize);
	memcpy((uint8_t *)out + ksize - 8, &k, 8);
}

static void check_all(struct hmap *m, const struct model *md, size_t ksize)
{
	uint8_t kb[sizeof(struct tkey)];
	size_t seen = 0;
	const void *k;
	void *v;

	ASSERT_EQ(m->count, md->n, "count");
	for (size_t i = 0; i < md->n; i++) {
		struct tval *got;

		key_of(md->keys[i], ksize, kb);
		got = hmap_get(m, kb);
		ASSERT_TRUE(got != NULL, "key present");
		ASSERT_EQ(got->id, md->ids[i], "value of key");
	}
	for (size_t i = 0; hmap_next(m, &i, &k, &v);) {
		uint64_t key = 0;

		if (ksize == 4) {
			uint32_t k32;

			memcpy(&k32, k, 4);
			key = k32;
		} else {
			memcpy(&key, (const uint8_t *)k + ksize - 8, 8);
		}
		ASSERT_EQ(((struct tval *)v)->id, key * 3 + 1, "iterated value");
		seen++;
	}
	ASSERT_EQ(seen, md->n, "iterated entries");
}

static void churn(size_t ksize)
{
	struct model md = { .cap = 1 << 16 };
	uint8_t kb[sizeof(struct tkey)];
	struct hmap m;

	md.keys = calloc(md.cap, sizeof(*md.keys));
	md.ids = calloc(md.cap, sizeof(*md.ids));
	ASSERT_TRUE(md.keys && md.ids, "calloc");
	hmap_init(&m, ksize, sizeof(struct tval));
	ASSERT_EQ(m.hash_kept, ksize != 8, "hash kept where the key leaves room");
	/* Rounds that fill to a size then empty most of it: growth, deletes
	 * that shift chains and move the last entry, the array halving. */
	for (int round = 0; round < 6; round++) {
		size_t target = round % 2 ? 40 : 20000;

		for (int step = 0; step < 60000; step++) {
			bool ins = md.n < target ? rnd() % 4 != 0 : rnd() % 4 == 0;

			if (ins) {
				/* A small key space: reinserting a present key
				 * must find it, not add it again. */
				uint64_t key = rnd() % 50000;
				bool created, known = false;
				struct tval *v;

				key_of(key, ksize, kb);
				v = hmap_upsert(&m, kb, &created);
				ASSERT_TRUE(v != NULL, "upsert");
				for (size_t i = 0; i < md.n && !known; i++)
					known = md.keys[i] == key;
				ASSERT_EQ(created, !known, "created iff absent");
				if (created) {
					ASSERT_EQ(v->id, 0, "new value zeroed");
					v->id = key * 3 + 1;
					md.keys[md.n] = key;
					md.ids[md.n++] = v->id;
				} else {
					ASSERT_EQ(v->id, key * 3 + 1, "present value kept");
				}
			} else if (md.n) {
				size_t i = rnd() % md.n;

				key_of(md.keys[i], ksize, kb);
				ASSERT_TRUE(hmap_del(&m, kb), "delete present");
				ASSERT_TRUE(!hmap_del(&m, kb), "delete absent");
				ASSERT_TRUE(hmap_get(&m, kb) == NULL, "deleted not found");
				md.keys[i] = md.keys[md.n - 1];
				md.ids[i] = md.ids[--md.n];
			}
			if (step % 5000 == 0)
				check_all(&m, &md, ksize);
		}
		check_all(&m, &md, ksize);
	}
	/* The entries' array follows the count down: a burst is given back. */
	ASSERT_TRUE(m.entries_cap <= 4 * (m.count > 16 ? m.count : 16), "entries array shrunk");
	hmap_clear(&m);
	ASSERT_EQ(m.count, 0, "cleared");
	key_of(md.keys[0], ksize, kb);
	ASSERT_TRUE(hmap_get(&m, kb) == NULL, "nothing after clear");
	hmap_free(&m);
	free(md.keys);
	free(md.ids);
}

/* The pid and inode tables (inode_owners, tw_held, ...): a 4-byte key
 * keeps its hash in the 4 bytes after it, as a 20- or 44-byte key does. */
TEST(pid_keys_match_a_model_through_churn)
{
	churn(4);
}

TEST(sock_keys_match_a_model_through_churn)
{
	churn(8);
}

TEST(endpoint_keys_match_a_model_through_churn)
{
	churn(20);
}

TEST(tuple_keys_match_a_model_through_churn)
{
	churn(sizeof(struct tkey));
}

/* Load stays under 70% and an entry number never reaches the tag bits. */
TEST(index_load_bounded)
{
	struct hmap m;
	uint64_t k;

	hmap_init(&m, 8, 8);
	for (k = 1; k <= 300000; k++) {
		ASSERT_TRUE(hmap_upsert(&m, &k, NULL) != NULL, "upsert");
		ASSERT_TRUE(m.count * 10 <= m.cap * 7, "load <= 70%");
		ASSERT_TRUE(m.count < m.cap, "entry number below the tag");
	}
	for (k = 1; k <= 300000; k += 7777)
		ASSERT_TRUE(hmap_get(&m, &k) != NULL, "found after growth");
	hmap_free(&m);
}

/* A run of lookups by hash, prefetched ahead (hashmap.h): hmap_get's
 * answer for every key, present or absent, in a table of 44-byte keys
 * (the TIME_WAIT table's), an empty one included. */
TEST(hashed_lookups_answer_as_hmap_get)
{
	uint8_t key[44];
	struct hmap m;

	hmap_init(&m, sizeof(key), sizeof(uint32_t));
	memset(key, 0, sizeof(key));
	ASSERT_TRUE(hmap_get_hashed(&m, key, hmap_hash(&m, key)) == NULL, "empty");
	hmap_prefetch_slot(&m, hmap_hash(&m, key));
	hmap_prefetch_entry(&m, hmap_hash(&m, key));
	for (uint32_t i = 0; i < 5000; i += 2) {
		memcpy(key + 40, &i, sizeof(i));
		*(uint32_t *)hmap_upsert(&m, key, NULL) = i;
	}
	for (uint32_t i = 0; i < 5000; i++) {
		uint64_t h;
		uint32_t *v;

		memcpy(key + 40, &i, sizeof(i));
		h = hmap_hash(&m, key);
		hmap_prefetch_slot(&m, h);
		hmap_prefetch_entry(&m, h);
		v = hmap_get_hashed(&m, key, h);
		ASSERT_TRUE(v == hmap_get(&m, key), "same_entry");
		ASSERT_EQ(v ? *v : 1, i % 2 ? 1 : i, "its_value");
	}
	hmap_free(&m);
}

UNIT_MAIN()
