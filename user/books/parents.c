// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Whose child each process is (tcp_books.h, "Parents"): the kernel tells a
 * traced child's parent at its fork, before the child has books; a server
 * that forks one process per connection (PostgreSQL, Apache prefork,
 * sshd) makes thousands that live milliseconds, too briefly for /proc. The
 * reports group processes of one name and parent (proc_view.c). */
#include <string.h>
#include "tcp_books.h"

void agg_parent_note(struct agg *a, pid_t pid, uint64_t start_ns, pid_t ptgid)
{
	struct parent_note *n;
	bool created;

	if (a->parents.count >= AGG_MAX_PARENT_NOTES && !hmap_get(&a->parents, &pid)) {
		a->parents_dropped++;
		return;
	}
	n = hmap_upsert(&a->parents, &pid, &created);
	if (!n) {
		a->parents_dropped++;
		return;
	}
	/* A reused pid: the newer child's note replaces the older's. */
	n->start_ns = start_ns;
	n->gone_ns = 0;
	n->ptgid = ptgid;
}

void agg_parent_take(struct agg *a, struct proc_books *p)
{
	struct parent_note *n = hmap_get(&a->parents, &p->pid);

	if (!n)
		return;
	/* start 0: the books do not know the process's start; the note is
	 * the latest child of that pid, which the books' latest is too. */
	if (!p->start_ns || !n->start_ns || n->start_ns == p->start_ns)
		p->ptgid = n->ptgid;
	hmap_del(&a->parents, &p->pid);
}

void agg_parents_prune(struct agg *a, bool (*gone)(pid_t pid), uint64_t now_ns)
{
	struct parent_note *note;
	pid_t dead[256];
	const pid_t *pid;
	size_t n = 0, i = a->parents_iter;
	bool wrapped = false;

	/* A bounded look a call, from where the last one stopped, so an
	 * interval costs at most 1,024 reads of /proc; collected, then
	 * deleted (no delete during a walk: hashmap.h). */
	for (int looked = 0; looked < 1024 && n < 256;) {
		if (!hmap_next(&a->parents, &i, (const void **)&pid, (void **)&note)) {
			if (wrapped)
				break;
			wrapped = true;
			i = 0;
			continue;
		}
		looked++;
		/* A child gone now may still have events in the ring (a
		 * backend lives milliseconds): its note goes once the books
		 * have applied an event from after it was found gone (one
		 * ring, in order: every event of the child came before). */
		if (note->gone_ns && a->now_ns > note->gone_ns)
			dead[n++] = *pid;
		else if (!note->gone_ns && gone(*pid))
			note->gone_ns = now_ns;
	}
	a->parents_iter = i;
	for (size_t k = 0; k < n; k++)
		hmap_del(&a->parents, &dead[k]);
}

void agg_inherit_exe(struct agg *a)
{
	struct proc_books *p;

	/* A child gone before it was read ran its parent's executable (a
	 * fork that execs takes a new name too, and one of another name is
	 * left alone): so a server's short-lived children group with the
	 * ones read alive. */
	for (size_t i = 0; hmap_next(&a->procs, &i, NULL, (void **)&p);) {
		const struct proc_books *q;

		if (p->exe_id || !p->ptgid || !(q = agg_find_proc(a, p->ptgid)) || !q->exe_id ||
		    strncmp(q->comm, p->comm, sizeof(p->comm)))
			continue;
		p->exe_id = q->exe_id;
		memcpy(p->exe, q->exe, sizeof(p->exe));
	}
}
