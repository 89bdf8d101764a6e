// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* attach: preflight -> load/attach -> start-up snapshot (seeds) -> poll
 * loop with a reconcile per interval -> final report. */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "live_clock.h"
#include "proc_access.h"
#include "tcp_books.h"
#include "attach.h"
#include "procfs.h"
#include "report.h"
#include "report_cost.h"
#include "report_html.h"
#include "prom.h"
#include "safefile.h"
#include "report_losses.h"
#include "exporter.h"
#include "snapshot.h"
#include "netlimits.h"
#include "fdsession.h"
#include "kfeatures_probe.h"
#include "quic_tracer.h"
#include "report_quic.h"
#include "runloop.h"
#include "report_findings.h"
#include "text_wrap.h"
#include "doctor_books.h"
#include "netstat.h"
#include "agentcost.h"
#include "timeutil.h"
#include "netns.h"
#include "targets.h"
#include "attach_sources.h"
#include "cgroup_watch.h"
#include "attach_books.h"
#include "attach_live.h"
#include "attach_metrics.h"
#include "attach_report.h"
#include "attach_tick.h"
#include "interval_ndjson.h"
#include "pidns.h"

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	exiting = 1;
}

/* In-kernel QUIC sockets come on the TCP unit's ring (the same
 * tracepoint); their books are the QUIC ones. Set while a run has them. */
static struct quic_books *kernel_quic_books;

static int handle_event(void *ctx, void *data, size_t size)
{
	const struct cs_event *e = data;

	if (size < sizeof(struct cs_event))
		return 0;
	if (e->flags & CS_F_QUIC) {
		if (kernel_quic_books && e->type == CS_EV_STATE)
			quic_books_kernel_state(kernel_quic_books, e->owner.tgid, e->ts_ns, e->sk,
						e->oldstate, e->newstate);
		return 0;
	}
	agg_event(ctx, data);
	return 0;
}

static void add_live_io(void *ctx, uint64_t sk, const struct cs_conn_io *io)
{
	agg_add_live_io(ctx, sk, io);
}

/* What crosses the ring for each socket, as the run reports it. */
static const char *records_desc(const struct tracer *t)
{
	return t->sk_mode ? "per socket: one at its end, its birth too if it outlives an interval"
			  : "per state transition (owner by socket address)";
}

/* The targets and the hook, wrapped at 80 columns as one message: 256
 * pids, a cgroup's path or a container's are longer than a line. */
static void say_tracing(const struct attach_opts *o, const char *method)
{
	char *list = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&list, &len);

	if (!f) {
		fprintf(stderr, "connscope: tracing; Ctrl-C to stop\n");
		return;
	}
	if (o->tracer.all)
		fprintf(f, "every process (--all");
	else
		fprintf(f, "%zu process%s (", o->npids, o->npids == 1 ? "" : "es");
	/* ", " between pids: a line may break after any of them. */
	for (size_t i = 0; i < o->npids; i++)
		fprintf(f, "%s%d", i ? ", " : "", o->pids[i]);
	for (size_t i = 0; i < o->sel.ncomms; i++)
		fprintf(f, "%s--comm %s", i || o->npids ? ", " : "", o->sel.comms[i]);
	if (o->sel.container[0])
		fprintf(f, "%s--container %s (id %.12s), cgroup %s",
			o->npids || o->sel.ncomms ? ", " : "", o->sel.container,
			o->sel.container_id, o->sel.cgroup_path);
	else if (o->sel.cgroup_path)
		fprintf(f, "%s--cgroup %s", o->npids || o->sel.ncomms ? ", " : "",
			o->sel.cgroup_path);
	if (fclose(f)) {
		free(list);
		fprintf(stderr, "connscope: tracing; Ctrl-C to stop\n");
		return;
	}
	/* The hook on a line of its own, as it always was. */
	text_err("connscope: tracing %s)\nvia %s; Ctrl-C to stop\n", list, method);
	free(list);
}

