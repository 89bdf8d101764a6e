// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Books -> the doctor's facts: one flat snapshot of the aggregator's
 * books, the fd session's report part, the limits view and what the run
 * sampled for the doctor. Reads no kernel and no /proc: every number was
 * measured by the run and sits in the books already. */
#include <stdlib.h>
#include <string.h>
#include "doctor.h"
#include "software.h"
#include "fd_report.h"
#include "code_site.h"
#include "report.h"
#include "reuse.h"

/* An endpoint's weight: how much it matters to the rules. */
static uint64_t ep_weight(const struct dr_endpoint *e)
{
	return e->opened + e->accepted + e->tw_entered + e->refused + e->timeouts +
	       e->failed_other + e->resets_recv + e->resets_sent;
}

static int by_weight(const void *a, const void *b)
{
	uint64_t x = ep_weight(a), y = ep_weight(b);

	return x < y ? 1 : x > y ? -1 : strcmp(((const struct dr_endpoint *)a)->label,
					       ((const struct dr_endpoint *)b)->label);
}

/* The busiest moment of this endpoint's ephemeral ports (limits view). */
static void ports_of(struct dr_endpoint *d, const struct endpoint_key *k,
		     const struct limits_view *v)
{
	if (!v || !v->valid || k->side != EP_REMOTE)
		return;
	for (size_t i = 0; i < v->ndests; i++) {
		const struct port_use *u = &v->dests[i];
		uint32_t used = u->time_wait + u->established + u->other;

		if (u->family != k->family || u->dport != k->port || memcmp(u->daddr, k->addr, 16))
			continue;
		/* Several local addresses towards it: the busiest counts. */
		if (!d->ports_known || u->share > d->port_share_peak) {
			d->ports_known = true;
			d->ports_peak = used;
			d->port_share_peak = u->share;
		}
	}
}

/* A listener's TIME_WAIT at each interval, from the process's TIME_WAIT
 * heatmap (one column an interval, every process's from the run's start):
 * its listener's pool adds them column by column (doctor_rules_tw.c).
 * NULL without a row of its own (the map's rows full: "other"). */
static uint32_t *tw_columns(const struct proc_books *p, const char *label, size_t *ncols)
{
	const struct heatmap *h = &p->hm_tw;
	uint32_t *cols;
	int row = -1;

	*ncols = 0;
	if (!p->hm_ready)
		return NULL;
	for (int r = 0; r < h->nrows && row < 0; r++)
		if (!strncmp(heatmap_label(h, r), label, HEATMAP_LABEL_LEN - 1))
			row = r;
	if (row < 0 || !heatmap_ncols(h))
		return NULL;
	cols = calloc(heatmap_ncols(h), sizeof(*cols));
	if (!cols)
		return NULL;
	for (size_t c = 0; c < heatmap_ncols(h); c++) {
		uint64_t v = heatmap_cell(h, row, c);

		cols[c] = v > UINT32_MAX ? UINT32_MAX : v;
	}
	*ncols = heatmap_ncols(h);
	return cols;
}

static void fill_endpoints(struct dr_proc *d, const struct proc_books *p,
			   const struct limits_view *v)
{
	const struct endpoint_key *k;
	struct endpoint_stats *es;
	struct dr_endpoint *all;
	size_t n = 0;

	all = calloc(p->endpoints.count ? p->endpoints.count : 1, sizeof(*all));
	if (!all)
		return;
	for (size_t i = 0; hmap_next(&p->endpoints, &i, (const void **)&k, (void **)&es);) {
		struct dr_endpoint *e = &all[n++];

		endpoint_format(e->label, sizeof(e->label), k);
		e->listen = k->side == EP_LISTEN;
		e->opened = es->opened;
		e->accepted = es->accepted;
		e->requests = es->requests;
		e->live_peak = es->live_peak;
		e->tw_entered = es->tw_entered;
		e->tw_peak = es->tw_live_peak;
		e->refused = es->connect_refused;
		e->timeouts = es->connect_timeout;
		e->failed_other = es->connect_other;
		e->resets_recv = es->resets_recv;
		e->resets_sent = es->resets_sent;
		e->closed_active = es->closed_active;
		e->closed_passive = es->closed_passive;
		ports_of(e, k, v);
	}
	qsort(all, n, sizeof(*all), by_weight);
	d->neps = n < DR_MAX_EPS ? n : DR_MAX_EPS;
	memcpy(d->eps, all, d->neps * sizeof(*all));
	free(all);
	for (size_t i = 0; i < d->neps; i++)
		if (d->eps[i].listen && d->eps[i].tw_entered)
			d->eps[i].tw_cols = tw_columns(p, d->eps[i].label, &d->eps[i].tw_ncols);
}

