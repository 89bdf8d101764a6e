// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The command lines of `attach` and `exporter`: options into struct
 * attach_opts, usage text, bad input; the run itself is attach_run()
 * (attach.c). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attach.h"
#include "exporter.h"
#include "text_wrap.h"

/* The options attach, doctor and exporter take alike: targets, window, -v,
 * --children, --no-fd, --fd-sites, --ringbuf-size. Returns as
 * cli_window_opt() does: 1 taken, -1 bad (said why), 0 not one of them. */
static int tracing_opt(int c, const char *arg, struct attach_opts *o)
{
	unsigned long long v;
	int r;

	switch (c) {
	case 'C':
		o->tracer.follow_children = true;
		return 1;
	case 'F':
		o->no_fd = true;
		return 1;
	case 'f':
		o->fd_sites = true;
		return 1;
	case 'K':
		if (cli_parse_u64("--cost-every", arg, 0, 1000000, &v))
			return -1;
		o->cost_every = v;
		o->cost_every_set = true;
		return 1;
	case 'R':
		/* A small one makes losses a test can provoke. */
		if (cli_parse_u64("--ringbuf-size", arg, 4096, 1ULL << 30, &v))
			return -1;
		if (v & (v - 1)) {
			text_err("connscope: --ringbuf-size %llu: must be a power of two "
				 "(e.g. 8388608)\n", v);
			return -1;
		}
		o->tracer.ringbuf_bytes = v;
		return 1;
	}
	r = targets_opt(c, arg, &o->sel, &o->tracer.verbose);
	if (!r)
		r = cli_window_opt(c, arg, o->pids, &o->npids, &o->duration_s, &o->interval_s);
	return r;
}

/* The report and tracer options attach, doctor and run take alike (the
 * exporter serves none of them): -j, --report, --prom, --per-transition,
 * --no-quic, --max-sockets. Returns as tracing_opt() does. */
static int report_opt(int c, const char *arg, struct attach_opts *o)
{
	unsigned long long v;

	switch (c) {
	case 'j':
		o->json = true;
		return 1;
	case 'r':
		o->report_html = arg;
		return 1;
	case 'm':
		o->prom_file = arg;
		return 1;
	case 'X':
		o->tracer.no_sk_storage = true;
		return 1;
	case 'Q':
		o->no_quic = true;
		return 1;
	case 'M':
		if (cli_parse_u64("--max-sockets", arg, 1024, 1 << 24, &v))
			return -1;
		o->tracer.max_sockets = v;
		return 1;
	}
	return 0;
}

/* The options attach and doctor share (doctor is attach ending in
 * findings); one text for both --help outputs and so both man pages. */
#define ATTACH_TARGET_OPTIONS \
		"  -p, --pid PIDS         processes to trace (repeatable, comma-separated)\n" \
		"      --comm NAME        every process of that name (<= 15 bytes, as in\n" \
		"                         /proc/PID/comm), those started later too (repeatable)\n" \
		"      --cgroup PATH      every process in that cgroup v2 directory or below,\n" \
		"                         now and later (a container, a systemd unit); one\n" \
		"                         removed and made again at PATH (a restart) is\n" \
		"                         followed when attach finds the new one there\n" \
		"      --container NAME   every process of that container (a name or id of\n" \
		"                         podman or docker, an id of containerd or CRI-O),\n" \
		"                         followed across restarts; label container\n"
