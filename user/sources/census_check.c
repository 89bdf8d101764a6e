// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* CONNSCOPE_CENSUS=check: each namespace the census walk read is dumped
 * with sock_diag too, and the two views of each socket compared field by
 * field (matched by cookie), the result said on stderr. For the test that
 * holds the walk to the dump's word (tests/integration/62_census_walk.sh)
 * and for anyone who doubts a count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "census_check.h"
#include "grow.h"
#include "sockdiag.h"
#include "tcp_state_names.h"
#include "timeutil.h"
#include "text_wrap.h"

struct sd_list {
	struct sd_sock *v;
	size_t n, cap;
};

static int add(const struct sd_sock *s, void *ctx)
{
	struct sd_list *l = ctx;

	if (grow_room((void **)&l->v, &l->cap, l->n, 1, sizeof(*l->v), 256))
		return -1;
	l->v[l->n++] = *s;
	return 0;
}

static int by_cookie(const void *a, const void *b)
{
	uint64_t x = ((const struct sd_sock *)a)->cookie, y = ((const struct sd_sock *)b)->cookie;

	return x < y ? -1 : x > y;
}

static void said(unsigned *shown, const struct sd_sock *s, const char *what, uint64_t w,
		 uint64_t d)
{
	if ((*shown)++ < 20)
		text_err("connscope: census check: differs: %s walk %llu dump %llu "
			 "(%s, port %u -> %u, cookie %llu)\n",
			 what, (unsigned long long)w, (unsigned long long)d,
			 tcp_state_name(s->state), s->sport, s->dport,
			 (unsigned long long)s->cookie);
}

/* One socket's two views; slack_ms: how far the timers may have run
 * between the walk and the dump. Returns the fields that differ. */
static unsigned compare(const struct sd_sock *w, const struct sd_sock *d, uint32_t slack_ms,
			unsigned *shown)
{
	unsigned n = 0;

#define SAME(f)                                                                            \
	do {                                                                               \
		if (w->f != d->f) {                                                        \
			said(shown, w, #f, w->f, d->f);                                    \
			n++;                                                               \
		}                                                                          \
	} while (0)
	SAME(family);
	SAME(state);
	SAME(timer);
	SAME(retrans);
	SAME(sport);
	SAME(dport);
	SAME(rqueue);
	SAME(wqueue);
	SAME(uid);
	SAME(inode);
	SAME(bound_if);
#undef SAME
	if (memcmp(w->saddr, d->saddr, sizeof(w->saddr)) ||
	    memcmp(w->daddr, d->daddr, sizeof(w->daddr))) {
		said(shown, w, "addresses", 0, 1);
		n++;
	}
	/* The dump came after the walk: its timers have run down by up to
	 * the time between them (and a jiffy's rounding each side). */
	if (w->expires_ms < d->expires_ms || w->expires_ms > d->expires_ms + slack_ms) {
		said(shown, w, "expires_ms", w->expires_ms, d->expires_ms);
		n++;
	}
	return n;
}

/* A socket one source has and the other lacks: said, the first 20. */
static void say_only(const char *source, const struct sd_sock *s, unsigned *shown)
{
	if ((*shown)++ < 20)
		fprintf(stderr, "connscope: census check: only in the %s: %s port %u -> %u\n",
			source, tcp_state_name(s->state), s->sport, s->dport);
}

void census_check(pid_t pid, uint32_t netns, const struct sd_sock *walked, size_t nw,
		  uint64_t walk_began_ns)
{
	struct sd_list w = { 0 }, d = { 0 };
	unsigned states[16] = { 0 }, timers[5] = { 0 }, shown = 0, differ = 0, only_w = 0,
		 only_d = 0, same = 0;
	uint32_t slack_ms;
	char line[512];
	size_t i = 0, j = 0, at;
	int err;

	for (size_t k = 0; k < nw; k++)
		if (add(&walked[k], &w))
			goto out;
	err = sockdiag_dump_tcp_of(pid, SD_ALL_STATES, add, &d);
	if (err) {
		fprintf(stderr, "connscope: census check: the dump failed: %s\n", strerror(-err));
		goto out;
	}
	slack_ms = (uint32_t)((now_ns() - walk_began_ns) / 1000000) + 10;
	qsort(w.v, w.n, sizeof(*w.v), by_cookie);
	qsort(d.v, d.n, sizeof(*d.v), by_cookie);
	while (i < w.n || j < d.n) {
		if (j == d.n || (i < w.n && w.v[i].cookie < d.v[j].cookie)) {
			say_only("walk", &w.v[i++], &shown);
			only_w++;
		} else if (i == w.n || d.v[j].cookie < w.v[i].cookie) {
			say_only("dump", &d.v[j++], &shown);
			only_d++;
		} else {
			if (compare(&w.v[i], &d.v[j], slack_ms, &shown))
				differ++;
			else
				same++;
			states[w.v[i].state & 15]++;
			timers[w.v[i].timer < 5 ? w.v[i].timer : 0]++;
			i++;
			j++;
		}
	}
	at = (size_t)snprintf(line, sizeof(line), "connscope: census check: netns %u walked %zu "
				"dumped %zu same %u differ %u only_walk %u only_dump %u states",
			      netns, w.n, d.n, same, differ, only_w, only_d);
	for (int s = 0; s < 16 && at < sizeof(line); s++)
		if (states[s])
			at += (size_t)snprintf(line + at, sizeof(line) - at, " %s:%u",
					       tcp_state_name(s), states[s]);
	if (at < sizeof(line))
		at += (size_t)snprintf(line + at, sizeof(line) - at, " timers");
	for (int t = 0; t < 5 && at < sizeof(line); t++)
		at += (size_t)snprintf(line + at, sizeof(line) - at, " %d:%u", t, timers[t]);
	fprintf(stderr, "%s\n", line);
out:
	free(w.v);
	free(d.v);
}
