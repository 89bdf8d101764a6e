// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The books' process table: one proc_books per process met, a reused pid's
 * earlier processes kept apart by their start time, the latest of each pid
 * found by pid (a->cur), and the last answers cached for the record that
 * asks next (every record asks). The events' side is tcp_books.c. */
#include <stdlib.h>
#include "tcp_books.h"
#include "reuse.h"

static void proc_books_free(struct proc_books *p)
{
	reuse_endpoints_free(p);
	free(p->rows);
	hmap_free(&p->endpoints);
	heatmap_free(&p->hm_lifetime);
	heatmap_free(&p->hm_rpc);
	heatmap_free(&p->hm_tw);
	heatmap_free(&p->hm_orphan);
}

void agg_procs_free(struct agg *a)
{
	struct proc_books *p;

	for (size_t i = 0; hmap_next(&a->procs, &i, NULL, (void **)&p);)
		proc_books_free(p);
	hmap_free(&a->procs);
	hmap_free(&a->cur);
}

void agg_drop_proc(struct agg *a, const struct proc_key *key)
{
	struct proc_key k = *key;	/* key may point into the table */
	struct proc_books *p = hmap_get(&a->procs, &k);
	const uint64_t *seq;

	if (!p)
		return;
	a->ends_dropped += p->total.opened + p->total.accepted;
	proc_books_free(p);
	hmap_del(&a->procs, &k);
	a->procs_gen++;
	seq = hmap_get(&a->cur, &k.pid);
	if (seq && *seq == k.seq)
		hmap_del(&a->cur, &k.pid);
	a->procs_dropped++;
}

struct proc_books *agg_find_proc(const struct agg *a, pid_t pid)
{
	const uint64_t *seq = hmap_get(&a->cur, &pid);
	struct proc_key k = { .pid = pid };

	if (!seq)
		return NULL;
	k.seq = *seq;
	return hmap_get(&a->procs, &k);
}

/* The latest books of a pid change only with a->procs (proc_new,
 * agg_drop_proc: procs_gen), and so do their addresses. */
struct proc_books *agg_holder(struct agg *a, pid_t pid)
{
	struct holder_memo *m = &a->holder_memo;
	struct proc_books *p;

	if (m->p && m->pid == pid && m->gen == a->procs_gen)
		return m->p;
	p = agg_find_proc(a, pid);
	if (p)
		*m = (struct holder_memo){ pid, a->procs_gen, p };
	return p;
}

/* New books for a process of pid; it becomes pid's latest when latest. */
static struct proc_books *proc_new(struct agg *a, pid_t pid, uint64_t start_ns, bool latest)
{
	struct proc_key k = { .pid = pid, .seq = ++a->proc_seq };
	struct proc_books *p = hmap_upsert(&a->procs, &k, NULL);

	a->procs_gen++;	/* books may have moved: proc_cached() forgets */
	uint64_t *seq;

	if (!p)
		return NULL;
	p->pid = pid;
	p->start_ns = start_ns;
	p->t0_ns = a->t0_ns;
	hmap_init(&p->endpoints, sizeof(struct endpoint_key), sizeof(struct endpoint_stats));
	if (latest) {
		seq = hmap_upsert(&a->cur, &pid, NULL);
		if (seq)
			*seq = k.seq;
	}
	return p;
}

struct proc_books *agg_proc(struct agg *a, pid_t pid)
{
	struct proc_books *p = agg_find_proc(a, pid);

	return p ? p : proc_new(a, pid, 0, true);
}

/* The answer for (pid, start_ns) stays the answer while a->procs does not
 * change: the latest books of a pid change only with it, and a start time,
 * once known, stays. start_ns 0 (the latest, whichever) is not kept. */
static struct proc_books *proc_cached(struct agg *a, pid_t pid, uint64_t start_ns)
{
	struct proc_cache_slot *s = &a->proc_cache[(uint32_t)pid % 16];

	return s->gen == a->procs_gen && s->pid == pid && s->start_ns == start_ns && start_ns ?
		       s->p : NULL;
}

static void proc_cache_put(struct agg *a, struct proc_books *p)
{
	struct proc_cache_slot *s = &a->proc_cache[(uint32_t)p->pid % 16];

	*s = (struct proc_cache_slot){ p->pid, p->start_ns, a->procs_gen, p };
}

struct proc_books *agg_proc_gen(struct agg *a, pid_t pid, uint64_t start_ns)
{
	struct proc_books *p = proc_cached(a, pid, start_ns), *q;
	uint64_t latest_start;

	if (p)
		return p;
	p = agg_find_proc(a, pid);
	if (!p)
		return proc_new(a, pid, start_ns, true);
	if (!start_ns || p->start_ns == start_ns) {
		if (start_ns)
			proc_cache_put(a, p);
		return p;
	}
	if (!p->start_ns) {
		p->start_ns = start_ns;	/* learnt now */
		return p;
	}
	/* Rare: a process of this pid other than the latest. */
	for (size_t i = 0; hmap_next(&a->procs, &i, NULL, (void **)&q);)
		if (q->pid == pid && q->start_ns == start_ns)
			return q;
	/* The pid was reused: a new process, books of its own. */
	latest_start = p->start_ns;
	q = proc_new(a, pid, start_ns, start_ns > latest_start);
	if (!q)
		return NULL;
	if (start_ns < latest_start) {
		q->exited = true;	/* an earlier process, met late */
		return q;
	}
	/* proc_new() may have moved the books: find the earlier one again. */
	for (size_t i = 0; hmap_next(&a->procs, &i, NULL, (void **)&p);)
		if (p->pid == pid && p->start_ns == latest_start)
			p->exited = true;
	return agg_find_proc(a, pid);
}

void agg_ends_unrun(void *ctx, uint32_t tgid, uint32_t flags, uint64_t n)
{
	struct agg *a = ctx;
	struct proc_books *p = tgid ? agg_proc(a, (pid_t)tgid) : NULL;

	if (!p)
		return;
	p->total.ends_unrun += n;
	/* Told (its birth record, or a seed's adoption): in the books since,
	 * opened or accepted already. Before, counted there a second time
	 * (42_postgres_backends' client: 1,203 opened of 1,201). */
	if (flags & CS_SKB_TOLD) {
		a->ends_unrun_born += n;
		return;
	}
	/* The connection was made (its storage was) and is over: counted where
	 * its end record would have counted it, and said apart. */
	if (flags & CS_SKB_PASSIVE)
		p->total.accepted += n;
	else
		p->total.opened += n;
}
