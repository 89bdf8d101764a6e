// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Sticky series membership and the series cap (see prom_state.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "prom_state.h"

/* proc_counters is nothing but uint64_t counters: added and clamped as an
 * array, so a counter added to the struct is summed into "other" too. */
#define NCOUNTERS (sizeof(struct proc_counters) / sizeof(uint64_t))
_Static_assert(sizeof(struct proc_counters) % sizeof(uint64_t) == 0,
	       "struct proc_counters holds only uint64_t counters");

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

void prom_state_init(struct prom_state *s, const struct prom_limits *lim)
{
	memset(s, 0, sizeof(*s));
	s->lim = *lim;
	hmap_init(&s->members, sizeof(pid_t), sizeof(struct prom_member));
	hmap_init(&s->others, sizeof(pid_t), 1);
	hmap_init(&s->grouped, sizeof(pid_t), 1);
	hmap_init(&s->retired, sizeof(pid_t), sizeof(uint64_t));
}

void prom_state_free(struct prom_state *s)
{
	hmap_free(&s->members);
	hmap_free(&s->others);
	hmap_free(&s->grouped);
	hmap_free(&s->retired);
	free(s->views);
	s->views = NULL;
	s->nviews = s->views_cap = 0;
}

uint64_t prom_activity(const struct proc_books *p)
{
	uint64_t n = p->total.opened + p->total.accepted + p->total.closed;

	for (int st = 1; st < CS_TCP_MAX_STATES; st++)
		n += p->truth.state[st];
	return n;
}

struct cand {
	const struct proc_books *p;
	uint64_t activity;
};

/* Newcomers when slots are scarce: the most active first, then by pid. */
static int by_activity(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->activity != y->activity)
		return x->activity > y->activity ? -1 : 1;
	return x->p->pid - y->p->pid;
}

/* Every process gets a slot (-p): the report's order, targets first. */
static int by_report_order(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->p->target != y->p->target)
		return x->p->target ? -1 : 1;
	return x->p->pid - y->p->pid;
}

/* Targets first (each has a slot), then the busiest children. */
static int by_target_activity(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->p->target != y->p->target)
		return x->p->target ? -1 : 1;
	return x->p->target ? by_report_order(a, b) : by_activity(a, b);
}

