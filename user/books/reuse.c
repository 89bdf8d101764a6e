// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reuse.h"
#include "doctor.h"
#include "endpoint.h"
#include "grow.h"
#include "u64sort.h"

int reuse_log2(uint64_t v)
{
	int b = 0;

	while (v > 1 && b < REUSE_HIST_BUCKETS - 1) {
		v >>= 1;
		b++;
	}
	return b;	/* 0: 0-1, 1: 2-3, 2: 4-7, ... */
}

void reuse_listen(struct proc_books *p, uint16_t port)
{
	for (int i = 0; i < p->nlisten; i++)
		if (p->listen_ports[i] == port)
			return;
	if (p->nlisten < sizeof(p->listen_ports) / sizeof(p->listen_ports[0]))
		p->listen_ports[p->nlisten++] = port;
}

bool reuse_listens_on(const struct proc_books *p, uint16_t port)
{
	for (int i = 0; i < p->nlisten; i++)
		if (p->listen_ports[i] == port)
			return true;
	return false;
}

void reuse_endpoint(const struct proc_books *p, const struct conn *c, struct endpoint_key *k)
{
	bool passive = c->passive || reuse_listens_on(p, c->tuple.sport);

	memset(k, 0, sizeof(*k));
	k->family = c->tuple.family;
	k->side = passive ? EP_LISTEN : EP_REMOTE;
	k->port = passive ? c->tuple.sport : c->tuple.dport;
	if (!passive)
		memcpy(k->addr, c->tuple.daddr, 16);
	else if (!c->listen_any)
		memcpy(k->addr, c->tuple.saddr, 16);	/* its listener's bound address */
}

/* live changes by delta (+1 or -1) at the time of the transition being
 * applied: queued, applied in time order by reuse_sweep. One word a
 * change, the time doubled plus 1 for an open: sorted as numbers they are
 * in time order. Half the bytes of a {time, delta} pair, and one is queued
 * per connection its endpoint has open since its oldest: 8 MiB less at 1M
 * sockets. */
static uint64_t live_now(const struct agg *a)
{
	uint64_t now = a->ev_ns ? a->ev_ns : a->now_ns;

	return now < a->t0_ns ? a->t0_ns : now;
}

/* When c became concurrent, kept in 32 bits as µs after its start (71
 * min; later saturates, and reuse_conn_done then says nothing earlier
 * than its FIN). */
static void conn_opened(const struct agg *a, struct conn *c)
{
	uint64_t now = live_now(a), us = now > c->since_ns ? (now - c->since_ns + 999) / 1000 : 0;

	c->open_us = us < UINT32_MAX ? (uint32_t)us : UINT32_MAX;
}

static void live_change(struct agg *a, struct endpoint_stats *es, int delta)
{
	uint64_t now = live_now(a);

	if (es->npend == es->pend_cap) {
		/* pend_cap is 32 bits: the bound keeps it exact. */
		size_t cap = es->pend_cap;

		if (grow_room_max((void **)&es->pend, &cap, es->npend, 1, sizeof(*es->pend), 16,
				  UINT32_MAX)) {
			a->live_dropped++;
			return;
		}
		es->pend_cap = (uint32_t)cap;
	}
	es->pend[es->npend++] = now * 2 + (delta > 0);
}

/* The queued changes, in time order: live, its peak and the area under
 * it. A change older than the last sweep (its record came late) counts
 * from the last sweep's time, never back in time. The changes of one time
 * apply together: a connection whose open and close were both clamped to
 * one time (before the run's start, or late) neither raises the peak nor
 * loses its close to an empty count and stays open for good. */
static void live_sweep(struct endpoint_stats *es, uint64_t horizon)
{
	uint32_t i, kept;

	u64_sort(es->pend, es->npend);
	for (i = 0; i < es->npend && es->pend[i] / 2 < horizon;) {
		uint64_t now = es->pend[i] / 2;
		int64_t net = 0;

		if (!es->live_since)
			es->live_since = now;
		if (now > es->live_since) {
			es->live_area += (uint64_t)es->live * (now - es->live_since);
			es->live_since = now;
		}
		for (; i < es->npend && es->pend[i] / 2 == now; i++)
			net += es->pend[i] & 1 ? 1 : -1;
		if (net > 0) {
			es->live += (uint32_t)net;
			if (es->live > es->live_peak)
				es->live_peak = es->live;
		} else {
			es->live -= (uint64_t)-net < es->live ? (uint32_t)-net : es->live;
		}
	}
	kept = es->npend - i;
	memmove(es->pend, es->pend + i, kept * sizeof(*es->pend));
	es->npend = kept;
	if (!kept && es->pend_cap > 64) {
		free(es->pend);
		es->pend = NULL;
		es->pend_cap = 0;
	}
}