int attach_run(const struct attach_opts *in)
{
	/* The targets: -p's, and the processes --comm / --cgroup match now. */
	struct attach_opts all_targets = *in;
	const struct attach_opts *o = &all_targets;
	struct tcp_snapshot snap = {};
	struct netns_watch nsw = {};
	struct tracer tracer = {};
	struct run_info run = {};
	struct limits_view limits = { .warn_share = o->warn_share > 0 ? o->warn_share : 0.8 };
	bool warned = false, live_tty, fs_on = false;
	struct fd_session fs = {};
	struct quic_tracer qt = {};
	struct quic_books qb = {};
	struct quic_run qrun = {};
	struct doctor_run drun = { .doctor_mode = o->doctor,
				   .command = o->command ? o->command : o->doctor ? "doctor" : NULL };
	struct agentcost cost = { .stats_fd = -1 };
	struct tracer_opts topts;
	bool quic_on = false, joining = false;
	struct agg agg;
	struct exporter *exp = NULL;
	struct safefile html = {}, prom = {};
	/* No fd session: --no-fd, or exporter --all, whose fd gauges come from
	 * /proc listings of the processes it shows. */
	struct fd_report no_fds = { .listing_only = o->exporter_limits.proc_fds };
	struct snap_rings rings, tcp_ring;
	struct attach_tick rs;
	struct run_loop loop;
	/* The pids of the start-up snapshot: the targets and, following
	 * children, their descendants living at start. */
	pid_t start_pids[CLI_MAX_PIDS * 4];
	struct untraced_acceptor untraced[16];
	size_t nstart = 0;
	uint64_t t0, tick_ns;
	int err, ret = 1;
	char clock[16];

	err = cli_check_targets(o->pids, o->npids, NULL);
	if (err)
		return err;
	ret = tracer_preflight(&o->tracer);
	if (ret)
		return ret;
	if (targets_any(&in->sel))
		all_targets.npids = targets_scan(&in->sel, all_targets.pids, in->npids, CLI_MAX_PIDS);
	/* A target in another network namespace is read from inside it. */
	for (size_t i = 0; i < o->npids; i++) {
		uint32_t ino = 0;

		err = netns_check_enter(o->pids[i]);
		/* Not even its namespace can be read (net:[0] would blame the
		 * namespace): say what refused it. */
		if (err && err != -ENOENT && netns_of_pid(o->pids[i], &ino) == -EACCES) {
			proc_say_refused(o->pids[i], "the namespaces and fds");
			return 1;
		}
		if (err && err != -ENOENT) {
			text_err("connscope: cannot enter the network namespace of pid %d "
				 "(net:[%u]): %s: its sockets are visible only from inside "
				 "it; run connscope as root with CAP_SYS_ADMIN (in the initial "
				 "user namespace)\n", o->pids[i], ino, strerror(-err));
			return EXIT_USAGE;
		}
	}
	/* Removed since it was parsed: as if it had never been there. */
	if (targets_cgroup_removed(&in->sel)) {
		text_err("connscope: --cgroup %s: not a cgroup v2 directory any more (it "
			 "was removed): give one that exists\n", in->sel.cgroup_path);
		return EXIT_USAGE;
	}
	ret = 1;
	if (o->exporter && !(exp = exporter_start(o->listen_addr, o->listen_port,
						   &o->exporter_limits)))
		return 1;
	if (o->report_html &&
	    (err = safefile_open(&html, o->report_html, "the report", "report.html"))) {
		exporter_stop(exp);
		return err;
	}
	if (o->prom_file &&
	    (err = safefile_open(&prom, o->prom_file, "the report", "metrics.prom"))) {
		exporter_stop(exp);
		safefile_abort(&html);
		return err;
	}

	t0 = now_ns();
	agg_init(&agg, t0);
	tick_ns = (uint64_t)(o->interval_s * 1e9);
	agg.bucket_ns = tick_ns;
	agg.daemon = o->exporter;
	for (size_t i = 0; i < o->npids; i++) {
		struct proc_books *p = agg_proc(&agg, o->pids[i]);
		struct proc_ident id;

		if (!p)
			goto cleanup;
		p->target = true;
		if (procfs_read_ident(o->pids[i], &id)) {
			if (i < in->npids)
				goto cleanup;
			p->exited = true;	/* matched --comm/--cgroup, gone since */
			continue;
		}
		memcpy(p->comm, id.comm, sizeof(p->comm));
		p->ptgid = id.ppid;
		p->start_ns = procfs_start_ns(&id);
	}

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	topts = o->tracer;
	topts.comms = (const char (*)[16])o->sel.comms;
	topts.ncomms = o->sel.ncomms;
	topts.cgroup_path = o->sel.cgroup_path;
	topts.cgroup_fd = o->sel.cgroup_fd;
	topts.pids = o->pids;
	topts.npids = o->npids;
	if (!o->no_quic && quic_kernel_present()) {
		topts.quic_kernel = true;
		quic_books_init(&qb, t0, tick_ns);
		kernel_quic_books = &qb;
	}
	if (tracer_open(&tracer, &topts, handle_event, &agg))
		goto cleanup;
	agg.tw_census = !tracer.tw_events;
	for (size_t i = 0; i < o->npids; i++) {
		err = tracer_add_target(&tracer, o->pids[i]);
		if (err) {
			fprintf(stderr, "connscope: cannot add pid %d to the filter: %s\n",
				o->pids[i], strerror(-err));
			goto cleanup;
		}
	}
	/* --children: the descendants living now too (a pre-forked server's
	 * workers exist before we attach); those forked from here on are the
	 * BPF side's. Read after the -p pids are in the filter, so none falls
	 * between the two. */
	memcpy(start_pids, o->pids, o->npids * sizeof(*start_pids));
	nstart = o->npids;
	if (o->tracer.follow_children && !o->tracer.all)
		attach_take_descendants(&agg, &tracer, o->pids, o->npids, start_pids, &nstart,
					sizeof(start_pids) / sizeof(start_pids[0]));
	/* fds too, unless asked not to: counted from /proc listings each
	 * interval, and with --fd-sites also traced by the fd syscall
	 * programs for the leak sites. A failure here costs the fd part of
	 * the report, not the run. */
	if (!o->no_fd) {
		char comms[CLI_MAX_PIDS][16];

		for (size_t i = 0; i < o->npids; i++) {
			struct proc_books *p = agg_find_proc(&agg, o->pids[i]);

			snprintf(comms[i], sizeof(comms[i]), "%s", p ? p->comm : "?");
		}
		if (!fd_session_open(&fs, o->pids, (const char (*)[16])comms, o->npids,
				     t0, tick_ns, o->leak_age_s > 0 ? o->leak_age_s : 10, 3,
				     tracer_targets_fd(&tracer), o->fd_sites)) {
			fs_on = true;
			/* Each tick's TCP states from the reconcile's dump. */
			fs.tcp_from_snapshot = true;
			/* EMFILE/ENFILE from the syscall exits: the doctor's
			 * with --fd-sites. Not by default: those tracepoints
			 * run for every task on the host and cost the most. */
			if (o->doctor && o->fd_sites) {
				fd_tracer_count_errors(&fs.ft);
				drun.fderr_counted = true;
			}
			/* The exporter renders no heatmaps: keep no columns. */
			fs.books.no_heatmaps = o->exporter;
		} else {
			fprintf(stderr, "connscope: fd tracking is off for this run\n");
		}
	}
	/* QUIC: the wire unit on the targets' cgroups, ngtcp2 probes where
	 * the library is mapped. Like fds, a failure costs that part only. */
	if (!o->no_quic) {
		if (!kernel_quic_books)
			quic_books_init(&qb, t0, tick_ns);
		qb.no_heatmaps = o->exporter;
		qrun.books = &qb;
		quic_on = true;
		/* Targets that join by name, cgroup or container join in the
		 * kernel at their exec or fork, and a QUIC client sends its
		 * first Initial milliseconds later: the system libngtcp2's
		 * probes and the packet programs are on for the whole run,
		 * or its connection was seen late or not at all (ngtcp2 0
		 * for 10 --comm clients). */
		joining = o->sel.ncomms || o->sel.cgroup_path || o->sel.container[0];
		quic_tracer_open(&qt, &qb, o->tracer.all, tracer_targets_fd(&tracer),
				 o->tracer.follow_children || joining);
		/* Where the wire unit runs, from now on as the root was: a
		 * name matches a process in any cgroup; a cgroup (a
		 * container's) holds its joiners; a pid's own cgroup holds
		 * its sockets and children. */
		if (o->sel.ncomms)
			quic_tracer_cover_root(&qt, "--comm: a process of that name may start in "
					       "any cgroup");
		else if (o->sel.cgroup_path)
			quic_tracer_cover_cgroup(&qt, o->sel.cgroup_path);
		for (size_t i = 0; i < o->npids; i++)
			quic_tracer_cover_pid(&qt, o->pids[i]);
	}
	/* Every unit loaded: the state programs on, the snapshot and its
	 * seeds right after (tcp_tracer.h, tracer_attach). */
	if (tracer_attach(&tracer, &topts))
		goto cleanup;
	/* The events ring is mapped after the last BPF object's load, so the
	 * peak RSS does not hold both (tcp_tracer.h, tracer_map_ring). */
	if (tracer_map_ring(&tracer))
		goto cleanup;
	if (quic_on) {
		/* Fails where the open did (wire_error says why). */
		if (quic_tracer_start(&qt, &tracer.rb))
			text_wrap(stderr, "connscope: QUIC on the wire is off for this run: ", "  ",
				  qt.wire_error);
		else if (joining)
			quic_tracer_skb_now(&qt, "targets join by name, cgroup or container");
		for (size_t i = 0; i < o->npids; i++)
			quic_tracer_add_target(&qt, o->pids[i]);
		attach_quic_refresh(&qrun, &qt, &agg);
		run.quic = &qrun;
	}
	/* Attached first, snapshot second: a socket made in between is in
	 * both, and the events drained here win over the seed. */
	rings = (struct snap_rings){ .rb = { tracer.rb, fs_on ? fs.rb : NULL } };
	/* An fd listing drains the TCP ring, not its own (fdsession.h). */
	tcp_ring = (struct snap_rings){ .rb = { tracer.rb, NULL } };
	if (fs_on) {
		fs.drain = attach_drain_rings;
		fs.drain_ctx = &tcp_ring;
	}
	snap.drain = attach_drain_rings;
	snap.drain_ctx = &rings;
	agg.snapshot_ns = now_ns();
	if (snapshot_take(&snap, o->tracer.all ? NULL : start_pids, nstart))
		goto cleanup;
	/* The namespaces read at the start are watched from the start: a
	 * target's namespace whose processes are gone before the first
	 * interval's reconcile is said unread as any other. */
	netns_watch_before(&nsw, &snap, &agg);
	/* --all reads the other network namespaces from inside (setns). */
	if (snap.refused)
		text_err("connscope: --all: %zu network namespace%s of other processes "
			 "(containers, pods) cannot be entered without CAP_SYS_ADMIN: their "
			 "listeners, the connections accepted on them and their TCP socket "
			 "gauges (established, TIME_WAIT) are not read; connections they "
			 "open are counted from events; add CAP_SYS_ADMIN to read them "
			 "(docs/containers.md)\n", snap.refused, snap.refused == 1 ? "" : "s");
	/* Connections made since the programs attached are not seeds: the
	 * books hear of them first. */
	{
		struct skb_line *before;
		int nb = attach_births_before(&tracer, &before);

		attach_births(&agg, &tracer, &snap, before, nb);
	}
	if (o->tracer.all)
		exporter_adopt_owners(&agg, &snap.owners);
	attach_seed(&agg, &tracer, &snap, NULL, 0);
	agg_reconcile(&agg, snap.socks, snap.n, &snap.owners);
	attach_census_mode(&snap, &tracer);
	/* From here on a census takes who holds which socket from the fd
	 * listings made just before it (attach_tick), not from a listing of
	 * its own after its walk: one /proc/PID/fd listing an interval. */
	if (fs_on) {
		snap.owners_of = fd_session_owners;
		snap.owners_ctx = &fs;
	}
	/* A listener whose connections others accept: said now and in the
	 * report (--all traces every process: none is left out). */
	if (!o->tracer.all) {
		run.nuntraced = attach_untraced_acceptors(&agg, &snap, untraced,
							  sizeof(untraced) / sizeof(untraced[0]));
		run.untraced = untraced;
		format_untraced_text(stderr, untraced, run.nuntraced);
	}
	attach_doctor_sample(&drun, &snap, o, fs_on ? &fs : NULL);
	attach_identify_software(&agg);
	attach_identify_containers(&agg);
	run.doctor = &drun;
	/* Every program is loaded: the agent's cost counts from here (every
	 * run reports it). BPF run-time stats are on while we hold their fd,
	 * which adds two clock reads to each BPF program run on the host: one
	 * interval in --cost-every (agentcost.h). */
	if (agentcost_start(&cost, o->pids, o->npids, o->cost_every_set ? o->cost_every : 10,
			    tick_ns, cost_connections(&agg)))
		fprintf(stderr, "connscope: agent's own cost unknown: BPF run-time stats could "
				"not be turned on\n");
	/* Start-up parsed the kernel's BTF (~11 MB) and freed it; hand that
	 * back now, or a small allocation above it in the heap keeps it in
	 * the agent's RSS for the whole run (measured: 43 MB at start
	 * instead of 32). */
	malloc_trim(0);

	/* --json-stream's file, made once tracing works (`run` checked its
	 * path before it began): a run that could not start leaves none. */
	if (o->json_stream_path &&
	    !(all_targets.json_stream = safefile_stream(o->json_stream_path, "--json-stream")))
		goto cleanup;
	say_tracing(o, tracer.method);
	if (o->tracer.verbose && tracer.io_method)
		fprintf(stderr, "  bytes and requests: %s\n", tracer.io_method);
	pidns_note(stderr);
	if (o->on_tracing)
		o->on_tracing(o->on_tracing_ctx);
	if (fs_on && !o->fd_sites)
		fprintf(stderr, "  fds from /proc/PID/fd listings each interval (leak sites need "
				"--fd-sites)\n");
	run.hook = tracer.method;
	run.io_hook = tracer.io_method;
	run.accept_hook = tracer.accept_method;
	run.pidns_child = pidns_agent()->child;
	run.pidns_ino = pidns_agent()->ino;
	run.tw_method = tracer.tw_method;
	run.records = records_desc(&tracer);
	run.features = kf_plan(NULL);
	run.fds = fs_on ? fd_session_report(&fs) : no_fds;
	run.interval_s = o->interval_s;
	{
		const char *names[RUN_PROGS_MAX];
		bool on[RUN_PROGS_MAX];

		run.nprogs = tracer_programs(&tracer, names, on, RUN_PROGS_MAX);
		for (int i = 0; i < run.nprogs; i++) {
			run.progs[i].name = names[i];
			run.progs[i].attached = on[i];
		}
	}
	if (exp) {
		attach_publish_metrics(exp, &agg, &run, &tracer, fs_on ? &fs : NULL, &snap.st);
		text_err("connscope: exporter serving http://%s%s%s:%u/metrics\n",
			 strchr(o->listen_addr, ':') ? "[" : "", o->listen_addr,
			 strchr(o->listen_addr, ':') ? "]" : "", o->listen_port);
	}
	live_tty = !o->json && !o->quiet_live && !o->no_color && isatty(STDOUT_FILENO);
	run.tw.top = o->top > 0 ? o->top : 10;
	run.tw.width = terminal_width();
	run.tw.color = !o->json && !o->no_color && heatmap_term_should_color(stdout);
	run.tw.unicode = run.tw.color;
	if (!o->json && !o->quiet_live && o->header && !live_tty)
		format_live_header(stdout);
	fflush(stdout);

	/* The run's clock starts here, with every program loaded: loading
	 * takes seconds on a busy host, and a clock started before it gave
	 * a -d run that much less tracing and heatmaps whose first columns
	 * were empty. What came in while loading counts in the first
	 * interval. */
	t0 = now_ns();
	agg_fit_clock(&agg, t0, 0);
	if (fs_on)
		fd_books_fit_clock(&fs.books, t0, 0);
	if (quic_on || kernel_quic_books)
		quic_books_fit_clock(&qb, t0, 0);
	rs = (struct attach_tick){ .o = o, .agg = &agg, .snap = &snap, .tracer = &tracer,
				   .limits = &limits, .nsw = &nsw, .run = &run, .exp = exp,
				   .fs = fs_on ? &fs : NULL, .qb = quic_on ? &qb : NULL, .qt = &qt,
				   .qrun = &qrun, .drun = &drun, .cost = &cost, .live_tty = live_tty,
				   .loop = &loop,
				   .cgw = { .sel = &o->sel, .t0_ns = t0, .facts = &run.cgroup,
					    .gone_note = attach_cgroup_gone_note(o), .follow = attach_cgroup_follow,
					    .ctx = &rs } };
	live_clock_init(&rs.lclock, t0, o->interval_s);
	loop = (struct run_loop){ .rb = { tracer.rb, fs_on ? fs.rb : NULL }, .t0_ns = t0, .tick_ns = tick_ns,
				  .duration_s = o->duration_s, .alive = attach_alive,
				  .tick = attach_tick, .ctx = &rs };
	for (size_t i = 0; i < o->npids; i++)
		rs.pidfd[i] = procfs_pid_watch(o->pids[i]);
	err = run_loop(&loop, &exiting);
	for (size_t i = 0; i < o->npids; i++)
		if (rs.pidfd[i] >= 0)
			close(rs.pidfd[i]);
	run.end_reason = loop.end_reason;
	if (o->until_pid && rs.until_gone_ns)
		run.end_reason = "command exited";
	warned = rs.warned;
	if (err)
		goto cleanup;
	/* Everything the kernel wrote before we stopped, then the truth
	 * (the last fd listing first: the dump tells its TCP states). */
	ring_buffer__consume(tracer.rb);
	/* A run shorter than its first interval (the clock now starts after
	 * loading) had no tick to say who joined: said here. */
	attach_say_joined(&agg, t0, NULL);
	if (fs_on)
		fd_session_tick(&fs, true);
	agg.final_reconcile = true;
	/* A TIME_WAIT the last census lacked once is gone only if a second
	 * look lacks it too (a census can skip entries): that second look
	 * now, or one that ended in the last interval would stay live in the
	 * report. sock_diag's exact look at its tuple, where a second census
	 * walked the host's whole table again (#23 item 6); mid-run, the next
	 * interval's census is the second look, and costs nothing more. */
	agg.tw_look = attach_tw_look;
	agg.tw_look_ctx = &snap;
	if (attach_reconcile(&agg, &snap, &tracer, &limits, &nsw, o->tracer.all))
		goto cleanup;
	/* Those the exact look could not judge (no census showed the device
	 * one is bound to, or no answer) get a second census, as does a
	 * connection the storages' books miss once (sk_books.h). */
	if ((agg.tw_absent_once || agg.skb.pending) &&
	    attach_reconcile(&agg, &snap, &tracer, &limits, &nsw, o->tracer.all))
		goto cleanup;
	attach_doctor_sample(&drun, &snap, o, fs_on ? &fs : NULL);
	agentcost_sample(&cost, &drun.cost, cost_connections(&agg));
	/* Children that ended in the last interval: their parent's executable,
	 * so they group with their siblings (agg_inherit_exe). */
	agg_inherit_exe(&agg);
	agg.final_tick = true;
	agg_tick(&agg, now_ns());
	/* The last, partial interval too: the stream's rows sum to the run. */
	if (o->json_stream) {
		attach_refresh_losses(&run, &tracer, fs_on ? &fs : NULL, &agg);
		format_interval_ndjson(o->json_stream, &agg, losses_total(&run.losses));
	}
	if (quic_on) {
		attach_quic_reap(&qb, now_ns());
		quic_books_tick(&qb, now_ns());
		attach_quic_refresh(&qrun, &qt, &agg);
	}
	if (fs_on) {
		fd_session_tcp_states(&fs, &snap);
		fd_session_analyze(&fs, true);
	}
	/* Requests on connections still open count too: read their traffic,
	 * after the last reconcile's birth pass, which counted the sends
	 * each had queued since its last look (tcp_sendmsg_locked mode). */
	{
		const uint64_t *sk;
		struct cs_conn_io io;

		if (tracer.sk_mode) {
			struct proc_books *p;

			/* Every process still alive in the books, joiners too. */
			for (size_t i = 0; hmap_next(&agg.procs, &i, NULL, (void **)&p);)
				if (!p->exited)
					tracer_live_io(&tracer, p->pid, add_live_io, &agg);
		} else {
			for (size_t i = 0; hmap_next(&agg.conns, &i, (const void **)&sk, NULL);)
				if (!tracer_conn_io(&tracer, *sk, &io))
					agg_add_live_io(&agg, *sk, &io);
		}
	}
	if (!warned)
		format_limits_warnings(stderr, &limits);
	if (!o->json && !o->quiet_live && !live_tty) {
		/* The end's row: the next label, never the last tick's again. */
		live_clock_label(&rs.lclock, now_ns(), clock, sizeof(clock));
		format_live_rows(stdout, &agg, clock, &run.fds);
		format_quic_live(stdout, quic_on ? &qrun : NULL, clock);
	}

	/* The run ended at its deadline, or when Ctrl-C or the targets'
	 * exit was seen: the readings just after (the last reconcile,
	 * listing and tick, a few ms) go into the last interval, not into a
	 * column of their own past the end, and the maps end there. */
	{
		uint64_t end = loop.end_ns;

		agg_fit_clock(&agg, t0, end);
		if (fs_on)
			fd_books_fit_clock(&fs.books, t0, end);
		if (quic_on || kernel_quic_books)
			quic_books_fit_clock(&qb, t0, end);
	}
	/* hook, records and features: set when tracing began. */
	run.limits = &limits;
	run.fds = fs_on ? fd_session_report(&fs) : no_fds;
	run.duration_s = o->duration_s;
	run.elapsed_s = (now_ns() - t0) / 1e9;
	run.interval_s = o->interval_s;
	/* No finer than an interval, the figures' own resolution. */
	run.load_s = agg_load_s(&agg, o->interval_s, run.elapsed_s);
	run.follow_children = o->tracer.follow_children;
	run.comms = (const char (*)[16])o->sel.comms;
	run.ncomms = o->sel.ncomms;
	run.cgroup_path = o->sel.cgroup_path;
	if (o->sel.container[0]) {
		run.container = o->sel.container;
		run.container_id = o->sel.container_id;
	}
	attach_refresh_losses(&run, &tracer, fs_on ? &fs : NULL, &agg);
	run.census_walked = snap.reads_walked;
	run.census_dumped = snap.reads_dumped;
	if (exp)
		;	/* the exporter's output was /metrics */
	else if (o->json)
		format_report_json(stdout, &agg, &run);
	else if (o->doctor)
		format_doctor_text(stdout, &agg, &run);
	else
		format_report_text(stdout, &agg, &run);
	if (fflush(stdout)) {
		fprintf(stderr, "connscope: writing the report failed: %s\n", strerror(errno));
		goto cleanup;
	}
	if (html.f) {
		err = attach_report_commit(&html, &agg, &run, NULL);
		if (err)
			goto cleanup;
	}
	if (prom.f) {
		err = attach_report_commit(&prom, &agg, &run, &snap.st);
		if (err)
			goto cleanup;
	}
	/* After the report (or the exporter's series): no "below" here, and
	 * the place each output tells the kinds. */
	format_losses_headline_see(stderr, "connscope: warning: ", &run.losses,
				   exp ? LOSSES_EXPORTED : LOSSES_IN_REPORT,
				   exp ? "connscope_agent_losses_total" :
				   o->json ? "agent.losses" :
				   o->doctor ? "-j: agent.losses" : "agent: losses");
	if (o->worst_severity)
		*o->worst_severity = attach_worst_finding(&agg, &run);
	ret = strcmp(run.end_reason, "target exited") ? 0 : EXIT_TARGET_GONE;
cleanup:
	agentcost_stop(&cost);
	exporter_stop(exp);
	fd_session_close(&fs);
	quic_tracer_close(&qt);
	if (quic_on || kernel_quic_books)
		quic_books_free(&qb);
	kernel_quic_books = NULL;
	safefile_abort(&html);
	safefile_abort(&prom);
	if (all_targets.json_stream && all_targets.json_stream != stdout)
		fclose(all_targets.json_stream);
	tracer_close(&tracer);
	snapshot_free(&snap);
	agg_free(&agg);
	return ret;
}
