// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Our hash table (user/lib/hashmap.c) against Debian's uthash on the shape
 * the books use most: a 4-tuple key (struct cs_tuple, 40 bytes) with a
 * connection record beside it, churned as connections come and go.
 *
 *	hashbench [N]
 *
 * keeps N live connections (default 100000) and replaces one per step for
 * 10 N steps (insert + lookups + delete), then prints ns per step for each
 * table and their ratio. A benchmark: `make bench` runs it, not make test. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uthash.h>
#include "hashmap.h"
#include "tcpstate.h"

struct rec {
	uint64_t start_ns, bytes;
	uint32_t pid, flags;
};

struct ut_rec {
	struct cs_tuple key;
	struct rec r;
	UT_hash_handle hh;
};

static uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Loopback connections as a load test makes them: one destination, the
 * source port walking its range, the source address after each wrap (every
 * i its own tuple). */
static void tuple_of(uint64_t i, struct cs_tuple *t)
{
	memset(t, 0, sizeof(*t));
	t->family = 2;
	t->saddr[0] = 127;
	t->saddr[1] = (i >> 16) & 0xff;
	t->saddr[2] = (i >> 24) & 0xff;
	t->saddr[3] = 1;
	t->daddr[0] = 127;
	t->daddr[3] = 1;
	t->sport = i & 0xffff;
	t->dport = 8080;
	t->netns = 4026531840u;
}

static double run_hmap(uint64_t n, uint64_t steps)
{
	struct hmap m;
	struct cs_tuple t;
	uint64_t t0, hits = 0;

	hmap_init(&m, sizeof(struct cs_tuple), sizeof(struct rec));
	for (uint64_t i = 0; i < n; i++) {
		tuple_of(i, &t);
		((struct rec *)hmap_upsert(&m, &t, NULL))->pid = i;
	}
	t0 = clock_ns();
	for (uint64_t i = n; i < n + steps; i++) {
		tuple_of(i, &t);
		((struct rec *)hmap_upsert(&m, &t, NULL))->pid = i;
		/* A connection's events look it up a few times (state changes). */
		for (int k = 0; k < 3; k++)
			hits += hmap_get(&m, &t) != NULL;
		tuple_of(i - n, &t);
		hmap_del(&m, &t);
	}
	t0 = clock_ns() - t0;
	if (hits != 3 * steps)
		fprintf(stderr, "hashbench: hmap lost entries\n");
	hmap_free(&m);
	return (double)t0 / steps;
}

static double run_uthash(uint64_t n, uint64_t steps)
{
	struct ut_rec *head = NULL, *r, *tmp;
	struct cs_tuple t;
	uint64_t t0, hits = 0;

	for (uint64_t i = 0; i < n; i++) {
		r = calloc(1, sizeof(*r));
		tuple_of(i, &r->key);
		r->r.pid = i;
		HASH_ADD(hh, head, key, sizeof(struct cs_tuple), r);
	}
	t0 = clock_ns();
	for (uint64_t i = n; i < n + steps; i++) {
		r = calloc(1, sizeof(*r));
		tuple_of(i, &r->key);
		r->r.pid = i;
		HASH_ADD(hh, head, key, sizeof(struct cs_tuple), r);
		for (int k = 0; k < 3; k++) {
			HASH_FIND(hh, head, &r->key, sizeof(struct cs_tuple), tmp);
			hits += tmp != NULL;
		}
		tuple_of(i - n, &t);
		HASH_FIND(hh, head, &t, sizeof(struct cs_tuple), tmp);
		if (tmp) {
			HASH_DEL(head, tmp);
			free(tmp);
		}
	}
	t0 = clock_ns() - t0;
	if (hits != 3 * steps)
		fprintf(stderr, "hashbench: uthash lost entries\n");
	HASH_ITER(hh, head, r, tmp) {
		HASH_DEL(head, r);
		free(r);
	}
	return (double)t0 / steps;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000;
	double a, b;

	if (!n || n > 10000000) {
		fprintf(stderr, "usage: hashbench [N], 1 <= N <= 10000000 live connections\n");
		return 2;
	}
	a = run_hmap(n, 10 * n);
	b = run_uthash(n, 10 * n);
	printf("hashbench live=%llu hmap_ns_per_step=%.1f uthash_ns_per_step=%.1f "
	       "uthash_over_hmap=%.2f\n", (unsigned long long)n, a, b, b / a);
	return 0;
}