#define ATTACH_OPTIONS \
		"  -i, --interval S       live table and reconcile interval (default 1)\n" \
		"  -j, --json             final report as one JSON document, no live table\n" \
		"  -H, --no-header        no live table header\n" \
		"      --children         also trace processes the targets fork\n" \
		"      --btf FILE         kernel BTF when /sys/kernel/btf/vmlinux is missing\n" \
		"      --ringbuf-size B   ring buffer bytes, power of two (default 8388608)\n" \
		"      --max-sockets N    sockets tracked in the kernel (default 65536)\n" \
		"      --max-time-wait N  TIME_WAIT sockets tracked in the kernel where fentry\n" \
		"                         or --tw-timers follow them (default:\n" \
		"                         net.ipv4.tcp_max_tw_buckets, 1024 to 1048576)\n" \
		"      --report FILE      also write a self-contained HTML report\n" \
		"      --prom FILE        also write the end state as Prometheus metrics\n" \
		"      --no-fd            no fd part (fds are counted from /proc/PID/fd\n" \
		"                         listings each interval otherwise)\n" \
		"      --fd-sites         also trace fd syscalls for the code sites of leaks\n" \
		"                         (syscall tracepoints: every syscall on the machine\n" \
		"                         takes the slow path while attached)\n" \
		"      --no-quic          do not trace QUIC (no cgroup_skb, no ngtcp2 probes)\n" \
		"      --leak-age S       with --fd-sites: fds open longer than S are leak\n" \
		"                         suspects (default 10)\n" \
		"      --top N            endpoints per process in the report (default 10)\n" \
		"      --warn-pct P       warn when a limit is P%% used (default 80)\n" \
		"      --no-color         ASCII heatmaps even on a terminal\n" \
		"      --classic-tracepoint  use tracepoint/sock/inet_sock_set_state, not\n" \
		"                         tp_btf (the fallback for kernels without it)\n" \
		"      --cost-every N     measure the BPF programs' run time in one interval of\n" \
		"                         every N (default 10; 1: all; 0: never): the kernel's\n" \
		"                         run-time stats slow every BPF program while on\n" \
		"      --tw-timers        TIME_WAIT ends from the timer tracepoints as they\n" \
		"                         happen (they run for every kernel timer of the\n" \
		"                         host: ~1.8 us a connection); by default from fentry\n" \
		"                         where the kernel allows it, else from each\n" \
		"                         interval's census: gone before its 60 s, ended\n" \
		"                         early; at or after, expired\n" \
		"      --per-transition   a ring record for each state change and owners by\n" \
		"                         socket address, as on kernels before 6.3 (the\n" \
		"                         default keeps them on the socket and sends a record\n" \
		"                         at a connection's end, one more if it outlives an\n" \
		"                         interval)\n" \
		"  -v, --verbose          libbpf's messages\n"

static void attach_usage(FILE *out)
{
	fprintf(out,
		"usage: connscope attach -p PID[,PID...]|--comm NAME|--cgroup PATH [-d SECONDS]\n"
		"                        [-i SECONDS] [-j] [-H] [--report FILE.html] [--top N]\n"
		"                        [--warn-pct P] [--no-fd | --fd-sites [--leak-age S]]\n"
		"                        [--children] [--btf FILE] [--ringbuf-size BYTES] [-v]\n"
		"                        [interval [count]]\n"
		"  trace the TCP connections of running processes; Ctrl-C ends the window.\n"
		"  interval and count, as bcc's tools take them: -i interval, -d interval x count\n"
		ATTACH_TARGET_OPTIONS
		"  -d, --duration S       stop after S seconds (default: until Ctrl-C)\n"
		ATTACH_OPTIONS
		"exit status: 0 done, 1 error, 2 bad usage, 3 every target exited during\n"
		"the window (with --cgroup and no --comm: and the cgroup was removed, none\n"
		"made again at PATH when attach looked; it looks about every 100 ms, so\n"
		"to follow restarts of any speed add --comm NAME or use the exporter)\n"
		"examples:\n"
		"  connscope attach -p $(pgrep -d, nginx) -d 30\n"
		"      nginx's processes for 30 s: a live row a second, then the report\n"
		"  connscope attach --comm myserver --children -i 5 --report run.html\n"
		"      every myserver (and what it forks) until Ctrl-C, also as a web page\n"
		"  connscope attach -p 1234 5 12 -j > run.json\n"
		"      a minute in 5 s intervals, the report as JSON, for `connscope diff`\n");
}

static void doctor_usage(FILE *out)
{
	fprintf(out,
		"usage: connscope doctor -p PID[,PID...]|--comm NAME|--cgroup PATH [-d SECONDS]\n"
		"                        [-i SECONDS] [-j] [--report FILE.html]\n"
		"                        [attach's options]\n"
		"  attach for the window, then say what is wrong, with the numbers that prove\n"
		"  it and the fix: churn, TIME_WAIT and ephemeral ports, fd leak, fd limit,\n"
		"  connect failures, resets, listen backlog, orphans, connscope's own cost;\n"
		"  \"healthy\" with the key numbers when no rule fires. -j prints attach's\n"
		"  JSON (findings first), which `connscope diff` compares. Cheap by default:\n"
		"  fds from /proc listings; --fd-sites adds the fd syscall tracepoints for\n"
		"  leak sites and EMFILE counts. Its own cost is a footer, a finding only\n"
		"  when large enough to move a verdict (20%% of the targets' CPU).\n"
		ATTACH_TARGET_OPTIONS
		"  -d, --duration S       stop after S seconds (default 10)\n"
		ATTACH_OPTIONS
		"exit status: 0 done, 1 error, 2 bad usage, 3 every target exited during\n"
		"the window\n"
		"examples:\n"
		"  connscope doctor -p $(pgrep -d, nginx)\n"
		"      10 s of nginx, then the findings with their evidence and fixes\n"
		"  connscope doctor -p $(pgrep -d, nginx) -d 30 -j > before.json\n"
		"      keep the run; after a fix, the same into after.json, then\n"
		"  connscope diff before.json after.json\n"
		"      what the fix changed\n");
}

static int attach_cmdline(int argc, char **argv, bool doctor);

