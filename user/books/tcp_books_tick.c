// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The books at each interval: the row every process gets (its counters' delta
 * and the kernel's view), the heatmaps and concurrency sampled, and the
 * traffic of connections still open read at the end. The events' side is
 * tcp_books.c. */
#include <stdlib.h>
#include <string.h>
#include "tcp_books.h"
#include "failbooks.h"
#include "grow.h"
#include "reuse.h"

/* x - y, 0 when a counter went down: an accept charged to a listener's
 * owner and moved to a worker after its interval was shown (apply_owner)
 * lowers the total; the later interval shows 0, not a wrapped 2^64 - 1. */
static uint64_t sub0(uint64_t x, uint64_t y)
{
	return x > y ? x - y : 0;
}

static void counters_sub(struct proc_counters *d, const struct proc_counters *x,
			 const struct proc_counters *y)
{
	d->opened = x->opened - y->opened;
	d->accepted = sub0(x->accepted, y->accepted);
	d->never_accepted = x->never_accepted - y->never_accepted;
	d->closed = x->closed - y->closed;
	d->connect_failed = x->connect_failed - y->connect_failed;
	d->resets = x->resets - y->resets;
	d->resets_sent = x->resets_sent - y->resets_sent;
	d->tw_entered = x->tw_entered - y->tw_entered;
	d->orphaned = x->orphaned - y->orphaned;
	d->tw_expired = x->tw_expired - y->tw_expired;
	d->tw_killed = x->tw_killed - y->tw_killed;
	d->tw_end_unseen = x->tw_end_unseen - y->tw_end_unseen;
	d->tw_not_made = x->tw_not_made - y->tw_not_made;
	d->closed_active = x->closed_active - y->closed_active;
	d->closed_passive = x->closed_passive - y->closed_passive;
	d->ends_unrun = x->ends_unrun - y->ends_unrun;
}

static const int orphan_rows[] = { CS_TCP_FIN_WAIT1, CS_TCP_FIN_WAIT2, CS_TCP_CLOSING,
				   CS_TCP_LAST_ACK };

/* One column per interval: the populations the last reconcile found. The
 * sample is stamped just inside the interval it closes. */
static void sample_heatmaps(struct agg *a, struct proc_books *p, uint64_t now_ns)
{
	uint64_t t = now_ns > a->t0_ns ? now_ns - 1 : a->t0_ns;
	const struct endpoint_key *k;
	struct endpoint_stats *es;
	char label[64];

	if (!p->hm_ready) {
		heatmap_init(&p->hm_tw, "time_wait", "TIME_WAIT sockets by endpoint", "sockets",
			     a->t0_ns, a->bucket_ns);
		heatmap_init(&p->hm_orphan, "orphan", "orphaned sockets by state", "sockets",
			     a->t0_ns, a->bucket_ns);
		for (size_t i = 0; i < sizeof(orphan_rows) / sizeof(orphan_rows[0]); i++)
			heatmap_row(&p->hm_orphan, tcp_state_name(orphan_rows[i]));
		p->hm_ready = true;
	}
	/* Endpoints beyond the map's rows share "other": sum per row first,
	 * then set, so a second sample in one column replaces the first. */
	uint64_t vals[HEATMAP_MAX_ROWS] = { 0 };

	for (size_t i = 0; hmap_next(&p->endpoints, &i, (const void **)&k, (void **)&es);) {
		int row;

		if (!es->tw_live)
			continue;
		endpoint_format(label, sizeof(label), k);
		row = heatmap_row(&p->hm_tw, label);
		if (row >= 0)
			vals[row] += es->tw_live;
	}
	for (int row = 0; row < p->hm_tw.nrows; row++)
		heatmap_set(&p->hm_tw, row, t, vals[row]);
	p->hm_tw.sampled = true;
	for (size_t i = 0; i < sizeof(orphan_rows) / sizeof(orphan_rows[0]); i++)
		heatmap_set(&p->hm_orphan, (int)i, t, p->truth.orphan_state[orphan_rows[i]]);
	heatmap_extend(&p->hm_tw, t + 1);
	heatmap_extend(&p->hm_orphan, t + 1);
}

