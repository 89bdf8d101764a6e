/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* attach's run loop hooks (attach_tick.c): what each interval does, and
 * whether the run goes on. */
#ifndef CONNSCOPE_ATTACH_TICK_H
#define CONNSCOPE_ATTACH_TICK_H

#include <stdbool.h>
#include <stdint.h>
#include "attach_opts.h"
#include "agentcost.h"
#include "cgroup_watch.h"
#include "doctor.h"
#include "exporter.h"
#include "fdsession.h"
#include "live_clock.h"
#include "netns_watch.h"
#include "quic_books.h"
#include "quic_tracer.h"
#include "run_info.h"
#include "runloop.h"
#include "snapshot.h"
#include "tcp_books.h"
#include "tcp_limits.h"
#include "tcp_tracer.h"

/* What the run loop's hooks work on: attach_run's state. */
struct attach_tick {
	const struct attach_opts *o;
	struct agg *agg;
	struct tcp_snapshot *snap;
	struct tracer *tracer;
	struct limits_view *limits;
	struct netns_watch *nsw;
	struct run_info *run;
	struct exporter *exp;
	struct fd_session *fs;		/* NULL: fds off */
	struct quic_books *qb;		/* NULL: QUIC off */
	struct quic_tracer *qt;
	struct quic_run *qrun;
	struct doctor_run *drun;
	struct agentcost *cost;
	const struct run_loop *loop;
	struct cgroup_watch cgw;	/* --cgroup: removed, made again */
	struct live_clock lclock;	/* the live rows' TIME column */
	/* Joined with a cgroup made again: seeded after the next snapshot. */
	pid_t rejoined[CLI_MAX_PIDS];
	size_t nrejoined;
	bool live_tty, warned;
	uint64_t until_gone_ns;		/* when o->until_pid was seen gone */
	int pidfd[CLI_MAX_PIDS];	/* o->pids' watches (procfs_pid_watch) */
};

/* run_loop's hooks (runloop.h); ctx is a struct attach_tick. */
int attach_alive(void *ctx, uint64_t now);
int attach_tick(void *ctx, uint64_t now);
/* cgroup_watch's: a cgroup made again at the --cgroup path. */
void attach_cgroup_follow(void *ctx);
/* What the run does once the --cgroup directory is removed. */
const char *attach_cgroup_gone_note(const struct attach_opts *o);

#endif