void reuse_horizons_reset(struct proc_books *p)
{
	struct endpoint_stats *es;

	for (size_t j = 0; hmap_next(&p->endpoints, &j, NULL, (void **)&es);)
		es->horizon = UINT64_MAX;
}

void reuse_horizon_note(struct proc_books *p, const struct conn *c)
{
	struct endpoint_stats *es;
	struct endpoint_key k;

	/* A queued one's accept comes later, at or after since_ns. */
	if (!c->reuse_open && !c->queued)
		return;
	reuse_endpoint(p, c, &k);
	es = hmap_get(&p->endpoints, &k);
	if (es && c->since_ns < es->horizon)
		es->horizon = c->since_ns;
}

void reuse_sweep(struct proc_books *p, uint64_t limit)
{
	struct endpoint_stats *es;

	for (size_t j = 0; hmap_next(&p->endpoints, &j, NULL, (void **)&es);)
		if (es->npend)
			live_sweep(es, limit && limit < es->horizon ? limit : es->horizon);
}

void reuse_endpoints_free(struct proc_books *p)
{
	struct endpoint_stats *es;

	for (size_t i = 0; hmap_next(&p->endpoints, &i, NULL, (void **)&es);)
		free(es->pend);
}

double reuse_mean_concurrency(const struct proc_books *p, const struct endpoint_stats *es)
{
	uint64_t end = p->nrows ? p->t0_ns + p->rows[p->nrows - 1].t_ns : 0;
	uint64_t area = es->live_area;

	if (end <= p->t0_ns)
		return 0;
	if (es->live_since && end > es->live_since)
		area += (uint64_t)es->live * (end - es->live_since);
	return (double)area / (end - p->t0_ns);
}

struct endpoint_stats *reuse_ep(struct agg *a, struct proc_books *p, const struct conn *c)
{
	struct endpoint_stats *es;
	struct endpoint_key k;

	/* The connection apply_whole is applying: its endpoint found once
	 * a record, where each of the four or five asked (#23 item 6).
	 * Valid while p's endpoints hold as many entries: none is ever
	 * deleted, and only an insert moves them. */
	if (c == a->ep_conn && p == a->ep_proc && p->endpoints.count == a->ep_count)
		return a->ep_es;
	reuse_endpoint(p, c, &k);
	/* A process's connections come in runs of one endpoint: each
	 * asked for it three times (begin, done, end). */
	es = hmap_upsert_hint(&p->endpoints, &k, NULL, &p->ep_hint);
	if (c == a->ep_conn && es) {
		a->ep_proc = p;
		a->ep_count = p->endpoints.count;
		a->ep_es = es;
	}
	return es;
}

void reuse_conn_begin(struct agg *a, struct proc_books *p, struct conn *c)
{
	struct endpoint_stats *es = reuse_ep(a, p, c);

	if (!es)
		return;
	if (c->passive)
		es->accepted++;
	else
		es->opened++;
	live_change(a, es, 1);
	c->reuse_open = 1;
	conn_opened(a, c);
}

void reuse_conn_queued(struct agg *a, struct proc_books *p, struct conn *c)
{
	struct endpoint_stats *es = reuse_ep(a, p, c);

	if (!es)
		return;
	es->accepted++;
	c->queued = 1;
}

void reuse_conn_accepted(struct agg *a, struct proc_books *p, struct conn *c)
{
	struct endpoint_stats *es;

	if (!c->queued)
		return;
	c->queued = 0;
	es = reuse_ep(a, p, c);
	if (!es)
		return;
	live_change(a, es, 1);
	c->reuse_open = 1;
	conn_opened(a, c);
}

void reuse_conn_seed(struct agg *a, struct proc_books *p, struct conn *c)
{
	struct endpoint_stats *es;

	if (c->state == CS_TCP_LISTEN || !c->tuple.dport)
		return;
	es = reuse_ep(a, p, c);
	if (!es)
		return;
	es->held++;
	live_change(a, es, 1);
	c->reuse_open = 1;
	conn_opened(a, c);
}

void reuse_conn_release(struct agg *a, struct proc_books *p, struct conn *c)
{
	struct endpoint_stats *es;

	c->queued = 0;	/* closed in the queue: never concurrent */
	if (!c->reuse_open)
		return;
	es = reuse_ep(a, p, c);
	if (es)
		live_change(a, es, -1);
	c->reuse_open = 0;
}