/* A connection still open may have begun its close already, untold until
 * its CLOSE record: the changes from the start of the earliest one open on
 * an endpoint wait (a peak counted with it would be too high). A daemon
 * applies all at once, its memory flat; the last tick applies all and the
 * open ones stay live. One pass over the connections for every process. */
static void concurrency_sweep(struct agg *a)
{
	bool all = a->daemon || a->final_tick;
	struct proc_books *p;
	struct conn *c;

	for (size_t i = 0; hmap_next(&a->procs, &i, NULL, (void **)&p);)
		reuse_horizons_reset(p);
	for (size_t i = 0; !all && hmap_next(&a->conns, &i, NULL, (void **)&c);)
		if ((p = agg_find_proc(a, c->pid)))
			reuse_horizon_note(p, c);
	/* Births come late (the birth pass): none from after the last pass
	 * began is known yet. */
	for (size_t i = 0; hmap_next(&a->procs, &i, NULL, (void **)&p);)
		reuse_sweep(p, all ? 0 : a->births_known_ns);
}

/* Whether an entry (its value; the value begins with its u64 ts) has
 * gone stale, older_than_ns the prune's horizon (0: none this tick). */
typedef bool (*stale_fn)(const struct agg *a, const void *val, uint64_t older_than_ns);

static bool older(const struct agg *a, const void *val, uint64_t older_than_ns)
{
	(void)a;
	return *(const uint64_t *)val < older_than_ns;
}

/* A child's CLOSE that counted it never accepted kept its note only for
 * an accept record racing that CLOSE (the hook's put between its look-up
 * and its delete), reserved in the one ring within a program's run of
 * it: gone once the books have applied a record from a bucket after it,
 * not kept the ten buckets others are, so a stalled acceptor's resets in
 * the queue hold at most an interval's notes (review s41 A1). By the
 * events' clock, not the tick's: a drain behind the clock loses none. */
static bool accept_stale(const struct agg *a, const void *val, uint64_t older_than_ns)
{
	const struct accept_wait *w = val;

	return w->ts < older_than_ns || (w->counted && w->ts + a->bucket_ns < a->now_ns);
}

/* Every stale entry of a map of u64 keys leaves it: a birth that never
 * comes (lost in a full ring: counted there), a closed child whose
 * accept() is not traced. All of them, however many: 64 a tick let a
 * thousand resets in an accept queue an interval grow the map by ~936 an
 * interval. The keys are collected, then deleted (no delete during a
 * walk: hashmap.h); where memory for them runs out, what was collected
 * goes and the next tick takes the rest. */
static void stale_prune(struct agg *a, struct hmap *m, stale_fn stale, uint64_t older_than_ns)
{
	uint64_t first[64], *old = first, *more = NULL;
	size_t n = 0, cap = 0;
	const uint64_t *key;
	const void *val;

	for (size_t i = 0; hmap_next(m, &i, (const void **)&key, (void **)&val);) {
		if (!stale(a, val, older_than_ns))
			continue;
		if (n >= 64) {
			if (grow_room((void **)&more, &cap, n, 1, sizeof(*more), 256))
				break;
			if (old == first)
				memcpy(more, first, sizeof(first));
			old = more;
		}
		old[n++] = *key;
	}
	for (size_t i = 0; i < n; i++)
		hmap_del(m, &old[i]);
	free(more);
}

