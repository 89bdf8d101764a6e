// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The processes a report shows and how they fold into groups (proc_view.h).
 * Pure: reads the books, never the kernel. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "proc_view.h"

static int cmp_report(const void *a, const void *b)
{
	const struct proc_books *x = *(const struct proc_books *const *)a;
	const struct proc_books *y = *(const struct proc_books *const *)b;

	if (x->target != y->target)
		return x->target ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	/* A reused pid: the earlier process first. */
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

const struct proc_books **proc_view_list(const struct agg *a, size_t *n)
{
	const struct proc_books **out;
	struct proc_books *p;

	*n = 0;
	if (!a->procs.count)
		return NULL;
	out = calloc(a->procs.count, sizeof(*out));
	if (!out)
		return NULL;
	for (size_t i = 0; *n < a->procs.count && hmap_next(&a->procs, &i, NULL, (void **)&p);)
		out[(*n)++] = p;
	qsort(out, *n, sizeof(*out), cmp_report);
	return out;
}

uint64_t proc_view_activity(const struct proc_counters *c)
{
	return c->opened + c->accepted + c->closed + c->tw_entered;
}

/* Busiest first; ties in the report's order, so the view is stable. */
static int cmp_busy(const void *a, const void *b)
{
	const struct proc_books *x = *(const struct proc_books *const *)a;
	const struct proc_books *y = *(const struct proc_books *const *)b;
	uint64_t ax = proc_view_activity(&x->total), ay = proc_view_activity(&y->total);

	if (ax != ay)
		return ax > ay ? -1 : 1;
	return cmp_report(a, b);
}

/* One group's members together (role, comm, parent), busiest first
 * inside. */
static int cmp_group(const void *a, const void *b)
{
	const struct proc_books *x = *(const struct proc_books *const *)a;
	const struct proc_books *y = *(const struct proc_books *const *)b;
	int c;

	if (x->target != y->target)
		return x->target ? -1 : 1;
	c = strncmp(x->comm, y->comm, sizeof(x->comm));
	if (c)
		return c;
	if (x->ptgid != y->ptgid)
		return x->ptgid < y->ptgid ? -1 : 1;
	if (x->exe_id != y->exe_id)
		return x->exe_id < y->exe_id ? -1 : 1;
	return cmp_busy(a, b);
}

static bool same_group(const struct proc_books *p, const struct proc_group *g)
{
	return p->target == g->target && p->ptgid == g->ptgid && p->exe_id == g->exe_id &&
	       !strncmp(p->comm, g->comm, sizeof(g->comm));
}

static void counters_add(struct proc_counters *s, const struct proc_counters *c)
{
	s->opened += c->opened;
	s->accepted += c->accepted;
	s->never_accepted += c->never_accepted;
	s->closed += c->closed;
	s->connect_failed += c->connect_failed;
	s->resets += c->resets;
	s->resets_sent += c->resets_sent;
	s->tw_entered += c->tw_entered;
	s->orphaned += c->orphaned;
	s->tw_expired += c->tw_expired;
	s->tw_killed += c->tw_killed;
	s->tw_end_unseen += c->tw_end_unseen;
	s->tw_not_made += c->tw_not_made;
	s->closed_active += c->closed_active;
	s->closed_passive += c->closed_passive;
	s->ends_unrun += c->ends_unrun;
}

static void group_add(struct proc_group *g, const struct proc_books *p)
{
	g->n++;
	g->exited += p->exited;
	counters_add(&g->total, &p->total);
	for (int s = 0; s < CS_TCP_MAX_STATES; s++)
		g->state[s] += p->truth.state[s];
	g->orphan += p->truth.orphan;
}

/* Folds groups (sums, member counts) into dst: the "rest" line. */
static void group_merge(struct proc_group *dst, const struct proc_group *g)
{
	dst->n += g->n;
	dst->exited += g->exited;
	counters_add(&dst->total, &g->total);
	for (int s = 0; s < CS_TCP_MAX_STATES; s++)
		dst->state[s] += g->state[s];
	dst->orphan += g->orphan;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* min, median, max of the members' connections. */
static int group_spread(struct proc_group *g)
{
	uint64_t *c = calloc(g->n, sizeof(*c));

	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i < g->n; i++)
		c[i] = g->members[i]->total.opened + g->members[i]->total.accepted;
	qsort(c, g->n, sizeof(*c), cmp_u64);
	g->conns_min = c[0];
	g->conns_p50 = c[(g->n - 1) / 2];
	g->conns_max = c[g->n - 1];
	free(c);
	return 0;
}

static int cmp_groups(const void *a, const void *b)
{
	const struct proc_group *x = a, *y = b;
	uint64_t ax = proc_view_activity(&x->total), ay = proc_view_activity(&y->total);

	if (ax != ay)
		return ax > ay ? -1 : 1;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	if (strncmp(x->comm, y->comm, sizeof(x->comm)))
		return strncmp(x->comm, y->comm, sizeof(x->comm));
	return x->ptgid < y->ptgid ? -1 : x->ptgid > y->ptgid;
}

int proc_view_build(struct proc_view *v, const struct agg *a)
{
	const struct proc_books **rest;
	size_t nrest = 0;

	memset(v, 0, sizeof(*v));
	v->all = proc_view_list(a, &v->nall);
	if (!v->all && a->procs.count)
		return -ENOMEM;
	for (size_t i = 0; i < v->nall; i++)
		group_add(&v->sum, v->all[i]);
	if (v->nall <= PROC_VIEW_FULL)
		return 0;
	v->folded = true;
	/* One array, two parts: the singles (the busiest targets), then the
	 * processes to group, sorted so a group's members are together. */
	v->singles = calloc(v->nall, sizeof(*v->singles));
	v->groups = calloc(v->nall, sizeof(*v->groups));
	if (!v->singles || !v->groups) {
		proc_view_free(v);
		return -ENOMEM;
	}
	memcpy(v->singles, v->all, v->nall * sizeof(*v->all));
	qsort(v->singles, v->nall, sizeof(*v->singles), cmp_busy);
	/* Targets sort before the rest in cmp_report, not in cmp_busy: pick
	 * them out, busiest first. */
	for (size_t i = 0; i < v->nall; i++) {
		const struct proc_books *p = v->singles[i];

		if (p->target && v->nsingles < PROC_VIEW_SINGLES) {
			memmove(v->singles + v->nsingles + 1, v->singles + v->nsingles,
				(i - v->nsingles) * sizeof(*v->singles));
			v->singles[v->nsingles++] = p;
		}
	}
	rest = v->singles + v->nsingles;
	nrest = v->nall - v->nsingles;
	qsort(rest, nrest, sizeof(*rest), cmp_group);
	for (size_t i = 0; i < nrest;) {
		struct proc_group *g = &v->groups[v->ngroups++];
		size_t j = i;

		const struct proc_books *parent;

		snprintf(g->comm, sizeof(g->comm), "%s", rest[i]->comm);
		g->target = rest[i]->target;
		g->ptgid = rest[i]->ptgid;
		g->exe_id = rest[i]->exe_id;
		memcpy(g->exe, rest[i]->exe, sizeof(g->exe));
		parent = g->ptgid ? agg_find_proc(a, g->ptgid) : NULL;
		if (parent)
			snprintf(g->pcomm, sizeof(g->pcomm), "%s", parent->comm);
		g->members = rest + i;
		while (j < nrest && same_group(rest[j], g))
			group_add(g, rest[j++]);
		if (group_spread(g)) {
			proc_view_free(v);
			return -ENOMEM;
		}
		i = j;
	}
	qsort(v->groups, v->ngroups, sizeof(*v->groups), cmp_groups);
	v->nshown = v->ngroups < PROC_VIEW_GROUPS ? v->ngroups : PROC_VIEW_GROUPS;
	for (size_t i = v->nshown; i < v->ngroups; i++)
		group_merge(&v->rest, &v->groups[i]);
	return 0;
}

void proc_view_free(struct proc_view *v)
{
	free(v->all);
	free(v->singles);
	free(v->groups);
	memset(v, 0, sizeof(*v));
}

const char *proc_group_role(char *buf, size_t len, const struct proc_group *g)
{
	const char *role = g->target ? "targets, " : "";

	if (!g->ptgid)
		snprintf(buf, len, "%s%s", role, g->target ? "parent unknown" :
			 "children or joined, parent unknown");
	else
		snprintf(buf, len, "%schildren of %d%s%.16s", role, (int)g->ptgid,
			 g->pcomm[0] ? " " : "", g->pcomm);
	/* Its executable when the name does not say it: two programs of one
	 * name under one parent are two groups, told apart here. */
	if (g->exe[0] && strncmp(g->exe, g->comm, sizeof(g->comm) - 1)) {
		size_t o = strlen(buf);

		snprintf(buf + o, len > o ? len - o : 0, ", executable %.16s", g->exe);
	}
	return buf;
}

const char *proc_view_count(char *buf, size_t len, uint64_t n)
{
	char digits[24];
	int nd = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)n);
	size_t o = 0;

	for (int i = 0; i < nd && o + 1 < len; i++) {
		if (i && (nd - i) % 3 == 0 && o + 2 < len)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}
