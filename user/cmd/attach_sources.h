/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* attach's reads of the kernel each interval (attach_sources.c). */
#ifndef CONNSCOPE_ATTACH_SOURCES_H
#define CONNSCOPE_ATTACH_SOURCES_H

#include <stdbool.h>
#include <stdint.h>
#include <bpf/libbpf.h>
#include "attach_opts.h"
#include "doctor_books.h"
#include "fdsession.h"
#include "quic_tracer.h"
#include "netns_watch.h"
#include "report.h"
#include "snapshot.h"
#include "tcp_books.h"
#include "tcp_limits.h"

/* The rings a snapshot drains between its chunks: a dump of many sockets
 * or a long /proc scan never leaves them unread (ctx: struct snap_rings). */
struct snap_rings {
	struct ring_buffer *rb[2];
};
void attach_drain_rings(void *ctx);

/* Targets that joined (--comm, --cgroup) are said once, as exits are, and
 * get the QUIC library probes a target has (qt NULL: QUIC off). */
/* --children: the targets' descendants living at start, taken in (the
 * filter, books of their own, not targets: children). Their pids are
 * appended to pids (n of them, at most max) for the start-up snapshot;
 * returns how many were taken in. */
size_t attach_take_descendants(struct agg *a, struct tracer *t, const pid_t *roots,
			       size_t nroots, pid_t *pids, size_t *n, size_t max);

/* The listeners of traced processes in snap also held by processes not
 * traced (their connections go uncounted): up to max written to out,
 * their number returned. Reads every process's fds: once, at start. */
size_t attach_untraced_acceptors(const struct agg *a, const struct tcp_snapshot *snap,
				 struct untraced_acceptor *out, size_t max);

/* The snapshot's listeners: each noted in the books (agg_seed_listener),
 * whoever holds it; those no target holds marked for the kernel side
 * (tracer_handoff_port), so that a connection one of them accepts and a
 * target then serves (handed over a Unix socket: Node.js's cluster) is
 * adopted as that listener's, accepted, at the target's first send, read
 * or close; and the namespaces read, where an untraced listen() made
 * between two censuses is marked by the kernel side at once
 * (tracer_handoff_netns). At the start (attach_seed) and after each
 * census. */
void attach_note_listeners(struct agg *a, struct tracer *t, const struct tcp_snapshot *snap);

void attach_say_joined(struct agg *a, uint64_t t0, struct quic_tracer *qt);
/* Processes that joined since the last interval get their fds followed;
 * those gone stop. */
void attach_fd_follow(struct fd_session *fs, const struct agg *a);
/* The doctor's sources each interval: listeners' accept queues from the
 * snapshot, each target namespace's ListenOverflows, EMFILE counts. */
void attach_doctor_sample(struct doctor_run *d, const struct tcp_snapshot *snap,
				 const struct attach_opts *o, struct fd_session *fs);
/* One sock_diag snapshot of the live processes, the rings drained while
 * it runs, the birth pass (the live connections the books have not heard
 * of), then the books reconciled against it and the limits observed;
 * namespaces no longer read are said and their TIME_WAIT left to timers
 * (nsw, kept across calls). */
int attach_reconcile(struct agg *a, struct tcp_snapshot *snap, struct tracer *t,
		     struct limits_view *limits, struct netns_watch *nsw, bool all);
/* agg_tw_look_fn over the namespaces of the snapshot ctx (struct
 * tcp_snapshot): sock_diag's exact look at each TIME_WAIT's tuple, in its
 * namespace, through the process the snapshot read it by. Found: a
 * TIME_WAIT socket (timer 3) at that very tuple, not a listener the
 * kernel's look falls back to nor a new connection there. */
void attach_tw_look(void *ctx, struct agg_tw_look *q, size_t n);
/* The interval's census from the walk where it can stand in for the dump
 * (CONNSCOPE_CENSUS says otherwise): set once, after the start-up
 * snapshot. */
void attach_census_mode(struct tcp_snapshot *snap, struct tracer *t);
/* The birth pass, then the ring drained: after it the books know every
 * connection established before it began (a->births_known_ns). */
/* The storages' books before the passes (*before malloc'd, how many or
 * -errno; 0 outside socket-storage mode): read before a snapshot whose
 * census walk is a pass, handed to attach_births, which frees them. */
struct skb_line;
int attach_births_before(struct tracer *t, struct skb_line **before);
void attach_births(struct agg *a, struct tracer *t, const struct tcp_snapshot *snap,
		   struct skb_line *before, int nb);
/* Sockets the targets held before we attached: into the books and into
 * the BPF seed map, unless events already told us about them. only: those
 * of these nonly processes alone (NULL: every process of the books). */
void attach_seed(struct agg *a, struct tracer *t, const struct tcp_snapshot *snap,
		 const pid_t *only, size_t nonly);

/* --cgroup made again at its path (cgroup_watch.h, CGROUP_NEW): the BPF
 * filter asks about the new cgroup from now on, and the processes already
 * in it (started or moved in before that) join the targets, their pids
 * appended to joined[*n..max) for attach_seed after the next snapshot.
 * The filter first, the listing second: a process that comes in between
 * is in both, and joins once. */
void attach_cgroup_rejoin(struct agg *a, struct tracer *t, const struct target_sel *sel,
			  pid_t *joined, size_t *n, size_t max);
/* Targets (-p, joined) not yet seen to exit. */
size_t attach_targets_alive(const struct agg *a);

#endif