static void fill_fds(struct dr_proc *d, const struct run_info *run)
{
	const struct fdleak_proc *fp = fd_report_proc(&run->fds, d->pid);

	d->fd_limit = UINT64_MAX;
	d->fd_seconds_to_limit = -1;
	if (!fp)
		return;
	d->fd_known = true;
	d->fd_sites = !fp->listing_only;
	d->fd_now = fp->inv.total;
	d->fd_start = d->fd_peak = fp->inv.total;
	d->fd_mid = fp->inv.total;
	if (fp->books && fp->books->nsamples) {
		d->fd_start = fp->books->first_count;
		d->fd_mid = fd_proc_mid_count(fp->books);
		d->fd_listings = fp->books->nsamples;
		d->fd_span_s = (fp->books->last_sample_ns - fp->books->first_sample_ns) / 1e9;
		if (fp->books->peak_count > d->fd_peak)
			d->fd_peak = fp->books->peak_count;
	}
	if (d->fd_now > d->fd_peak)
		d->fd_peak = d->fd_now;
	d->fd_limit = fp->lim.soft ? fp->lim.soft : UINT64_MAX;
	d->fd_slope = fp->slope;
	d->fd_seconds_to_limit = fp->seconds_to_limit;
	d->leak_age_s = run->fds.leak_age_s;
	if (fp->nsus) {
		d->leak_old = fp->sus[0].old;
		fdsite_name(&fp->frames[0], d->leak_site, sizeof(d->leak_site));
	}
}

static void fill_proc(struct dr_proc *d, const struct proc_books *p, const struct agg *a,
		      const struct run_info *run)
{
	const struct doctor_run *dr = run->doctor;
	const struct conn *c;
	const uint64_t *sk, *since;

	d->pid = p->pid;
	memcpy(d->comm, p->comm, sizeof(d->comm));
	d->software = p->software;
	if (!d->software) {
		struct sw_hints h = { 0 };

		memcpy(h.comm, p->comm, sizeof(h.comm));
		d->software = sw_classify(&h);
	}
	d->target = p->target;
	d->opened = p->total.opened;
	d->accepted = p->total.accepted;
	d->never_accepted = p->total.never_accepted;
	d->closed = p->total.closed;
	d->requests = p->requests;
	d->closed_active = p->total.closed_active;
	d->closed_passive = p->total.closed_passive;
	d->tw_entered = p->total.tw_entered;
	d->tw_not_made = p->total.tw_not_made;
	d->orphaned = p->total.orphaned;
	d->tw_now = d->tw_peak = p->truth.state[CS_TCP_TIME_WAIT];
	d->orphan_now = d->orphan_peak = p->truth.orphan;
	for (size_t i = 0; i < p->nrows; i++) {
		if (p->rows[i].truth.state[CS_TCP_TIME_WAIT] > d->tw_peak)
			d->tw_peak = p->rows[i].truth.state[CS_TCP_TIME_WAIT];
		if (p->rows[i].truth.orphan > d->orphan_peak)
			d->orphan_peak = p->rows[i].truth.orphan;
	}
	/* Long orphans: those that ended after DR_ORPHAN_LONG_MS (log2
	 * buckets from that edge up) and those still orphaned that long. */
	for (int b = 0; b < ORPHAN_HIST_BUCKETS; b++)
		if ((1ULL << b) >= DR_ORPHAN_LONG_MS)
			d->orphan_long += p->orphan_ms_hist[b];
	for (size_t i = 0; hmap_next(&a->orphans, &i, (const void **)&sk, (void **)&since);)
		if (a->now_ns > *since && a->now_ns - *since >= DR_ORPHAN_LONG_MS * 1000000ULL &&
		    (c = hmap_get(&a->conns, sk)) && c->pid == p->pid)
			d->orphan_long++;
	fill_endpoints(d, p, run->limits);
	fill_fds(d, run);
	for (size_t i = 0; dr && i < dr->nfderr; i++)
		if (dr->fderr[i].pid == p->pid) {
			d->fderr_known = dr->fderr_counted;
			d->emfile = dr->fderr[i].emfile;
			d->enfile = dr->fderr[i].enfile;
		}
	if (dr && dr->fderr_counted)
		d->fderr_known = true;
}

