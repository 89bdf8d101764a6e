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
#include "cli.h"
#include "fdleak.h"
#include "fdtracer.h"
#include "loader.h"
#include "procfs.h"

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	exiting = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int on_event(void *ctx, void *data, size_t size)
{
	if (size >= sizeof(struct fd_event))
		fd_books_event(ctx, data);
	return 0;
}

static int on_snap(void *ctx, void *data, size_t size)
{
	if (size >= sizeof(struct fd_site_snap))
		fd_books_snapshot(ctx, data);
	return 0;
}

static bool gone(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	bool dead = true;

	snprintf(path, sizeof(path), "%s/%d/stat", procfs_root, pid);
	f = fopen(path, "r");
	if (!f)
		return true;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] == ' ')
		dead = p[2] == 'Z' || p[2] == 'X';
	fclose(f);
	return dead;
}

struct fdleak_opts {
	pid_t pids[CLI_MAX_PIDS];
	size_t npids;
	double duration_s, interval_s, leak_age_s, warn_share;
	bool json, header, no_color;
	int top;
	struct tracer_opts tracer;
};

/* One listing of pid's fds into the books: the listing first, then the
 * events up to now, then the comparison (see fd_books_reconcile). */
static int list_into_books(struct fd_books *b, struct ring_buffer *rb, struct fdleak_proc *p,
			   bool final)
{
	struct fdinv_opts io = { .flags = FDINV_RECORDS };
	const char **types = NULL;
	int32_t *fds = NULL;
	uint64_t t = now_ns();
	int err;

	fdinv_free(&p->inv);
	err = fdinv_scan(p->pid, &p->inv, &io);
	ring_buffer__consume(rb);
	if (err)
		return err;
	fds = calloc(p->inv.nr_fds ? p->inv.nr_fds : 1, sizeof(*fds));
	types = calloc(p->inv.nr_fds ? p->inv.nr_fds : 1, sizeof(*types));
	if (!fds || !types) {
		free(fds);
		free(types);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->inv.nr_fds; i++) {
		fds[i] = p->inv.fds[i].fd;
		types[i] = fdinv_type_name(p->inv.fds[i].type);
	}
	fd_books_reconcile(b, p->pid, fds, p->inv.nr_fds, types, t, final);
	free(fds);
	free(types);
	return 0;
}

static void resolve(struct fd_books *b, struct fd_tracer *ft, struct symbolizer *sym,
		    struct fdleak_proc *p, const struct fdleak_opts *o)
{
	uint64_t now = now_ns();

	p->books = hmap_get(&b->procs, &p->pid);
	p->slope = p->books ? fd_proc_slope(p->books) : 0;
	p->seconds_to_limit = -1;
	if (p->slope > 0 && p->lim.soft && p->lim.soft != UINT64_MAX && p->lim.soft > p->inv.total)
		p->seconds_to_limit = (p->lim.soft - p->inv.total) / p->slope;
	p->nsus = fd_books_suspects(b, p->pid, now, (uint64_t)(o->leak_age_s * 1e9), p->sus,
				    o->top < FDLEAK_MAX_SITES ? o->top : FDLEAK_MAX_SITES);
	for (size_t k = 0; k < p->nsus; k++)
		fdsite_resolve(sym, ft, p->sus[k].site, &p->frames[k]);
}

static void live_row(const struct fdleak_proc *p, const struct fd_books *b)
{
	const struct fd_proc *bp = hmap_get(&b->procs, &p->pid);
	char clock[16];
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
	printf("%-8s %-7d %-12.12s %7llu %7llu %7llu %8.1f\n", clock, p->pid, p->comm,
	       (unsigned long long)p->inv.total, bp ? (unsigned long long)bp->created : 0ULL,
	       bp ? (unsigned long long)bp->closed : 0ULL, bp ? fd_proc_slope(bp) : 0.0);
}

