// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <string.h>
#include "sk_books.h"

struct skb_track {
	int64_t last;		/* the deficit at the key's last pass */
	uint64_t last_pass;	/* that pass's number (b->passes) */
	uint64_t counted;	/* counted for this key so far */
};

void skb_init(struct sk_books *b)
{
	memset(b, 0, sizeof(*b));
	hmap_init(&b->keys, sizeof(struct cs_skb_key), sizeof(struct skb_track));
}

void skb_free(struct sk_books *b)
{
	hmap_free(&b->keys);
}

void skb_forget(struct sk_books *b, const struct cs_skb_key *k)
{
	hmap_del(&b->keys, k);
}

static bool ns_in(uint32_t ns, const uint32_t *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == ns)
			return true;
	return false;
}

/* Index a list by key (value: the line). */
static void index_lines(struct hmap *m, const struct skb_line *l, size_t n)
{
	hmap_init(m, sizeof(struct cs_skb_key), sizeof(const struct skb_line *));
	for (size_t i = 0; i < n; i++) {
		const struct skb_line **v = hmap_upsert(m, &l[i].k, NULL);

		if (v)
			*v = &l[i];
	}
}

static const struct skb_line *find(const struct hmap *m, const struct cs_skb_key *k)
{
	const struct skb_line *const *v = hmap_get(m, k);

	return v ? *v : NULL;
}

bool skb_ns_open(const struct sk_books *b, const struct skb_line *before, size_t nb,
		 uint32_t ns)
{
	for (size_t i = 0; i < nb; i++) {
		const struct skb_track *t = hmap_get(&b->keys, &before[i].k);

		if (before[i].k.netns == ns &&
		    before[i].made > before[i].ended + (t ? t->counted : 0))
			return true;
	}
	return false;
}

uint64_t skb_pass(struct sk_books *b, const struct skb_line *before, size_t nb,
		  const struct skb_line *after, size_t na, const struct skb_line *alive,
		  size_t nal, const uint32_t *ns, size_t nns, skb_count_fn fn, void *ctx)
{
	struct hmap am, lm;
	uint64_t added = 0;

	b->passes++;
	b->pending = false;
	if (b->frozen)
		return 0;
	index_lines(&am, after, na);
	index_lines(&lm, alive, nal);
	for (size_t i = 0; i < nb; i++) {
		const struct skb_line *a = find(&am, &before[i].k), *l = find(&lm, &before[i].k);
		uint64_t ended = a ? a->ended : before[i].ended, live = l ? l->made : 0;
		int64_t d = (int64_t)(before[i].made - ended - live), sure;
		bool created = false;
		struct skb_track *t;

		if (!ns_in(before[i].k.netns, ns, nns))
			continue;
		t = hmap_upsert(&b->keys, &before[i].k, &created);
		if (!t)
			continue;
		/* Two passes in a row: the smaller deficit is lost for sure. */
		sure = !created && t->last_pass + 1 == b->passes ? (t->last < d ? t->last : d) : 0;
		if (sure > 0 && (uint64_t)sure > t->counted) {
			uint64_t n = (uint64_t)sure - t->counted;

			t->counted += n;
			b->counted += n;
			added += n;
			if (fn)
				fn(ctx, before[i].k.tgid, before[i].k.flags, n);
		}
		t->last = d;
		t->last_pass = b->passes;
		if (d > 0 && (uint64_t)d > t->counted)
			b->pending = true;
	}
	hmap_free(&am);
	hmap_free(&lm);
	return added;
}
