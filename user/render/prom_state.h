/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Which processes and endpoints get series of their own in the metrics,
 * kept from one snapshot to the next so that no counter ever goes down.
 *
 * Membership is sticky. A process joins when it first shows activity and
 * a slot is free (with -p every process of the books has one); when more
 * newcomers than free slots show up at once, the most active win. The rest
 * are summed into pid="other" for good, so "other" only grows: a process
 * never leaves "other", and a member never moves into it. A member that
 * exits keeps its series (their final values) for PROM_GONE_KEEP_NS, then
 * its slot is free for a newcomer (with --all, --comm and --cgroup; with
 * -p alone the listed processes keep their series). Endpoints of a
 * process work the same way: the first PROM_TOP_ENDPOINTS keep their own
 * series, later ones are endpoint="other" for good.
 *
 * Then the cap: at most max_series series in one snapshot. Processes are
 * written whole (every family, every bucket) in the order they joined, then
 * "other"; the first one that does not fit and everything after it are
 * left out and counted.
 *
 * Pure state: the caller says which processes are gone and what their fds
 * are, so the unit tests drive it with made-up books. */
#ifndef CONNSCOPE_PROM_STATE_H
#define CONNSCOPE_PROM_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tcp_books.h"
#include "fd_view.h"
#include "quic_books.h"

#define PROM_TOP_ENDPOINTS 10
#define PROM_GONE_KEEP_NS (60ULL * 1000000000ULL)
/* Series of one histogram: every log2 bucket, +Inf, _sum and _count. */
#define PROM_HIST_SERIES (REUSE_HIST_BUCKETS + 3)

struct prom_limits {
	uint32_t top_processes;	/* processes with series of their own; 0: all (-p) */
	uint32_t max_series;	/* series in one snapshot; 0: no cap */
	/* With top_processes 0 too, members that exit keep their series for
	 * the grace only (--comm/--cgroup, whose processes come and go:
	 * without it every one ever seen would keep its series for good). */
	bool retire_gone;
	/* Processes that are not targets (children, joined ones) are summed
	 * by group, as the text and HTML reports fold them: one name, one
	 * parent (pid="children",comm=NAME,parent=PPID), at most
	 * PROM_MAX_GROUPS groups, later ones into "other". A server forking
	 * one process per connection (1,201 PostgreSQL backends wrote 15 MB
	 * of series, one set each) is its target's series and one group's.
	 * false: every process has series of its own. */
	bool group_children;
};

#define PROM_MAX_GROUPS 16

/* A process's fds, for the fd families. */
struct prom_fd {
	bool valid;		/* false: no fd series for this process */
	uint64_t open;
	uint64_t max;		/* soft RLIMIT_NOFILE; UINT64_MAX: unlimited (no series) */
	uint64_t by_type[FDT_MAX];
	bool has_suspects;	/* fd tracking with stacks: the leak suspect gauge */
	uint64_t suspects;
};

struct prom_ep {
	struct endpoint_key key;
	uint64_t conns;		/* opened + accepted, never below the last one shown */
	uint32_t tw_live;
};

/* What one process, or "other" (pid 0), shows in a snapshot. */
/* A process's QUIC figures (quic_proc_view()); invalid: none to write. */
struct prom_quic {
	bool valid;
	const char *source;	/* where the lifecycle figures come from */
	uint64_t connections, completed, failed, retries, version_negotiations, migrations;
	uint64_t handshake_us_hist[QUIC_HIST_BUCKETS];
	uint64_t handshake_ns_sum;
};
#define PROM_QUIC_SERIES (6 + PROM_HIST_SERIES)
#define PROM_QUIC_AGENT_SERIES 7	/* sources attached 3, packet programs, datagrams, lost 2 */

struct prom_view {
	pid_t pid;		/* 0: an aggregate: "other", or a group (group set) */
	bool group;		/* children of one name and parent (comm, parent) */
	pid_t parent;		/* the group's parent; 0 unknown */
	char comm[16];
	char container[128];	/* "": none (no label) */
	char pod_uid[40];
	struct proc_counters total;
	uint64_t requests;
	uint32_t state[CS_TCP_MAX_STATES];
	uint32_t orphan;
	uint64_t lifetime_ms_hist[REUSE_HIST_BUCKETS];
	uint64_t rpc_hist[REUSE_HIST_BUCKETS];
	uint64_t handshake_us_hist[REUSE_HIST_BUCKETS];
	uint64_t lifetime_ns_sum, rpc_sum, handshake_ns_sum;
	struct prom_ep eps[PROM_TOP_ENDPOINTS];
	size_t neps;
	bool ep_other;		/* an endpoint="other" series */
	uint64_t ep_other_conns;
	uint32_t ep_other_tw;
	struct prom_fd fd;
	struct prom_quic quic;	/* members only, never "other" */
	size_t series;		/* how many this view writes */
};

