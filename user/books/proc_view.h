/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Which processes a report shows, and how: every one in a stable order
 * (the JSON report keeps them all), and for the text and HTML reports, past
 * a few dozen processes (a server that forks one process per connection:
 * PostgreSQL, Apache prefork, sshd), processes of one name, parent and role folded
 * into groups with their sums, so a report stays readable at 10,000
 * processes and its totals still add up. One place, so every renderer
 * folds the same way. */
#ifndef CONNSCOPE_PROC_VIEW_H
#define CONNSCOPE_PROC_VIEW_H

#include <stddef.h>
#include "tcp_books.h"

/* Up to this many processes a report shows every one in full. */
#define PROC_VIEW_FULL		16
/* Folded: processes shown in full (the busiest targets), groups shown,
 * members shown under each group. The rest: one line of sums. */
#define PROC_VIEW_SINGLES	2
#define PROC_VIEW_GROUPS	8
#define PROC_VIEW_MEMBERS	3

/* Processes of one comm, parent and role (targets the user named, or
 * processes that came with them: children, --comm, --cgroup): one
 * server's children, not every process of that name. */
struct proc_group {
	char comm[16];
	bool target;
	pid_t ptgid;		/* their parent; 0 unknown */
	uint32_t exe_id;	/* their executable (proc_books.exe_id); 0 unknown */
	char exe[16];		/* its base name, "" unknown */
	char pcomm[16];		/* the parent's name when it is in the books, else "" */
	size_t n, exited;
	struct proc_counters total;	/* sums of the members' counters */
	uint64_t state[CS_TCP_MAX_STATES];	/* sockets now, summed */
	uint64_t orphan;
	/* Connections (opened + accepted) per member: the spread. */
	uint64_t conns_min, conns_p50, conns_max;
	const struct proc_books **members;	/* busiest first (proc_view_busier) */
};

struct proc_view {
	const struct proc_books **all;	/* every process: targets first, by pid */
	size_t nall;
	bool folded;			/* more than PROC_VIEW_FULL processes */
	/* Folded: shown in full (nsingles), then groups (ngroups, busiest
	 * first); of the groups, the first nshown are shown and the rest are
	 * summed in rest (rest.n processes in ngroups - nshown groups). */
	const struct proc_books **singles;
	size_t nsingles;
	struct proc_group *groups;
	size_t ngroups, nshown;
	struct proc_group rest;
	struct proc_group sum;		/* every process */
};

/* Returns 0, or -ENOMEM (the view is then empty). */
int proc_view_build(struct proc_view *v, const struct agg *a);
void proc_view_free(struct proc_view *v);

/* Every process in the report's order (targets first, by pid), allocated
 * (the caller frees it); *n their number. NULL with *n 0: none, or out of
 * memory. */
const struct proc_books **proc_view_list(const struct agg *a, size_t *n);

/* How busy a process was: connections opened, accepted and closed, and
 * TIME_WAIT entered; the order of "busiest first". */
uint64_t proc_view_activity(const struct proc_counters *c);

/* What a group's members are, for its heading: "children of 4242
 * postgres", "targets, children of 1 systemd", "parent unknown". */
const char *proc_group_role(char *buf, size_t len, const struct proc_group *g);

/* n with thousands separators ("1,201"). */
const char *proc_view_count(char *buf, size_t len, uint64_t n);

#endif