void reuse_conn_done(struct agg *a, struct proc_books *p, struct conn *c, uint64_t last_ns,
		     uint64_t until_ns)
{
	uint64_t at = a->ev_ns;
	uint64_t open_ns = c->since_ns + (uint64_t)c->open_us * 1000;

	if (!c->reuse_open)
		return;
	a->ev_ns = c->open_us != UINT32_MAX && last_ns > open_ns && last_ns < until_ns ?
		   last_ns : until_ns;
	reuse_conn_release(a, p, c);
	a->ev_ns = at;
}

void reuse_conn_move(struct agg *a, struct proc_books *from, struct proc_books *to, struct conn *c)
{
	struct endpoint_stats *es;

	if (c->queued) {
		/* Still in the queue: its count moves, no concurrency yet. */
		es = reuse_ep(a, from, c);
		if (es)
			es->accepted -= es->accepted > 0;
		reuse_conn_queued(a, to, c);
		return;
	}
	if (!c->reuse_open)
		return;
	es = reuse_ep(a, from, c);
	if (es) {
		es->accepted -= es->accepted > 0;
		live_change(a, es, -1);
	}
	c->reuse_open = 0;
	reuse_conn_begin(a, to, c);
}

void reuse_close_first(struct agg *a, struct proc_books *p, const struct conn *c, bool active)
{
	struct endpoint_stats *es = reuse_ep(a, p, c);

	if (!es)
		return;
	if (active)
		es->closed_active++;
	else
		es->closed_passive++;
}

void reuse_handshake(struct proc_books *p, const struct conn *c, uint64_t ts)
{
	if (c->syn_seen && ts > c->since_ns) {
		p->handshake_us_hist[reuse_log2((ts - c->since_ns) / 1000)]++;
		p->handshake_ns_sum += ts - c->since_ns;
	}
}

static void reuse_heatmaps_init(struct agg *a, struct proc_books *p)
{
	if (p->hm_reuse_ready)
		return;
	heatmap_init(&p->hm_lifetime, "lifetime", "closed connections by lifetime", "conns",
		     a->t0_ns, a->bucket_ns);
	heatmap_init(&p->hm_rpc, "requests_per_conn", "closed connections by requests",
		     "conns", a->t0_ns, a->bucket_ns);
	p->hm_reuse_ready = true;
}

/* Rows up to bucket b, added in order so small values read on top. */
static int log2_row(struct heatmap *h, int b, const char *unit)
{
	char label[48];

	while (h->nrows <= b) {
		int r = h->nrows;

		if (r == 0)
			snprintf(label, sizeof(label), "0-1 %s", unit);
		else
			snprintf(label, sizeof(label), "%llu-%llu %s", 1ULL << r,
				 (2ULL << r) - 1, unit);
		if (heatmap_row(h, label) < 0)
			return -1;
	}
	return b;
}

void reuse_conn_end(struct agg *a, struct proc_books *p, struct conn *c, uint64_t ts,
		    const struct cs_conn_io *io)
{
	struct endpoint_stats *es = reuse_ep(a, p, c);
	uint64_t req = io->turns ? (io->turns + 1) / 2 : 0;
	uint64_t life_ms = ts > c->since_ns ? (ts - c->since_ns) / 1000000 : 0;
	int lb = reuse_log2(life_ms), rb = reuse_log2(req);

	p->requests += req;
	p->bytes_sent += io->bytes_sent;
	p->bytes_recv += io->bytes_recv;
	p->lifetime_ms_hist[lb]++;
	p->rpc_hist[rb]++;
	p->lifetime_ns_sum += ts > c->since_ns ? ts - c->since_ns : 0;
	p->rpc_sum += req;
	if (es) {
		es->requests += req;
		es->bytes_sent += io->bytes_sent;
		es->bytes_recv += io->bytes_recv;
		es->closed++;
		es->lifetime_ms_hist[lb]++;
		es->rpc_hist[rb]++;
		if (c->reuse_open)
			live_change(a, es, -1);
	}
	c->reuse_open = 0;
	if (a->daemon)
		return;		/* no report: no heatmaps to grow without end */
	reuse_heatmaps_init(a, p);
	/* The rows are made once: looked at here before the call. */
	if (lb < p->hm_lifetime.nrows || log2_row(&p->hm_lifetime, lb, "ms") >= 0)
		heatmap_add(&p->hm_lifetime, lb, ts, 1);
	if (rb < p->hm_rpc.nrows || log2_row(&p->hm_rpc, rb, "req") >= 0)
		heatmap_add(&p->hm_rpc, rb, ts, 1);
}

void reuse_tick(struct agg *a, struct proc_books *p, uint64_t now_ns)
{
	p->ticks++;
	if (a->daemon)
		return;
	reuse_heatmaps_init(a, p);
	/* Quiet intervals still show on the time axis. */
	heatmap_extend(&p->hm_lifetime, now_ns > a->t0_ns ? now_ns : a->t0_ns + 1);
	heatmap_extend(&p->hm_rpc, now_ns > a->t0_ns ? now_ns : a->t0_ns + 1);
}

