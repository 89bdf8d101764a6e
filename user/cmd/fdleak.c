// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* fdleak: preflight -> fd programs -> /proc listing (seeds the books) ->
 * poll loop with a listing per interval -> suspects resolved to code
 * sites -> report. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "live_clock.h"
#include "cgroup_watch.h"
#include "cli.h"
#include "fdleak.h"
#include "targets.h"
#include "fdsession.h"
#include "tcp_tracer.h"
#include "procfs.h"
#include "runloop.h"
#include "timeutil.h"
#include "pidns.h"
#include "text_wrap.h"

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	exiting = 1;
}

struct fdleak_opts {
	pid_t pids[CLI_MAX_PIDS];
	size_t npids;
	double duration_s, interval_s, leak_age_s, warn_share;
	bool json, header, no_color;
	int top;
	struct tracer_opts tracer;
	struct target_sel sel;	/* --comm, --cgroup: matched at start and each interval */
};

/* Processes that match --comm / --cgroup now and are not followed yet. */
static void join_matches(const struct fdleak_opts *o, struct fd_session *fs, uint64_t t0,
			 bool at_start)
{
	pid_t pids[CLI_MAX_PIDS];
	size_t n = targets_scan(&o->sel, pids, 0, CLI_MAX_PIDS);

	for (size_t i = 0; i < n; i++) {
		struct fd_report r = fd_session_report(fs);
		struct proc_ident id;

		if (fd_report_proc(&r, pids[i]) || procfs_read_ident(pids[i], &id))
			continue;
		if (!fd_session_add(fs, pids[i], id.comm) && !at_start)
			text_err("connscope: process %d (%s) joined the targets after "
				 "%.1f s\n", pids[i], id.comm, (now_ns() - t0) / 1e9);
	}
}

static void live_row(const struct fdleak_proc *p, const struct fd_books *b, const char *clock)
{
	const struct fd_proc *bp = hmap_get(&b->procs, &p->pid);

	printf("%-8s %-7d %-12.12s %7llu %7llu %7llu %8.1f\n", clock, p->pid, p->comm,
	       (unsigned long long)p->inv.total, bp ? (unsigned long long)bp->created : 0ULL,
	       bp ? (unsigned long long)bp->closed : 0ULL, bp ? fd_proc_slope(bp) : 0.0);
}

/* What the run loop's hooks work on. */
struct fdleak_tick {
	const struct fdleak_opts *o;
	struct fd_session *fs;
	const struct run_loop *loop;
	struct cgroup_watch cgw;	/* --cgroup: removed, made again */
	struct live_clock lclock;	/* one TIME a tick, for all its rows */
	bool warned;
};

static int fdleak_alive(void *ctx, uint64_t now)
{
	struct fdleak_tick *s = ctx;
	int alive = 0;

	for (size_t i = 0; i < s->fs->nprocs; i++) {
		struct fdleak_proc *p = &s->fs->procs[i];

		if (!p->exited && procfs_pid_gone(p->pid)) {
			fd_session_exited(s->fs, p->pid);
			run_say_exited(s->loop, p->pid, p->comm);
		}
		alive += !p->exited;
	}
	/* --comm / --cgroup: more may come; the window decides. A cgroup made
	 * again at the path (a restart) is followed: its processes are
	 * listed now, not an interval later. Nothing comes through a removed
	 * one: without --comm, fdleak then ends with its last target. */
	if (!targets_any(&s->o->sel))
		return alive;
	switch (cgroup_watch_check(&s->cgw)) {
	case CGROUP_NEW:
		join_matches(s->o, s->fs, s->loop->t0_ns, false);
		return RUN_FOREVER;
	case CGROUP_GONE:
		return s->o->sel.ncomms ? RUN_FOREVER : alive;
	default:
		return RUN_FOREVER;
	}
}

static int fdleak_tick(void *ctx, uint64_t now)
{
	struct fdleak_tick *s = ctx;
	char clock[16];

	live_clock_label(&s->lclock, s->loop->due_ns, clock, sizeof(clock));
	if (targets_any(&s->o->sel))
		join_matches(s->o, s->fs, s->loop->t0_ns, false);
	fd_session_tick(s->fs, false);
	fd_session_analyze(s->fs, false);
	for (size_t i = 0; i < s->fs->nprocs; i++) {
		if (s->fs->procs[i].exited)
			continue;
		if (!s->o->json)
			live_row(&s->fs->procs[i], &s->fs->books, clock);
		if (!s->warned && format_fdleak_warnings(stderr, &s->fs->procs[i], s->o->warn_share))
			s->warned = true;
	}
	fflush(stdout);
	return 0;
}