/* Targets first, by pid: the reports' order (report.c keeps its own
 * copy of this order; the findings must not depend on report.c). */
static int by_target_pid(const void *x, const void *y)
{
	const struct proc_books *a = *(const struct proc_books *const *)x;
	const struct proc_books *b = *(const struct proc_books *const *)y;

	if (a->target != b->target)
		return a->target ? -1 : 1;
	return a->pid - b->pid;
}

int doctor_facts_build(struct dr_facts *f, const struct agg *a, const struct run_info *run)
{
	const struct proc_books *procs[1024];
	struct proc_books *pb;
	size_t n = 0;

	for (size_t i = 0; n < 1024 && hmap_next(&a->procs, &i, NULL, (void **)&pb);)
		procs[n++] = pb;
	qsort(procs, n, sizeof(procs[0]), by_target_pid);

	memset(f, 0, sizeof(*f));
	f->window_s = run->load_s > 0 ? run->load_s : run->elapsed_s;
	f->procs = calloc(n ? n : 1, sizeof(*f->procs));
	if (!f->procs)
		return -1;
	for (size_t i = 0; i < n; i++)
		fill_proc(&f->procs[f->nprocs++], procs[i], a, run);
	if (run->limits && run->limits->valid) {
		f->lim_known = true;
		f->lim = run->limits->lim;
		f->host_tw_peak = run->limits->host_tw_peak;
		f->host_orphan_peak = run->limits->host_orphan_peak;
	}
	if (run->doctor) {
		f->listeners = run->doctor->listeners;
		f->nlisteners = run->doctor->nlisteners;
		f->ns = run->doctor->ns;
		f->nns = run->doctor->nns;
		/* Every run measures its cost; the finding about it is the
		 * doctor's (attach shows the figures, agent.cost). */
		if (run->doctor->doctor_mode)
			f->cost = run->doctor->cost;
	}
	return 0;
}

void doctor_facts_free(struct dr_facts *f)
{
	for (size_t i = 0; f->procs && i < f->nprocs; i++)
		for (size_t k = 0; k < f->procs[i].neps; k++)
			free((void *)f->procs[i].eps[k].tw_cols);
	free(f->procs);
	f->procs = NULL;
	f->nprocs = 0;
}

size_t doctor_findings(const struct agg *a, const struct run_info *run, struct finding *out,
		       size_t max, char *healthy, size_t healthy_len)
{
	struct dr_facts f;
	size_t n = 0;

	if (healthy && healthy_len)
		healthy[0] = 0;
	if (doctor_facts_build(&f, a, run))
		return 0;
	n = doctor_rules(&f, out, max);
	if (!n && healthy)
		doctor_healthy_text(&f, healthy, healthy_len);
	doctor_facts_free(&f);
	return n;
}