int cmd_attach(int argc, char **argv)
{
	return attach_cmdline(argc, argv, false);
}

int cmd_doctor(int argc, char **argv)
{
	return attach_cmdline(argc, argv, true);
}

/* attach and doctor share options and the run; doctor only changes the
 * report, counts fd errors and measures the agent. */
static int attach_cmdline(int argc, char **argv, bool doctor)
{
	const char *cmd = doctor ? "doctor" : "attach";
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "no-header", no_argument, NULL, 'H' },
		{ "children", no_argument, NULL, 'C' },
		{ "btf", required_argument, NULL, 'B' },
		{ "ringbuf-size", required_argument, NULL, 'R' },
		{ "max-sockets", required_argument, NULL, 'M' },
		{ "max-time-wait", required_argument, NULL, 'w' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "classic-tracepoint", no_argument, NULL, 'T' },
		{ "per-transition", no_argument, NULL, 'X' },
		{ "tw-timers", no_argument, NULL, 'Y' },
		{ "no-color", no_argument, NULL, 'N' },
		{ "report", required_argument, NULL, 'r' },
		{ "no-fd", no_argument, NULL, 'F' },
		{ "fd-sites", no_argument, NULL, 'f' },
		{ "no-quic", no_argument, NULL, 'Q' },
		{ "prom", required_argument, NULL, 'm' },
		{ "leak-age", required_argument, NULL, 'L' },
		{ "top", required_argument, NULL, 'O' },
		{ "warn-pct", required_argument, NULL, 'W' },
		{ "comm", required_argument, NULL, 'c' },
		{ "cgroup", required_argument, NULL, 'g' },
		{ "container", required_argument, NULL, 'G' },
		{ "cost-every", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct attach_opts o = { .interval_s = 1, .header = true, .doctor = doctor,
				 .quiet_live = doctor, .duration_s = doctor ? 10 : 0 };
	bool leak_age_set = false, d_set = false, i_set = false;
	unsigned long long v;
	int c, r;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "p:d:i:jHvh", longopts, NULL)) != -1) {
		d_set |= c == 'd';
		i_set |= c == 'i';
		switch (c) {
		case 'H':
			o.header = false;
			break;
		case 'B':
			o.tracer.btf_path = optarg;
			break;
		case 'w':
			if (cli_parse_u64("--max-time-wait", optarg, 1024, 1 << 24, &v))
				return EXIT_USAGE;
			o.tracer.max_time_wait = v;
			break;
		case 'T':
			o.tracer.classic_tp = true;
			break;
		case 'Y':
			o.tracer.tw_timers = true;
			break;
		case 'N':
			o.no_color = true;
			break;
		case 'h':
			if (doctor)
				doctor_usage(stdout);
			else
				attach_usage(stdout);
			return 0;
		default:
			leak_age_set |= c == 'L';
			r = cli_report_opt(c, optarg, 60, &o.leak_age_s, &o.top, &o.warn_share);
			if (!r)
				r = report_opt(c, optarg, &o);
			if (!r)
				r = tracing_opt(c, optarg, &o);
			if (r < 0)
				return EXIT_USAGE;
			if (!r)
				return cli_bad_option(cmd, argv);
			break;
		}
	}
	if (cli_json_file(cmd, o.json, argc, argv))
		return EXIT_USAGE;
	if (doctor ? cli_no_more_args(cmd, argc, argv) :
		     cli_interval_count(cmd, argc, argv, i_set, d_set, &o.interval_s, &o.duration_s))
		return EXIT_USAGE;
	if (!targets_any(&o.sel) &&
	    cli_need_pids(cmd, o.npids, "which process? give -p PID, --comm NAME or "
					"--cgroup PATH"))
		return EXIT_USAGE;
	if (o.fd_sites && o.no_fd) {
		text_err("connscope: %s: --fd-sites traces fds and --no-fd turns fds "
			 "off: give one of them\n", cmd);
		targets_free(&o.sel);
		return EXIT_USAGE;
	}
	/* Leak suspects are sites: without the fd syscall programs there are
	 * none (the doctor too traces them only with --fd-sites). */
	if (leak_age_set && !o.fd_sites) {
		text_err("connscope: %s: --leak-age ranks the code sites of leaks, "
			 "which only --fd-sites traces: add --fd-sites\n", cmd);
		targets_free(&o.sel);
		return EXIT_USAGE;
	}
	r = attach_run(&o);
	targets_free(&o.sel);
	return r;
}