static int fdleak_run(const struct fdleak_opts *o)
{
	struct fdleak_proc *procs = calloc(o->npids, sizeof(*procs));
	struct symbolizer **syms = calloc(o->npids, sizeof(*syms));
	struct fdleak_run run = { .interval_s = o->interval_s, .leak_age_s = o->leak_age_s,
				  .warn_share = o->warn_share };
	struct ring_buffer *rb = NULL;
	struct fd_tracer ft = {};
	struct fd_books books;
	uint64_t t0, next, deadline, tick = (uint64_t)(o->interval_s * 1e9);
	bool warned = false, color;
	size_t alive;
	int ret = 1, err;

	if (!procs || !syms)
		goto out_free;
	for (size_t i = 0; i < o->npids; i++) {
		struct proc_ident id;

		if (procfs_read_ident(o->pids[i], &id) || gone(o->pids[i])) {
			fprintf(stderr, "connscope: no such process: %d (find the pid with "
					"`pgrep NAME`)\n", o->pids[i]);
			goto out_free;
		}
		procs[i].pid = o->pids[i];
		memcpy(procs[i].comm, id.comm, sizeof(procs[i].comm));
	}
	ret = tracer_preflight(&o->tracer);
	if (ret)
		goto out_free;
	ret = 1;
	t0 = now_ns();
	fd_books_init(&books, t0, tick);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (fd_tracer_open(&ft, &rb, on_event, on_snap, &books, false))
		goto out;
	for (size_t i = 0; i < o->npids; i++) {
		fd_tracer_add_target(&ft, o->pids[i]);
		/* Maps now, while the process lives: names survive its exit. */
		syms[i] = symbolizer_new(o->pids[i]);
		fdinv_limits(o->pids[i], &procs[i].lim);
		err = list_into_books(&books, rb, &procs[i], false);
		if (err) {
			fprintf(stderr, "connscope: cannot list the fds of %d: %s\n", o->pids[i],
				strerror(-err));
			goto out;
		}
	}
	fprintf(stderr, "connscope: tracing the fds of %zu process%s; Ctrl-C to stop\n", o->npids,
		o->npids == 1 ? "" : "es");
	if (!o->json && o->header)
		printf("%-8s %-7s %-12s %7s %7s %7s %8s\n", "TIME", "PID", "COMM", "FDS", "MADE",
		       "CLOSED", "GROWTH/s");
	fflush(stdout);
	next = t0 + tick;
	deadline = o->duration_s > 0 ? t0 + (uint64_t)(o->duration_s * 1e9) : UINT64_MAX;
	run.end_reason = "interrupted";
	while (!exiting) {
		uint64_t now = now_ns(), wake = next < deadline ? next : deadline;
		int timeout = wake > now ? (int)((wake - now) / 1000000) : 0;

		err = ring_buffer__poll(rb, timeout > 100 ? 100 : timeout);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "connscope: reading the ring buffer failed: %s\n",
				strerror(-err));
			goto out;
		}
		alive = 0;
		for (size_t i = 0; i < o->npids; i++) {
			if (!procs[i].exited && gone(procs[i].pid)) {
				procs[i].exited = true;
				fprintf(stderr, "connscope: process %d (%s) exited after %.1f s; its "
						"report covers it until then\n", procs[i].pid,
					procs[i].comm, (now_ns() - t0) / 1e9);
			}
			alive += !procs[i].exited;
		}
		now = now_ns();
		if (now >= deadline) {
			run.end_reason = "duration";
			break;
		}
		if (!alive) {
			run.end_reason = "target exited";
			break;
		}
		if (now < next)
			continue;
		for (size_t i = 0; i < o->npids; i++) {
			if (procs[i].exited || list_into_books(&books, rb, &procs[i], false))
				continue;
			fdinv_limits(procs[i].pid, &procs[i].lim);
			if (!o->json)
				live_row(&procs[i], &books);
			resolve(&books, NULL, NULL, &procs[i], o);
			if (!warned && format_fdleak_warnings(stderr, &procs[i], o->warn_share))
				warned = true;
		}
		fflush(stdout);
		next += tick;
		if (next < now)
			next = now + tick;
	}
	/* The last listing: with the ring drained after it, every gap counts. */
	for (size_t i = 0; i < o->npids; i++) {
		if (!procs[i].exited && !list_into_books(&books, rb, &procs[i], true))
			fdinv_limits(procs[i].pid, &procs[i].lim);
		if (syms[i])
			symbolizer_refresh(syms[i]);
		resolve(&books, &ft, syms[i], &procs[i], o);
	}
	run.elapsed_s = (now_ns() - t0) / 1e9;
	fd_tracer_stats(&ft, run.stats);
	run.progs_attached = ft.attached;
	run.progs_missing = ft.failed;
	run.missing_names = ft.failed_names;
	run.events = books.events;
	run.snapshots = books.snapshots;
	color = !o->json && !o->no_color && heatmap_term_should_color(stdout);
	if (o->json)
		format_fdleak_json(stdout, procs, o->npids, &run);
	else
		format_fdleak_text(stdout, procs, o->npids, &run, color);
	if (fflush(stdout)) {
		fprintf(stderr, "connscope: writing the report failed: %s\n", strerror(errno));
		goto out;
	}
	if (!warned)
		for (size_t i = 0; i < o->npids; i++)
			format_fdleak_warnings(stderr, &procs[i], o->warn_share);
	ret = strcmp(run.end_reason, "target exited") ? 0 : EXIT_TARGET_GONE;
