/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* agg_proc_gen() answers from a small cache of its last answers (a slot
 * per pid % 16) while the process table is unchanged: every answer must
 * be what the tables say, through pids that share a slot, books made and
 * dropped (which move others), a reused pid and a start time learnt late. */
#include <stdint.h>
#include <string.h>

#include "unit.h"
#include "tcp_books.h"

#define S(x) ((uint64_t)(x) * 1000000000ULL)

static void drop(struct agg *a, pid_t pid, uint64_t start)
{
	const struct proc_key *k;
	struct proc_books *p;
	struct proc_key key;
	bool found = false;

	for (size_t i = 0; hmap_next(&a->procs, &i, (const void **)&k, (void **)&p);)
		if (p->pid == pid && p->start_ns == start) {
			key = *k;
			found = true;
		}
	ASSERT_TRUE(found, "books to drop");
	agg_drop_proc(a, &key);
}

TEST(cached_answers_follow_the_tables)
{
	struct proc_books *p, *q;
	struct agg a;

	agg_init(&a, 0);
	/* Pids 100, 116, 132 share a slot; each asked twice in a row. */
	for (pid_t pid = 100; pid <= 132; pid += 16) {
		p = agg_proc_gen(&a, pid, S(pid));
		ASSERT_TRUE(p && p->pid == pid && p->start_ns == S(pid), "made");
		p->total.opened = (uint64_t)pid;
		ASSERT_TRUE(agg_proc_gen(&a, pid, S(pid)) == p, "same books again");
	}
	for (pid_t pid = 100; pid <= 132; pid += 16)
		ASSERT_EQ(agg_proc_gen(&a, pid, S(pid))->total.opened, (uint64_t)pid, "each its own");
	/* Dropping 100's books moves others (a delete fills its hole). */
	drop(&a, 100, S(100));
	ASSERT_EQ(agg_proc_gen(&a, 132, S(132))->total.opened, 132, "moved books found");
	p = agg_proc_gen(&a, 100, S(100));
	ASSERT_EQ(p->total.opened, 0, "dropped: new books");
	/* 116 reused by a later process: new books, the earlier one exited
	 * and still found by its own start time. */
	q = agg_proc_gen(&a, 116, S(500));
	ASSERT_EQ(q->total.opened, 0, "reused pid: new books");
	q->total.opened = 500;
	p = agg_proc_gen(&a, 116, S(116));
	ASSERT_TRUE(p->exited && p->total.opened == 116, "earlier process by its start");
	ASSERT_EQ(agg_proc_gen(&a, 116, S(500))->total.opened, 500, "latest by its start");
	ASSERT_EQ(agg_proc_gen(&a, 116, 0)->total.opened, 500, "no start: the latest");
	/* Books made without a start time learn it from the next record. */
	p = agg_proc(&a, 148);
	p->total.opened = 148;
	ASSERT_EQ(agg_proc_gen(&a, 148, S(148))->start_ns, S(148), "start learnt");
	ASSERT_EQ(agg_proc_gen(&a, 148, S(148))->total.opened, 148, "same books");
	ASSERT_EQ(a.procs.count, 5, "books: 100 (remade), 116 twice, 132, 148");
	agg_free(&a);
}

UNIT_MAIN()
