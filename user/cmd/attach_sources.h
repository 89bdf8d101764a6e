/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* attach's reads of the kernel each interval (attach_sources.c). */
#ifndef CONNSCOPE_ATTACH_SOURCES_H
#define CONNSCOPE_ATTACH_SOURCES_H

#include <stdbool.h>
#include <stdint.h>
#include <bpf/libbpf.h>
#include "attach.h"
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
void attach_say_joined(struct agg *a, uint64_t t0, struct quic_tracer *qt);
/* Processes that joined since the last interval get their fds followed;
 * those gone stop. */
void attach_fd_follow(struct fd_session *fs, const struct agg *a);
/* The doctor's sources each interval: listeners' accept queues from the
 * snapshot, each target namespace's ListenOverflows, EMFILE counts. */
void attach_doctor_sample(struct doctor_run *d, const struct tcp_snapshot *snap,
				 const struct attach_opts *o, struct fd_session *fs);
/* One sock_diag snapshot of the live processes, the rings drained while
 * it runs, then the books reconciled against it and the limits observed;
 * namespaces no longer read are said and their TIME_WAIT left to timers
 * (nsw, kept across calls). */
int attach_reconcile(struct agg *a, struct tcp_snapshot *snap, struct ring_buffer *rb,
		     struct limits_view *limits, struct netns_watch *nsw, bool all);
/* Sockets the targets held before we attached: into the books and into
 * the BPF seed map, unless events already told us about them. */
void attach_seed(struct agg *a, struct tracer *t, const struct tcp_snapshot *snap);

/* --cgroup: its directory removed during the run (the container or unit
 * gone) is said once on stderr and kept in the run facts for the report.
 * Returns true once it is gone (false without --cgroup). */
bool attach_cgroup_gone(const struct target_sel *sel, struct run_info *run, uint64_t t0,
			bool exporter);
/* Targets (-p, joined) not yet seen to exit. */
size_t attach_targets_alive(const struct agg *a);

#endif