out:
	for (size_t i = 0; i < o->npids; i++) {
		if (syms[i])
			symbolizer_free(syms[i]);
		fdinv_free(&procs[i].inv);
	}
	ring_buffer__free(rb);
	fd_tracer_close(&ft);
	fd_books_free(&books);
out_free:
	free(procs);
	free(syms);
	return ret;
}

static void fdleak_usage(FILE *out)
{
	fprintf(out,
		"usage: connscope fdleak -p PID[,PID...] [-d SECONDS] [-i SECONDS] [-j] [-H]\n"
		"                        [--leak-age SECONDS] [--top N] [--warn-pct P]\n"
		"  fd inventory by type, growth against RLIMIT_NOFILE, and the code sites\n"
		"  whose fds stay open\n"
		"  -p, --pid PIDS       processes (repeatable, comma-separated)\n"
		"  -d, --duration S     stop after S seconds (default: until Ctrl-C)\n"
		"  -i, --interval S     /proc listing interval (default 1)\n"
		"      --leak-age S     an fd open longer than this is a suspect (default 10)\n"
		"      --top N          sites per process (default 5, at most 10)\n"
		"      --warn-pct P     warn above P%% of RLIMIT_NOFILE (default 80)\n"
		"      --no-color       ASCII heatmaps even on a terminal\n"
		"  -j, --json           one JSON document\n"
		"  -H, --no-header      no live table header\n"
		"exit status: 0 done, 1 error, 2 bad usage, 3 every target exited\n");
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
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct fdleak_opts o = { .interval_s = 1, .leak_age_s = 10, .warn_share = 0.8,
				 .header = true, .top = 5 };
	unsigned long long v;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "p:d:i:jHvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (cli_parse_pids("-p", optarg, o.pids, &o.npids))
				return EXIT_USAGE;
			break;
		case 'd':
			if (cli_parse_seconds("-d", optarg, 0.1, 86400 * 30, &o.duration_s))
				return EXIT_USAGE;
			break;
		case 'i':
			if (cli_parse_seconds("-i", optarg, 0.1, 3600, &o.interval_s))
				return EXIT_USAGE;
			break;
		case 'L':
			if (cli_parse_seconds("--leak-age", optarg, 0, 86400, &o.leak_age_s))
				return EXIT_USAGE;
			break;
		case 'O':
			if (cli_parse_u64("--top", optarg, 1, FDLEAK_MAX_SITES, &v))
				return EXIT_USAGE;
			o.top = v;
			break;
		case 'W':
			if (cli_parse_u64("--warn-pct", optarg, 1, 100, &v))
				return EXIT_USAGE;
			o.warn_share = v / 100.0;
			break;
		case 'N':
			o.no_color = true;
			break;
		case 'j':
			o.json = true;
			break;
		case 'H':
			o.header = false;
			break;
		case 'v':
			o.tracer.verbose = true;
			break;
		case 'h':
			fdleak_usage(stdout);
			return 0;
		default:
			return cli_bad_option("fdleak", argv);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "connscope fdleak: unexpected argument '%s' (connscope fdleak "
				"--help)\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (!o.npids) {
		fprintf(stderr, "connscope fdleak: which process? give -p PID (e.g. -p $(pgrep -n "
				"myserver))\n");
		return EXIT_USAGE;
	}
	return fdleak_run(&o);
}