static int fdleak_run(const struct fdleak_opts *o)
{
	char comms[CLI_MAX_PIDS][16];
	struct fdleak_run run = { .interval_s = o->interval_s, .leak_age_s = o->leak_age_s,
				  .warn_share = o->warn_share };
	struct fd_session fs = {};
	uint64_t t0, tick = (uint64_t)(o->interval_s * 1e9);
	struct fdleak_tick rs;
	struct run_loop loop;
	bool warned = false, color;
	int ret = 1;

	ret = cli_check_targets(o->pids, o->npids, comms);
	if (ret)
		return ret;
	ret = tracer_preflight(&o->tracer);
	if (ret)
		return ret;
	ret = 1;
	t0 = now_ns();
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (fd_session_open(&fs, o->pids, (const char (*)[16])comms, o->npids, t0, tick,
			    o->leak_age_s, o->top, -1, true))
		goto out;
	if (targets_any(&o->sel)) {
		/* Those that match now, then each interval (user space: fdleak
		 * has no scheduler hooks; a process shorter than an interval
		 * is not seen). */
		join_matches(o, &fs, t0, true);
		text_err("connscope: tracing the fds of %zu process%s and those matching "
			 "--comm/--cgroup each interval; Ctrl-C to stop\n", fs.nprocs,
			fs.nprocs == 1 ? "" : "es");
	} else {
		text_err("connscope: tracing the fds of %zu process%s; Ctrl-C to stop\n",
			o->npids, o->npids == 1 ? "" : "es");
	}
	pidns_note(stderr);
	if (!o->json && o->header)
		printf("%-8s %-7s %-12s %7s %7s %7s %8s\n", "TIME", "PID", "COMM", "FDS", "MADE",
		       "CLOSED", "GROWTH/s");
	fflush(stdout);
	run.cgroup_path = o->sel.cgroup_path;
	rs = (struct fdleak_tick){ .o = o, .fs = &fs, .loop = &loop,
				   .cgw = { .sel = &o->sel, .t0_ns = t0, .facts = &run.cgroup,
					    .gone_note = o->sel.ncomms ? "" :
							 " (fdleak ends once no target is left)" } };
	live_clock_init(&rs.lclock, t0, o->interval_s);
	loop = (struct run_loop){ .rb = { fs.rb }, .t0_ns = t0, .tick_ns = tick,
				  .duration_s = o->duration_s, .alive = fdleak_alive,
				  .tick = fdleak_tick, .ctx = &rs };
	if (run_loop(&loop, &exiting))
		goto out;
	run.end_reason = loop.end_reason;
	warned = rs.warned;
	/* The last listing: with the ring drained after it, every gap counts. */
	fd_session_tick(&fs, true);
	fd_session_analyze(&fs, true);
	/* Its row too, as attach prints the end's: `fdleak -p PID 1 5` is five
	 * rows, the last at the end of the fifth interval. */
	if (!o->json) {
		char clock[16];

		live_clock_label(&rs.lclock, now_ns(), clock, sizeof(clock));
		for (size_t i = 0; i < fs.nprocs; i++)
			if (!fs.procs[i].exited)
				live_row(&fs.procs[i], &fs.books, clock);
	}
	run.elapsed_s = (now_ns() - t0) / 1e9;
	fd_session_run_facts(&fs, &run);
	color = !o->json && !o->no_color && heatmap_term_should_color(stdout);
	if (o->json)
		format_fdleak_json(stdout, fs.procs, fs.nprocs, &run);
	else
		format_fdleak_text(stdout, fs.procs, fs.nprocs, &run, color);
	if (fflush(stdout)) {
		text_err("connscope: writing the report failed: %s\n", strerror(errno));
		goto out;
	}
	if (!warned)
		for (size_t i = 0; i < fs.nprocs; i++)
			format_fdleak_warnings(stderr, &fs.procs[i], o->warn_share);
	ret = strcmp(run.end_reason, "target exited") ? 0 : EXIT_TARGET_GONE;
out:
	fd_session_close(&fs);
	return ret;
}

