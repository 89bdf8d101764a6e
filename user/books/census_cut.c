// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The census's moment in the books (census_cut.h): the connections that
 * began or ended since the census began, noted as the records come, and
 * what the reconcile makes of them. */
#include <stdlib.h>
#include <string.h>
#include "census_cut.h"
#include "endpoint.h"
#include "grow.h"

/* A state the reconcile compares: live, not closed, not TIME_WAIT (the
 * books keep those apart, tcp_reconcile.c). */
static bool counted(int st)
{
	return st > 0 && st < CS_TCP_MAX_STATES && st != CS_TCP_CLOSE &&
	       st != CS_TCP_TIME_WAIT;
}

/* The births noted and not yet taken: their mark goes, so a connection
 * born in a census that was dropped is not taken for one of the next. */
static void births_unmark(struct agg *a)
{
	struct census_cut *cut = &a->cut;

	for (size_t i = 0; i < cut->nbirths; i++) {
		struct conn *c = hmap_get(&a->conns, &cut->births[i].sk);

		if (c)
			c->cut_born = 0;
	}
	cut->nbirths = 0;
}

void agg_census_begin(struct agg *a, uint64_t now)
{
	struct census_cut *cut = &a->cut;

	births_unmark(a);
	cut->n = 0;
	cut->end_ns = 0;
	cut->open = true;
	a->snapshot_ns = now;
}

void agg_census_end(struct agg *a, uint64_t now)
{
	a->cut.end_ns = now;
}

void agg_census_drop(struct agg *a)
{
	births_unmark(a);
	a->cut.n = 0;
	a->cut.open = false;
}

/* Room for one more in *arr (n used of *cap, each size bytes), doubled
 * from 64 when full; false when memory runs out, counted as dropped. */
static bool room_for_one(struct census_cut *cut, void **arr, size_t n, size_t *cap, size_t size)
{
	if (grow_room(arr, cap, n, 1, size, 64)) {
		cut->dropped++;
		return false;
	}
	return true;
}

static struct cut_conn *cut_push(struct census_cut *cut)
{
	if (!room_for_one(cut, (void **)&cut->conns, cut->n, &cut->cap, sizeof(*cut->conns)))
		return NULL;
	return memset(&cut->conns[cut->n++], 0, sizeof(cut->conns[0]));
}

void cut_note(struct agg *a, struct conn *c, uint64_t sk, int was, int now, uint64_t ts)
{
	struct census_cut *cut = &a->cut;
	bool from = counted(was), to = counted(now);
	struct cut_conn *k;

	/* Records of before the census, drained during it, are before it. */
	if (!cut->open || ts < a->snapshot_ns || from == to)
		return;
	if (to) {
		/* Its tuple is taken at the reconcile: a connect's local port
		 * is known from ESTABLISHED on. */
		if (!room_for_one(cut, (void **)&cut->births, cut->nbirths, &cut->births_cap,
				  sizeof(*cut->births)))
			return;
		cut->births[cut->nbirths++] = (struct cut_birth){ .sk = sk, .ts = ts };
		c->cut_born = 1;
		return;
	}
	k = cut_push(cut);
	if (!k)
		return;
	k->tuple = c->tuple;
	k->pid = c->pid;
	k->ended = 1;
	k->born_in = c->cut_born;
	/* Its birth's time: since_ns was set by the record that noted it
	 * (conn_for, CLOSE -> SYN_SENT, or apply_summary's books on the
	 * stack, whose births entry finds no connection at the index). */
	k->born_ns = c->cut_born ? c->since_ns : 0;
	k->ts = ts;
	c->cut_born = 0;
}

void cut_free(struct census_cut *cut)
{
	free(cut->conns);
	free(cut->births);
	memset(cut, 0, sizeof(*cut));
}

void cut_index_build(struct agg *a, struct cut_index *ix)
{
	struct census_cut *cut = &a->cut;

	hmap_init(&ix->at, sizeof(struct cs_tuple), sizeof(uint32_t));
	memset(ix->ports, 0, sizeof(ix->ports));
	if (!cut->open)
		return;
	/* The births still alive, with their tuples as they are now. Each
	 * once: an address freed and reused in the census is noted twice. */
	for (size_t i = 0; i < cut->nbirths; i++) {
		struct conn *c = hmap_get(&a->conns, &cut->births[i].sk);
		struct cut_conn *k;

		if (!c || !c->cut_born)
			continue;
		c->cut_born = 0;
		k = cut_push(cut);
		if (!k)
			break;
		k->tuple = c->tuple;
		k->pid = c->pid;
		k->born_in = 1;
		k->born_ns = cut->births[i].ts;
	}
	cut->nbirths = 0;
	for (size_t i = 0; i < cut->n; i++) {
		const struct cut_conn *k = &cut->conns[i];
		const struct cs_tuple *t = &k->tuple;
		uint16_t h = t->sport ^ t->dport;
		uint32_t *at;

		/* Born after the census ended: not in it, and never the match
		 * of its socket at the same tuple (a TIME_WAIT taken over
		 * after the census by a connection that ended in it or after:
		 * the later birth took the census's socket, a false gap of 1).
		 * Left out of the index, it counts as a birth not seen. */
		if (k->born_in && cut->end_ns && k->born_ns > cut->end_ns)
			continue;
		at = hmap_upsert(&ix->at, t, NULL);
		/* A tuple ended and born again in the census: the census
		 * can show only the later one. */
		if (at)
			*at = (uint32_t)i;
		ix->ports[h >> 3] |= (uint8_t)(1u << (h & 7));
	}
}

struct cut_conn *cut_match(struct agg *a, const struct cut_index *ix, const struct sd_sock *s)
{
	uint16_t h = s->sport ^ s->dport;
	struct cs_tuple t;
	uint32_t *at;

	/* One bit test a socket of the census, most of them not noted. */
	if (!ix->at.count || !(ix->ports[h >> 3] & (1u << (h & 7))))
		return NULL;
	tuple_from_sd(&t, s);
	at = hmap_get(&ix->at, &t);
	return at ? &a->cut.conns[*at] : NULL;
}

void cut_gaps(struct agg *a, struct cut_index *ix, struct hmap *book_adj)
{
	struct census_cut *cut = &a->cut;

	for (size_t i = 0; i < cut->n; i++) {
		const struct cut_conn *k = &cut->conns[i];
		int64_t d, *adj;

		/* The books no longer count an ended one: it was live at the
		 * census if the census showed it, or if it ended after the
		 * census did (born before it; a census that lacks it then
		 * is a gap). They count a birth still alive: not at the
		 * census unless it showed it. */
		if (k->ended)
			d = k->seen || (!k->born_in && cut->end_ns && k->ts > cut->end_ns);
		else
			d = k->seen ? 0 : -1;
		if (d && (adj = hmap_upsert(book_adj, &k->pid, NULL)))
			*adj += d;
	}
	cut->n = 0;
	cut->open = false;
	hmap_free(&ix->at);
}