void reuse_fit_clock(struct proc_books *p, uint64_t t0_ns, size_t max_cols)
{
	struct endpoint_stats *es;

	for (size_t j = 0; hmap_next(&p->endpoints, &j, NULL, (void **)&es);) {
		for (uint32_t i = 0; i < es->npend; i++)
			if (es->pend[i] / 2 < t0_ns)
				es->pend[i] = t0_ns * 2 + (es->pend[i] & 1);
		if (es->live_since && es->live_since < t0_ns)
			es->live_since = t0_ns;
	}
	if (!p->hm_reuse_ready)
		return;
	heatmap_refit(&p->hm_lifetime, t0_ns, max_cols);
	heatmap_refit(&p->hm_rpc, t0_ns, max_cols);
}

void reuse_endpoint_add(struct endpoint_stats *sum, const struct endpoint_stats *es)
{
	sum->opened += es->opened;
	sum->accepted += es->accepted;
	sum->held += es->held;
	sum->closed += es->closed;
	sum->requests += es->requests;
	sum->live_peak += es->live_peak;
	for (int b = 0; b < REUSE_HIST_BUCKETS; b++) {
		sum->lifetime_ms_hist[b] += es->lifetime_ms_hist[b];
		sum->rpc_hist[b] += es->rpc_hist[b];
	}
}

uint64_t reuse_hist_quantile(const uint64_t *hist, double q)
{
	uint64_t n = 0, seen = 0, want;

	for (int b = 0; b < REUSE_HIST_BUCKETS; b++)
		n += hist[b];
	if (!n)
		return 0;
	want = (uint64_t)(q * n + 0.5);
	if (!want)
		want = 1;
	for (int b = 0; b < REUSE_HIST_BUCKETS; b++) {
		seen += hist[b];
		if (seen >= want)
			return (2ULL << b) - 1;
	}
	return 0;
}

size_t reuse_findings(const struct agg *a, struct churn_finding *out, size_t max)
{
	const struct endpoint_key *k;
	struct endpoint_stats *es;
	struct proc_books *p;
	size_t n = 0;

	for (size_t i = 0; hmap_next(&a->procs, &i, NULL, (void **)&p);) {
		for (size_t j = 0; n < max && hmap_next(&p->endpoints, &j, (const void **)&k,
							 (void **)&es);) {
			/* The doctor's churn rule (doctor_rules.c): failed connects
			 * carried no request and are no pool's churn. */
			if (k->side != EP_REMOTE || !es->live_peak || !es->requests ||
			    es->opened < 4 + es->connect_refused + es->connect_timeout +
					 es->connect_other)
				continue;
			if (!dr_churn_costs(es->opened, es->requests, es->live_peak))
				continue;
			out[n] = (struct churn_finding){ .pid = p->pid, .ep = *k,
							 .connections = es->opened,
							 .requests = es->requests,
							 .concurrency = es->live_peak };
			memcpy(out[n].comm, p->comm, sizeof(out[n].comm));
			n++;
		}
	}
	return n;
}

int churn_finding_text(char *buf, size_t len, const struct churn_finding *f)
{
	char ep[64];

	endpoint_format(ep, sizeof(ep), &f->ep);
	return snprintf(buf, len, "pool to %s churns: %llu connections for %llu requests at "
				  "concurrency %u; a pool that keeps >= %u idle connections would "
				  "open %u", ep, (unsigned long long)f->connections,
			(unsigned long long)f->requests, f->concurrency, f->concurrency,
			f->concurrency);
}

static int by_conns(const void *a, const void *b)
{
	const struct endpoint_use *x = a, *y = b;
	uint64_t nx = x->st->opened + x->st->accepted, ny = y->st->opened + y->st->accepted;

	if (nx != ny)
		return nx < ny ? 1 : -1;
	return memcmp(&x->key, &y->key, sizeof(x->key));
}

struct endpoint_use *reuse_endpoints_by_conns(const struct proc_books *p, size_t *n)
{
	struct endpoint_use *v = calloc(p->endpoints.count ? p->endpoints.count : 1, sizeof(*v));
	const struct endpoint_key *k;
	struct endpoint_stats *es;

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; hmap_next(&p->endpoints, &i, (const void **)&k, (void **)&es);)
		if (es->opened || es->accepted || es->requests)
			v[(*n)++] = (struct endpoint_use){ .key = *k, .st = es };
	qsort(v, *n, sizeof(*v), by_conns);
	return v;
}

double reuse_ratio(uint64_t conns, uint64_t requests)
{
	return requests > conns ? 1.0 - (double)conns / requests : 0;
}