static void fdleak_usage(FILE *out)
{
	fprintf(out,
		"usage: connscope fdleak -p PID[,PID...]|--comm NAME|--cgroup PATH [-d SECONDS]\n"
		"                        [-i SECONDS] [-j] [-H] [--leak-age SECONDS] [--top N]\n"
		"                        [--warn-pct P] [interval [count]]\n"
		"  fd inventory by type, growth against RLIMIT_NOFILE, and the code sites\n"
		"  whose fds stay open. interval and count, as bcc's tools take them: -i\n"
		"  interval, -d interval x count\n"
		"  -p, --pid PIDS       processes (repeatable, comma-separated)\n"
		"      --comm NAME      every process of that name (checked each interval)\n"
		"      --cgroup PATH    every process in that cgroup v2 directory (each interval;\n"
		"                       one removed and made again at PATH, a restart, is\n"
		"                       followed)\n"
		"      --container NAME every process of that container (name or id)\n"
		"  -d, --duration S     stop after S seconds (default: until Ctrl-C)\n"
		"  -i, --interval S     /proc listing interval (default 1)\n"
		"      --leak-age S     an fd open longer than this is a suspect (default 10)\n"
		"      --top N          sites per process (default 5, at most 10)\n"
		"      --warn-pct P     warn above P%% of RLIMIT_NOFILE (default 80)\n"
		"      --no-color       ASCII heatmaps even on a terminal\n"
		"  -j, --json           one JSON document\n"
		"  -H, --no-header      no live table header\n"
		"  -v, --verbose        libbpf's messages\n"
		"exit status: 0 done, 1 error, 2 bad usage, 3 every target exited (with\n"
		"--cgroup and no --comm: and the cgroup was removed, none made again at\n"
		"PATH when fdleak looked)\n"
		"examples:\n"
		"  connscope fdleak -p $(pgrep -d, myserver) -d 60\n"
		"      a minute of myserver's fds, then the sites whose fds stay open\n"
		"  connscope fdleak --comm myserver --leak-age 30 -j > fds.json\n"
		"      until Ctrl-C; fds older than 30 s are suspects; as JSON\n");
}

int cmd_fdleak(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "leak-age", required_argument, NULL, 'L' },
		{ "top", required_argument, NULL, 'O' },
		{ "warn-pct", required_argument, NULL, 'W' },
		{ "no-color", no_argument, NULL, 'N' },
		{ "json", no_argument, NULL, 'j' },
		{ "no-header", no_argument, NULL, 'H' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "comm", required_argument, NULL, 'c' },
		{ "cgroup", required_argument, NULL, 'g' },
		{ "container", required_argument, NULL, 'G' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct fdleak_opts o = { .interval_s = 1, .leak_age_s = 10, .warn_share = 0.8,
				 .header = true, .top = 5 };
	bool d_set = false, i_set = false;
	int c, r;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "p:d:i:jHvh", longopts, NULL)) != -1) {
		d_set |= c == 'd';
		i_set |= c == 'i';
		switch (c) {
		case 'N':
			o.no_color = true;
			break;
		case 'j':
			o.json = true;
			break;
		case 'H':
			o.header = false;
			break;
		case 'h':
			fdleak_usage(stdout);
			return 0;
		default:
			r = cli_report_opt(c, optarg, FDLEAK_MAX_SITES, &o.leak_age_s, &o.top,
					   &o.warn_share);
			if (!r)
				r = targets_opt(c, optarg, &o.sel, &o.tracer.verbose);
			if (!r)
				r = cli_window_opt(c, optarg, o.pids, &o.npids, &o.duration_s,
						   &o.interval_s);
			if (r < 0)
				return EXIT_USAGE;
			if (!r)
				return cli_bad_option("fdleak", argv);
			break;
		}
	}
	if (cli_json_file("fdleak", o.json, argc, argv) ||
	    cli_interval_count("fdleak", argc, argv, i_set, d_set, &o.interval_s, &o.duration_s))
		return EXIT_USAGE;
	if (!targets_any(&o.sel) &&
	    cli_need_pids("fdleak", o.npids, "which process? give -p PID, --comm NAME or "
					     "--cgroup PATH"))
		return EXIT_USAGE;
	r = fdleak_run(&o);
	targets_free(&o.sel);
	return r;
}