void agg_tick(struct agg *a, uint64_t now_ns)
{
	struct proc_books *p;
	uint64_t horizon;

	concurrency_sweep(a);
	horizon = now_ns > 10 * a->bucket_ns ? now_ns - 10 * a->bucket_ns : 0;
	if (a->births_pending.count && horizon)
		stale_prune(a, &a->births_pending, older, horizon);
	if (a->accepting.count)
		stale_prune(a, &a->accepting, accept_stale, horizon);

	for (size_t i = 0; hmap_next(&a->procs, &i, NULL, (void **)&p);) {
		struct interval_row *r;

		if (a->daemon && p->nrows >= AGG_DAEMON_ROWS) {
			memmove(p->rows, p->rows + 1, (p->nrows - 1) * sizeof(*p->rows));
			p->nrows--;
		}
		if (grow_room((void **)&p->rows, &p->rows_cap, p->nrows, 1, sizeof(*p->rows), 64))
			continue;
		if (!a->daemon)
			sample_heatmaps(a, p, now_ns);
		reuse_tick(a, p, now_ns);
		r = &p->rows[p->nrows++];
		r->t_ns = now_ns > a->t0_ns ? now_ns - a->t0_ns : 0;
		counters_sub(&r->delta, &p->total, &p->at_last_tick);
		r->truth = p->truth;
		p->at_last_tick = p->total;
	}
}

uint32_t agg_tw_count(const struct agg *a, pid_t pid)
{
	struct tw_entry *tw;
	uint32_t n = 0;

	for (size_t i = 0; hmap_next(&a->tw, &i, NULL, (void **)&tw);)
		n += tw->pid == pid && !tw->maybe;
	return n;
}

int agg_tw_counts(const struct agg *a, struct hmap *by_pid)
{
	uint32_t *last = NULL;
	pid_t last_pid = 0;
	struct tw_entry *tw;

	hmap_init(by_pid, sizeof(pid_t), sizeof(uint32_t));
	/* The table's TIME_WAIT come in runs of one holder: the last one's
	 * count is kept (valid until the next insert, which replaces it). */
	for (size_t i = 0; hmap_next(&a->tw, &i, NULL, (void **)&tw);) {
		if (tw->maybe)
			continue;
		if (!last || last_pid != tw->pid) {
			last = hmap_upsert(by_pid, &tw->pid, NULL);
			last_pid = tw->pid;
			if (!last) {
				hmap_free(by_pid);
				return -1;
			}
		}
		(*last)++;
	}
	return 0;
}

void agg_add_live_io(struct agg *a, uint64_t sk, const struct cs_conn_io *io)
{
	struct conn *c = hmap_get(&a->conns, &sk);
	struct proc_books *p = c ? agg_find_proc(a, c->pid) : NULL;
	struct endpoint_key k;
	struct endpoint_stats *es;
	uint64_t req;

	if (!p || (!io->turns && !io->bytes_sent && !io->bytes_recv) || c->io_added)
		return;
	req = (io->turns + 1) / 2;
	c->io_added = 1;
	p->requests += req;
	p->bytes_sent += io->bytes_sent;
	p->bytes_recv += io->bytes_recv;
	reuse_endpoint(p, c, &k);
	es = hmap_get(&p->endpoints, &k);
	if (es) {
		es->requests += req;
		es->bytes_sent += io->bytes_sent;
		es->bytes_recv += io->bytes_recv;
	}
}

void agg_fit_clock(struct agg *a, uint64_t t0_ns, uint64_t end_ns)
{
	size_t cols = heatmap_fit_cols(a->t0_ns, &t0_ns, end_ns, a->bucket_ns);
	struct proc_books *p;

	a->t0_ns = t0_ns;
	for (size_t i = 0; hmap_next(&a->procs, &i, NULL, (void **)&p);) {
		p->t0_ns = t0_ns;
		/* Joined while loading: joined at the start. */
		if (p->joined_ns && p->joined_ns < t0_ns)
			p->joined_ns = t0_ns;
		reuse_fit_clock(p, t0_ns, cols);
		if (p->hm_reuse_ready) {
			heatmap_set_end(&p->hm_lifetime, end_ns);
			heatmap_set_end(&p->hm_rpc, end_ns);
		}
		if (!p->hm_ready)
			continue;
		heatmap_refit(&p->hm_tw, t0_ns, cols);
		heatmap_refit(&p->hm_orphan, t0_ns, cols);
		heatmap_set_end(&p->hm_tw, end_ns);
		heatmap_set_end(&p->hm_orphan, end_ns);
	}
}
