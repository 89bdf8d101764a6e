// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <stdlib.h>
#include <string.h>
#include "tcp_limits.h"

static bool same_dest(const struct port_use *a, const struct port_use *b)
{
	return a->family == b->family && a->dport == b->dport &&
	       !memcmp(a->saddr, b->saddr, 16) && !memcmp(a->daddr, b->daddr, 16);
}

static int by_share(const void *a, const void *b)
{
	const struct port_use *x = a, *y = b;

	return x->share < y->share ? 1 : x->share > y->share ? -1 : 0;
}

void limits_observe(struct limits_view *v, const struct netlimits *lim,
		    const struct sd_sock *socks, size_t nsocks, const struct sockstat *st)
{
	struct port_use now[LIMITS_TOP_DESTS];
	size_t n;

	v->lim = *lim;
	v->valid = true;
	v->host_tw = st->tcp_tw;
	v->host_orphan = st->tcp_orphan;
	if (v->host_tw > v->host_tw_peak)
		v->host_tw_peak = v->host_tw;
	if (v->host_orphan > v->host_orphan_peak)
		v->host_orphan_peak = v->host_orphan;
	n = ports_usage(socks, nsocks, v->lim.port_lo, v->lim.port_hi, now,
			LIMITS_TOP_DESTS);
	/* Keep each busy destination's worst moment; when the table is full,
	 * a busier newcomer replaces the least busy. */
	for (size_t i = 0; i < n; i++) {
		size_t k;

		for (k = 0; k < v->ndests && !same_dest(&v->dests[k], &now[i]); k++)
			;
		if (k == v->ndests) {
			if (v->ndests < LIMITS_TRACKED_DESTS)
				v->ndests++;
			else if (now[i].share <= v->dests[--k].share)
				continue;
			v->dests[k] = now[i];
		} else if (now[i].share > v->dests[k].share) {
			v->dests[k] = now[i];
		}
		qsort(v->dests, v->ndests, sizeof(v->dests[0]), by_share);
	}
	if (v->ndests)
		v->peak_share = v->dests[0].share;
}