static void exporter_usage(FILE *out)
{
	fprintf(out,
		"usage: connscope exporter -p PID[,PID...]|--comm NAME|--cgroup PATH|--all\n"
		"                          [--listen ADDR:PORT] [-i SECONDS] [--top-processes N]\n"
		"                          [--max-series N] [--children] [--no-fd] [--fd-sites]\n"
		"                          [--tw-timers] [-v]\n"
		"  keep tracing the processes and serve their metrics for Prometheus\n"
		"  -p, --pid PIDS         processes to trace (repeatable, comma-separated)\n"
		"      --comm NAME        every process of that name, now and later\n"
		"      --cgroup PATH      every process in that cgroup v2 directory, now and\n"
		"                         later; removed and made again at PATH (a restart):\n"
		"                         the new one is followed\n"
		"      --container NAME   every process of that container (a name or id of\n"
		"                         podman or docker, an id of containerd or CRI-O);\n"
		"                         series carry container and, under Kubernetes, pod_uid\n"
		"      --all              every process (fds from /proc, top processes only)\n"
		"      --top-processes N  with --all: processes with series of their own, the\n"
		"                         rest are pid=\"other\" (default 20)\n"
		"      --max-series N     series per scrape at most (default 10000)\n"
		"      --ringbuf-size B   ring buffer bytes, power of two (default 8388608)\n"
		"      --listen A:P       where to serve /metrics (default 127.0.0.1:%d; a\n"
		"                         non-loopback address only when named here)\n"
		"  -i, --interval S       snapshot interval (default 1; match the scrape)\n"
		"  -d, --duration S       stop after S seconds (default: until SIGTERM)\n"
		"      --children         also trace processes the targets fork\n"
		"      --no-fd            do not count fds (from /proc listings otherwise)\n"
		"      --fd-sites         with -p: also the fd syscall tracepoints, for the\n"
		"                         leak-suspect gauges (slows every syscall on the\n"
		"                         machine)\n"
		"      --cost-every N     measure the BPF programs' run time in one interval of\n"
		"                         every N (default 10; 1: all; 0: never)\n"
		"      --tw-timers        TIME_WAIT ends from the timer tracepoints as they\n"
		"                         happen (they run for every kernel timer of the\n"
		"                         host); by default from fentry where the kernel\n"
		"                         allows it, else from each interval's census\n"
		"  -v, --verbose          libbpf's messages\n"
		"examples:\n"
		"  connscope exporter -p $(pgrep -d, nginx)\n"
		"      nginx's metrics at http://127.0.0.1:%d/metrics\n"
		"  connscope exporter --all -i 15 --listen 10.0.0.5:9477\n"
		"      every process (the 20 busiest with series of their own), on the\n"
		"      node's address, a snapshot every 15 s (the scrape interval)\n",
		EXPORTER_DEFAULT_PORT, EXPORTER_DEFAULT_PORT);
}

int cmd_exporter(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' },
		{ "listen", required_argument, NULL, 'l' },
		{ "children", no_argument, NULL, 'C' },
		{ "no-fd", no_argument, NULL, 'F' },
		{ "fd-sites", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "comm", required_argument, NULL, 'c' },
		{ "cgroup", required_argument, NULL, 'g' },
		{ "container", required_argument, NULL, 'G' },
		{ "cost-every", required_argument, NULL, 'K' },
		{ "tw-timers", no_argument, NULL, 'Y' },
		{ "help", no_argument, NULL, 'h' },
		EXPORTER_LONGOPTS,
		{},
	};
	struct attach_opts o = { .interval_s = 1, .exporter = true, .quiet_live = true,
				 .listen_port = EXPORTER_DEFAULT_PORT };
	int c, r;

	snprintf(o.listen_addr, sizeof(o.listen_addr), "%s", EXPORTER_DEFAULT_ADDR);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "p:i:d:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			if (exporter_parse_listen(optarg, o.listen_addr, sizeof(o.listen_addr),
						  &o.listen_port))
				return EXIT_USAGE;
			break;
		case 'h':
			exporter_usage(stdout);
			return 0;
		case 'Y':
			o.tracer.tw_timers = true;
			break;
		default:
			r = exporter_opt(c, optarg, &o);
			if (!r)
				r = tracing_opt(c, optarg, &o);
			if (r < 0)
				return EXIT_USAGE;
			if (!r)
				return cli_bad_option("exporter", argv);
			break;
		}
	}
	if (cli_no_more_args("exporter", argc, argv))
		return EXIT_USAGE;
	if (o.fd_sites && (o.no_fd || o.tracer.all)) {
		text_err("connscope exporter: --fd-sites traces -p processes' fds: not with "
			 "--no-fd or --all\n");
		return EXIT_USAGE;
	}
	if (exporter_check_opts(&o))
		return EXIT_USAGE;
	r = attach_run(&o);
	targets_free(&o.sel);
	return r;
}

int attach_tracing_opt(int c, const char *arg, struct attach_opts *o)
{
	int r = report_opt(c, arg, o);

	return r ? r : tracing_opt(c, arg, o);
}