/* A process with series of its own. */
struct prom_member {
	pid_t pid;
	uint64_t start_ns;
	uint64_t seq;		/* join order */
	bool gone;		/* seen exited ... */
	uint64_t gone_ns;	/* ... at this time */
	struct prom_ep eps[PROM_TOP_ENDPOINTS];	/* its endpoints, last shown */
	size_t neps;
	bool ep_other;
	uint64_t ep_other_conns;
};

/* A sum of processes: "other" (aggs[0]) or a group of children. */
struct prom_agg {
	bool shown;
	struct prom_view last;	/* last shown: its counters never go below it */
	/* Counters of its processes whose books are gone (forgotten): the
	 * sum = this + the live ones, so it neither drops nor stalls. */
	struct prom_view base;
};

struct prom_state {
	struct prom_limits lim;
	struct hmap members;	/* pid_t -> struct prom_member */
	struct hmap others;	/* pid_t -> uint8_t: summed into "other" for good */
	struct hmap grouped;	/* pid_t -> uint8_t: summed into group aggs[i] for good */
	struct hmap retired;	/* pid_t -> uint64_t start_ns: members whose slot was freed */
	uint64_t next_seq;
	/* aggs[0] "other", aggs[1..ngroups] the groups, in the order made. */
	struct prom_agg aggs[1 + PROM_MAX_GROUPS];
	size_t ngroups;
	uint64_t forgotten;	/* processes forgotten (prom_state_forget) */
	/* The last snapshot: */
	struct prom_view *views;	/* written: members in join order, then "other" */
	size_t nviews, views_cap;
	size_t series;		/* written, the fixed part included */
	size_t dropped;		/* left out by the cap */
	uint64_t dropped_total;	/* over every snapshot */
	uint64_t snapshots;
};

struct prom_update_in {
	uint64_t now_ns;	/* any monotonic clock; for the exited members' grace */
	size_t fixed_series;	/* written whatever the cap: host, agent */
	/* Has p exited? NULL: p->exited. Asked of members only. */
	bool (*gone)(const struct proc_books *p, void *ctx);
	/* A member's fds into *out (left invalid: none). NULL: no fd series. */
	void (*fds)(pid_t pid, struct prom_fd *out, void *ctx);
	void *ctx;
	const struct quic_run *quic;	/* NULL: no QUIC series */
};

void prom_state_init(struct prom_state *s, const struct prom_limits *lim);
/* One snapshot of the books: membership, values, the cap. The views stay
 * valid until the next update. */
void prom_state_update(struct prom_state *s, const struct agg *a, const struct prom_update_in *in);
/* The same in two steps, for a caller that reads the members' facts (exits,
 * fds) from the kernel in between: membership first, then the views. */
void prom_state_admit(struct prom_state *s, const struct agg *a, const struct prom_update_in *in);
void prom_state_views(struct prom_state *s, const struct agg *a, const struct prom_update_in *in);
/* The members: for (size_t i = 0; prom_state_next_member(s, &i, &pid);) */
bool prom_state_next_member(const struct prom_state *s, size_t *iter, pid_t *pid);
void prom_state_free(struct prom_state *s);

/* p is gone and its books are about to be deleted: a process in "other"
 * has its counters folded into the "other" base, and neither map keeps
 * its pid, so the state stays as big as the live processes, not as every
 * pid ever seen. false: p is a member whose series are still shown (its
 * books must stay until it is retired). */
bool prom_state_forget(struct prom_state *s, const struct proc_books *p);
/* Is pid in "other"? */
static inline bool prom_state_is_other(const struct prom_state *s, pid_t pid)
{
	return hmap_get(&s->others, &pid) != NULL;
}

/* What "activity" ranks newcomers by: connections opened + accepted +
 * closed, plus the TCP sockets the process held at the last reconcile. */
uint64_t prom_activity(const struct proc_books *p);

/* Processes summed into "other" so far. */
static inline size_t prom_state_others(const struct prom_state *s)
{
	return s->others.count;
}

#endif