static int by_seq(const void *a, const void *b)
{
	const struct prom_member *x = *(const struct prom_member *const *)a;
	const struct prom_member *y = *(const struct prom_member *const *)b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Endpoints competing for the last slots: most connections first. */
static int by_conns(const void *a, const void *b)
{
	const struct prom_ep *x = a, *y = b;

	if (x->conns != y->conns)
		return x->conns > y->conns ? -1 : 1;
	if (x->tw_live != y->tw_live)
		return x->tw_live > y->tw_live ? -1 : 1;
	return memcmp(&x->key, &y->key, sizeof(x->key));
}

/* Members seen exited are marked; with a slot limit, those gone for
 * longer than the grace are dropped and their slots freed. */
static void retire_members(struct prom_state *s, const struct agg *a,
			   const struct prom_update_in *in)
{
	pid_t *drop;
	size_t ndrop = 0;
	struct prom_member *m;

	if ((!s->lim.top_processes && !s->lim.retire_gone) || !s->members.count)
		return;
	drop = calloc(s->members.count, sizeof(*drop));
	if (!drop)
		return;
	for (size_t i = 0; hmap_next(&s->members, &i, NULL, (void **)&m);) {
		const struct proc_books *p = agg_find_proc(a, m->pid);

		if (!m->gone && (!p || (in->gone ? in->gone(p, in->ctx) : p->exited))) {
			m->gone = true;
			m->gone_ns = in->now_ns;
		}
		if (m->gone && in->now_ns - m->gone_ns >= PROM_GONE_KEEP_NS)
			drop[ndrop++] = m->pid;
	}
	/* Deleted after the walk: deleting moves entries under the iterator. */
	for (size_t i = 0; i < ndrop; i++) {
		struct prom_member *gone = hmap_get(&s->members, &drop[i]);
		uint64_t start = gone ? gone->start_ns : 0;
		uint64_t *r;

		hmap_del(&s->members, &drop[i]);
		r = hmap_upsert(&s->retired, &drop[i], NULL);
		if (r)
			*r = start;
	}
	free(drop);
}

static void join(struct prom_state *s, const struct proc_books *p)
{
	bool created;
	struct prom_member *m = hmap_upsert(&s->members, &p->pid, &created);

	if (!m || !created)
		return;
	m->pid = p->pid;
	m->start_ns = p->start_ns;
	m->seq = s->next_seq++;
}

/* A slot of its own for p: under --all's top while slots are left, else
 * every target, and every process unless children are grouped. */
static bool slot_free(const struct prom_state *s, const struct proc_books *p)
{
	if (s->lim.top_processes)
		return s->members.count < s->lim.top_processes;
	return p->target || !s->lim.group_children;
}

/* p's group (1..), made when there is room; 0: none ("other"). */
static uint8_t group_of(struct prom_state *s, const struct proc_books *p)
{
	size_t g;

	for (g = 1; g <= s->ngroups; g++)
		if (s->aggs[g].base.parent == p->ptgid &&
		    !strncmp(s->aggs[g].base.comm, p->comm, sizeof(p->comm)))
			return g;
	if (s->ngroups == PROM_MAX_GROUPS)
		return 0;
	g = ++s->ngroups;
	memset(&s->aggs[g], 0, sizeof(s->aggs[g]));
	s->aggs[g].base.group = true;
	s->aggs[g].base.parent = p->ptgid;
	memcpy(s->aggs[g].base.comm, p->comm, sizeof(p->comm));
	return g;
}

/* Processes the books have and the state does not: members while slots
 * are free, "other" for good after that. */
static void admit(struct prom_state *s, const struct agg *a)
{
	struct cand *c = calloc(a->procs.count ? a->procs.count : 1, sizeof(*c));
	const struct proc_books *p;
	size_t n = 0;
	uint8_t *one;

	if (!c)
		return;
	for (size_t i = 0; hmap_next(&a->procs, &i, NULL, (void **)&p);) {
		uint64_t *r;

		if (hmap_get(&s->members, &p->pid) || hmap_get(&s->others, &p->pid))
			continue;
		r = hmap_get(&s->retired, &p->pid);
		if (r && *r == p->start_ns)
			continue;	/* its series are over */
		c[n] = (struct cand){ .p = p, .activity = prom_activity(p) };
		/* Not ranked before it shows activity: not even into "other". */
		if (s->lim.top_processes && !c[n].activity)
			continue;
		n++;
	}
	/* The busiest first where slots may run out. */
	qsort(c, n, sizeof(*c), s->lim.top_processes ? by_activity :
			       s->lim.group_children ? by_target_activity : by_report_order);
	for (size_t i = 0; i < n; i++) {
		uint8_t g = 0;

		/* A reused pid that was retired is a new process. */
		hmap_del(&s->retired, &c[i].p->pid);
		if (slot_free(s, c[i].p))
			join(s, c[i].p);
		else if (s->lim.group_children && (g = group_of(s, c[i].p)) &&
			 (one = hmap_upsert(&s->grouped, &c[i].p->pid, NULL)))
			*one = g;
		else if ((one = hmap_upsert(&s->others, &c[i].p->pid, NULL)))
			*one = 1;
	}
	free(c);
}

static void view_of_proc(struct prom_view *v, const struct proc_books *p)
{
	memset(v, 0, sizeof(*v));
	v->pid = p->pid;
	memcpy(v->comm, p->comm, sizeof(v->comm) - 1);
	memcpy(v->container, p->container, sizeof(v->container));
	memcpy(v->pod_uid, p->pod_uid, sizeof(v->pod_uid));
	v->total = p->total;
	v->requests = p->requests;
	memcpy(v->state, p->truth.state, sizeof(v->state));
	v->orphan = p->truth.orphan;
	memcpy(v->lifetime_ms_hist, p->lifetime_ms_hist, sizeof(v->lifetime_ms_hist));
	memcpy(v->rpc_hist, p->rpc_hist, sizeof(v->rpc_hist));
	memcpy(v->handshake_us_hist, p->handshake_us_hist, sizeof(v->handshake_us_hist));
	v->lifetime_ns_sum = p->lifetime_ns_sum;
	v->rpc_sum = p->rpc_sum;
	v->handshake_ns_sum = p->handshake_ns_sum;
}

static bool ep_active(const struct endpoint_stats *es)
{
	return es->opened || es->accepted || es->tw_entered || es->tw_live;
}

/* A member's endpoints: those that have a series keep it, newcomers take
 * the free slots, the rest are "other". A connection handed from the
 * listener's owner to the accepting process leaves the first one's
 * endpoint count: the shown count stays where it was. */
static void member_endpoints(struct prom_member *m, const struct proc_books *p,
			     struct prom_view *v)
{
	struct prom_ep *fresh = calloc(p->endpoints.count ? p->endpoints.count : 1, sizeof(*fresh));
	const struct endpoint_key *k;
	struct endpoint_stats *es;
	uint64_t other = 0;
	uint32_t other_tw = 0;
	size_t nfresh = 0, e;

	for (e = 0; e < m->neps; e++)
		m->eps[e].tw_live = 0;
	for (size_t i = 0; fresh && hmap_next(&p->endpoints, &i, (const void **)&k, (void **)&es);) {
		uint64_t conns = es->opened + es->accepted;

		if (!ep_active(es))
			continue;
		for (e = 0; e < m->neps && memcmp(&m->eps[e].key, k, sizeof(*k)); e++)
			;
		if (e < m->neps) {
			m->eps[e].conns = max64(m->eps[e].conns, conns);
			m->eps[e].tw_live = es->tw_live;
			continue;
		}
		fresh[nfresh++] = (struct prom_ep){ .key = *k, .conns = conns, .tw_live = es->tw_live };
	}
	qsort(fresh, nfresh, sizeof(*fresh), by_conns);
	/* Slots are never given back, so an endpoint sent to "other" once
	 * finds them full every time after. */
	for (size_t i = 0; i < nfresh; i++) {
		if (m->neps < PROM_TOP_ENDPOINTS) {
			m->eps[m->neps++] = fresh[i];
			continue;
		}
		m->ep_other = true;
		other += fresh[i].conns;
		other_tw += fresh[i].tw_live;
	}
	free(fresh);
	m->ep_other_conns = max64(m->ep_other_conns, other);
	memcpy(v->eps, m->eps, sizeof(v->eps));
	v->neps = m->neps;
	v->ep_other = m->ep_other;
	v->ep_other_conns = m->ep_other_conns;
	v->ep_other_tw = other_tw;
}

static void hist_add(uint64_t *to, const uint64_t *from)
{
	for (int b = 0; b < REUSE_HIST_BUCKETS; b++)
		to[b] += from[b];
}

static void hist_clamp(uint64_t *v, const uint64_t *last)
{
	for (int b = 0; b < REUSE_HIST_BUCKETS; b++)
		v[b] = max64(v[b], last[b]);
}

/* The counters (not the gauges) of p added into v. */
static void add_counters(struct prom_view *v, const struct proc_books *p)
{
	const uint64_t *from = (const uint64_t *)&p->total;
	uint64_t *to = (uint64_t *)&v->total;
	struct endpoint_stats *es;

	for (size_t c = 0; c < NCOUNTERS; c++)
		to[c] += from[c];
	v->requests += p->requests;
	hist_add(v->lifetime_ms_hist, p->lifetime_ms_hist);
	hist_add(v->rpc_hist, p->rpc_hist);
	hist_add(v->handshake_us_hist, p->handshake_us_hist);
	v->lifetime_ns_sum += p->lifetime_ns_sum;
	v->rpc_sum += p->rpc_sum;
	v->handshake_ns_sum += p->handshake_ns_sum;
	for (size_t k = 0; hmap_next(&p->endpoints, &k, NULL, (void **)&es);)
		v->ep_other_conns += es->opened + es->accepted;
}

bool prom_state_forget(struct prom_state *s, const struct proc_books *p)
{
	uint8_t *g;

	if (hmap_get(&s->members, &p->pid))
		return false;
	g = hmap_get(&s->grouped, &p->pid);
	if (g && *g <= s->ngroups) {
		add_counters(&s->aggs[*g].base, p);
		hmap_del(&s->grouped, &p->pid);
	} else if (hmap_del(&s->others, &p->pid)) {
		add_counters(&s->aggs[0].base, p);
	}
	hmap_del(&s->retired, &p->pid);
	s->forgotten++;
	return true;
}

/* p's gauges and counters into an aggregate's view. */
static void agg_add(struct prom_view *v, const struct agg *a, pid_t pid)
{
	const struct proc_books *p = agg_find_proc(a, pid);
	struct endpoint_stats *es;

	if (!p)
		return;
	add_counters(v, p);
	for (int st = 0; st < CS_TCP_MAX_STATES; st++)
		v->state[st] += p->truth.state[st];
	v->orphan += p->truth.orphan;
	for (size_t k = 0; hmap_next(&p->endpoints, &k, NULL, (void **)&es);)
		v->ep_other_tw += es->tw_live;
}

/* An aggregate's view, no counter below what it last showed. */
static void agg_clamp(struct prom_agg *g, struct prom_view *v)
{
	if (g->shown) {
		const uint64_t *last = (const uint64_t *)&g->last.total;
		uint64_t *cur = (uint64_t *)&v->total;

		for (size_t c = 0; c < NCOUNTERS; c++)
			cur[c] = max64(cur[c], last[c]);
		v->requests = max64(v->requests, g->last.requests);
		hist_clamp(v->lifetime_ms_hist, g->last.lifetime_ms_hist);
		hist_clamp(v->rpc_hist, g->last.rpc_hist);
		hist_clamp(v->handshake_us_hist, g->last.handshake_us_hist);
		v->lifetime_ns_sum = max64(v->lifetime_ns_sum, g->last.lifetime_ns_sum);
		v->rpc_sum = max64(v->rpc_sum, g->last.rpc_sum);
		v->handshake_ns_sum = max64(v->handshake_ns_sum, g->last.handshake_ns_sum);
		v->ep_other_conns = max64(v->ep_other_conns, g->last.ep_other_conns);
	}
	g->last = *v;
	g->shown = true;
}

/* The groups' views, then "other"'s (when it has or had processes), each
 * the sum of its processes, those forgotten included; how many written. */
static size_t agg_views(struct prom_state *s, const struct agg *a, struct prom_view *out)
{
	bool other_on = s->others.count || s->aggs[0].shown;
	struct prom_view *v = out, other;
	const uint8_t *g;
	const pid_t *pid;

	for (size_t i = 0; i <= s->ngroups; i++) {
		v[i] = s->aggs[i].base;
		v[i].ep_other = true;
	}
	snprintf(v[0].comm, sizeof(v[0].comm), "other");
	for (size_t i = 0; hmap_next(&s->others, &i, (const void **)&pid, NULL);)
		agg_add(&v[0], a, *pid);
	for (size_t i = 0; hmap_next(&s->grouped, &i, (const void **)&pid, (void **)&g);)
		if (*g <= s->ngroups)
			agg_add(&v[*g], a, *pid);
	for (size_t i = other_on ? 0 : 1; i <= s->ngroups; i++)
		agg_clamp(&s->aggs[i], &v[i]);
	/* Groups first, in the order made; "other" last. */
	other = v[0];
	memmove(&v[0], &v[1], s->ngroups * sizeof(*v));
	if (!other_on)
		return s->ngroups;
	v[s->ngroups] = other;
	return s->ngroups + 1;
}

_Static_assert(QUIC_HIST_BUCKETS == REUSE_HIST_BUCKETS, "one histogram writer");

static void view_quic(struct prom_quic *q, const struct quic_run *run, pid_t pid)
{
	const struct quic_proc *p = run && run->books ? quic_books_proc(run->books, pid) : NULL;
	struct quic_view v;

	memset(q, 0, sizeof(*q));
	if (!p)
		return;
	quic_proc_view(p, &v);
	if (!v.c.connections && !v.c.version_negotiations)
		return;
	q->valid = true;
	q->source = quic_source_name(v.lifecycle_src);
	q->connections = v.c.connections;
	q->completed = v.c.handshakes_completed;
	q->failed = v.c.handshakes_failed;
	q->retries = v.c.retries;
	q->version_negotiations = v.c.version_negotiations;
	q->migrations = v.c.migrations;
	memcpy(q->handshake_us_hist, v.c.handshake_us_hist, sizeof(q->handshake_us_hist));
	q->handshake_ns_sum = v.c.handshake_ns_sum;
}

/* The series a view writes; prom.c writes exactly these (test_prom
 * counts the lines). */
static size_t view_series(const struct prom_view *v)
{
	/* 11 connection counters, requests_total, tcp_orphans */
	size_t n = 13 + TCP_STATE_ORDER_LEN + 3 * PROM_HIST_SERIES + 2 * (v->neps + v->ep_other);

	if (v->fd.valid)
		n += 1 + (v->fd.max != UINT64_MAX) + FDT_MAX + v->fd.has_suspects;
	if (v->quic.valid)
		n += PROM_QUIC_SERIES;
	return n;
}

void prom_state_admit(struct prom_state *s, const struct agg *a, const struct prom_update_in *in)
{
	retire_members(s, a, in);
	admit(s, a);
}

bool prom_state_next_member(const struct prom_state *s, size_t *iter, pid_t *pid)
{
	struct prom_member *m;

	if (!hmap_next(&s->members, iter, NULL, (void **)&m))
		return false;
	*pid = m->pid;
	return true;
}

void prom_state_update(struct prom_state *s, const struct agg *a, const struct prom_update_in *in)
{
	prom_state_admit(s, a, in);
	prom_state_views(s, a, in);
}

void prom_state_views(struct prom_state *s, const struct agg *a, const struct prom_update_in *in)
{
	struct prom_member **ms, *m;
	size_t nm = 0, n = 0, used = in->fixed_series;
	bool full = false;

	s->nviews = 0;
	s->dropped = 0;
	if (s->views_cap < s->members.count + 1 + PROM_MAX_GROUPS) {
		size_t cap = s->members.count + 1 + PROM_MAX_GROUPS;
		struct prom_view *v = realloc(s->views, cap * sizeof(*v));

		if (!v)
			goto out;
		s->views = v;
		s->views_cap = cap;
	}
	ms = calloc(s->members.count ? s->members.count : 1, sizeof(*ms));
	if (!ms)
		goto out;
	for (size_t i = 0; hmap_next(&s->members, &i, NULL, (void **)&m);)
		ms[nm++] = m;
	qsort(ms, nm, sizeof(*ms), by_seq);
	for (size_t i = 0; i < nm; i++) {
		const struct proc_books *p = agg_find_proc(a, ms[i]->pid);

		if (!p)
			continue;
		view_of_proc(&s->views[n], p);
		member_endpoints(ms[i], p, &s->views[n]);
		if (in->fds)
			in->fds(p->pid, &s->views[n].fd, in->ctx);
		view_quic(&s->views[n].quic, in->quic, p->pid);
		n++;
	}
	free(ms);
	n += agg_views(s, a, &s->views[n]);
	/* The cap: whole views in order, up to the first that does not fit. */
	for (size_t i = 0; i < n; i++) {
		struct prom_view *v = &s->views[i];

		v->series = view_series(v);
		if (!full && (!s->lim.max_series || used + v->series <= s->lim.max_series)) {
			if (s->nviews != i)
				s->views[s->nviews] = *v;
			s->nviews++;
			used += v->series;
		} else {
			full = true;
			s->dropped += v->series;
		}
	}
out:
	s->series = used;
	s->dropped_total += s->dropped;
	s->snapshots++;
}
