// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* attach's interval: the fd listings, the census and its reconcile, the
 * books' tick and what is shown of it (out of attach.c, by concern). */
#include <stdio.h>
#include "attach_tick.h"
#include "attach_books.h"
#include "attach_live.h"
#include "attach_metrics.h"
#include "attach_sources.h"
#include "interval_ndjson.h"
#include "procfs.h"
#include "report.h"
#include "report_cost.h"
#include "report_quic.h"
#include "targets.h"

/* A cgroup made again at the --cgroup path: the filter moves to it, and
 * what its processes hold is seeded at once, not at the next interval: a
 * listener made before the filter moved has no socket storage, so a
 * connection it accepted before that seed went uncounted (49_container:
 * the first request after a restart, counted in some runs only). Seeded
 * as at start: the snapshot drains the rings as it goes, and events
 * drained win over the seed. If the snapshot fails, the next interval's
 * seeds them. */
void attach_cgroup_follow(void *ctx)
{
	struct attach_tick *s = ctx;
	struct tcp_snapshot snap = { .drain = s->snap->drain, .drain_ctx = s->snap->drain_ctx };

	attach_cgroup_rejoin(s->agg, s->tracer, &s->o->sel, s->rejoined, &s->nrejoined,
			     CLI_MAX_PIDS);
	/* The new directory's joiners: the wire unit there too (the old
	 * one's links went with it). */
	if (s->qb)
		quic_tracer_cover_cgroup(s->qt, s->o->sel.cgroup_path);
	if (!s->nrejoined)
		return;
	if (!snapshot_take(&snap, s->rejoined, s->nrejoined)) {
		attach_seed(s->agg, s->tracer, &snap, s->rejoined, s->nrejoined);
		s->nrejoined = 0;
	}
	snapshot_free(&snap);
}

/* What the run does once the --cgroup directory is removed. */
const char *attach_cgroup_gone_note(const struct attach_opts *o)
{
	if (o->sel.container[0] && !o->exporter)
		return o->doctor ? " (doctor waits for the container to start again)"
				 : " (attach waits for the container to start again)";
	if (o->exporter)
		return " (the exporter keeps serving what it counted)";
	if (o->sel.ncomms)
		return "";
	return o->doctor ? " (doctor ends once no target is left)"
			 : " (attach ends once no target is left)";
}

int attach_alive(void *ctx, uint64_t now)
{
	struct attach_tick *s = ctx;
	int alive = 0;

	/* `connscope run`: the load generator's life (and the cooldown after
	 * it) is the window, whatever else is traced. */
	if (s->o->until_pid) {
		if (!s->until_gone_ns && procfs_pid_gone(s->o->until_pid))
			s->until_gone_ns = now;
		return !s->until_gone_ns || now - s->until_gone_ns < s->o->cooldown_s * 1e9;
	}

	for (size_t i = 0; i < s->o->npids; i++) {
		struct proc_books *p = agg_find_proc(s->agg, s->o->pids[i]);

		if (p && !p->exited && procfs_pid_gone_watched(p->pid, s->pidfd[i])) {
			p->exited = true;
			/* Out of the kernel's filter (no exit hook for a fixed
			 * list: tcp_tracer.c). */
			tracer_remove_target(s->tracer, p->pid);
			if (s->fs)
				fd_session_exited(s->fs, p->pid);
			run_say_exited(s->loop, p->pid, p->comm);
		}
		alive += p && !p->exited;
	}
	if (s->o->tracer.all)
		return RUN_FOREVER;
	/* --comm / --cgroup: more may come; the window decides. A cgroup made
	 * again at the path (a restart) is followed for as long as the run
	 * lasts. Nothing comes through a removed one: without --comm, attach
	 * then ends with its last target (the exporter keeps serving). */
	if (targets_any(&s->o->sel)) {
		/* A container (--container) comes back at its path when it
		 * restarts: the window decides, as with --comm. */
		if (cgroup_watch_check(&s->cgw) != CGROUP_GONE || s->o->sel.ncomms ||
		    s->o->sel.container[0] || s->o->exporter)
			return RUN_FOREVER;
		return attach_targets_alive(s->agg);
	}
	return alive;
}

int attach_tick(void *ctx, uint64_t now)
{
	struct attach_tick *s = ctx;
	const struct attach_opts *o = s->o;
	char clock[16];

	/* The fd listings before the reconcile, so that its sock_diag dump
	 * tells the state of every TCP socket listed (one absent from it was
	 * in no hash): no /proc/PID/net/tcp with every TIME_WAIT of the
	 * namespace in it. The census takes its sockets' owners from them
	 * too (snapshot.h, owners_of): one listing an interval. */
	if (s->fs) {
		if (!o->tracer.all) {
			attach_fd_follow(s->fs, s->agg);
			/* The session's process array may have moved. */
			s->run->fds = fd_session_report(s->fs);
		}
		fd_session_tick(s->fs, false);
	}
	if (attach_reconcile(s->agg, s->snap, s->tracer, s->limits, s->nsw,
			     o->tracer.all))
		return -1;
	/* Events drained by the reconcile win over these seeds, as at start. */
	if (s->nrejoined) {
		attach_seed(s->agg, s->tracer, s->snap, s->rejoined, s->nrejoined);
		s->nrejoined = 0;
	}
	if (s->fs) {
		fd_session_tcp_states(s->fs, s->snap);
		fd_session_analyze(s->fs, false);
	}
	attach_doctor_sample(s->drun, s->snap, o, s->fs);
	attach_identify_software(s->agg);
	attach_identify_containers(s->agg);
	attach_prune_parents(s->agg);
	/* Each interval: a target that exits keeps its CPU time; the
	 * exporter publishes the agent's cost as self-metrics. */
	agentcost_tick(s->cost, cost_connections(s->agg));
	agentcost_sample(s->cost, &s->drun->cost, cost_connections(s->agg));
	agg_tick(s->agg, now);
	attach_say_joined(s->agg, s->loop->t0_ns, s->qb ? s->qt : NULL);
	if (o->json_stream) {
		attach_refresh_losses(s->run, s->tracer, s->fs, s->agg);
		format_interval_ndjson(o->json_stream, s->agg, losses_total(&s->run->losses));
	}
	if (s->qb) {
		attach_quic_reap(s->qb, now);
		quic_books_tick(s->qb, now);
		attach_quic_refresh(s->qrun, s->qt, s->agg);
	}
	if (s->exp) {
		attach_publish_metrics(s->exp, s->agg, s->run, s->tracer, s->fs, &s->snap->st);
		exporter_tick(s->exp, s->agg, s->qb);
	}
	/* A limit crossed is said at once, not only in the report. */
	if (!s->warned && format_limits_warnings(stderr, s->limits))
		s->warned = true;
	if (s->live_tty) {
		live_clock_label(&s->lclock, s->loop->due_ns, clock, sizeof(clock));
		live_redraw(s->agg, &s->run->tw, clock, (now - s->loop->t0_ns) / 1e9, &s->run->fds,
			    s->qb ? s->qrun : NULL);
	} else if (!o->json && !o->quiet_live) {
		live_clock_label(&s->lclock, s->loop->due_ns, clock, sizeof(clock));
		format_live_rows(stdout, s->agg, clock, &s->run->fds);
		format_quic_live(stdout, s->qb ? s->qrun : NULL, clock);
		fflush(stdout);
	}
	return 0;
}
