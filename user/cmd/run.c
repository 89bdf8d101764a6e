// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#define _GNU_SOURCE
/* `connscope run [TARGETS] [--fail-on LEVEL] -- COMMAND [ARGS...]`: a load
 * test as one step. COMMAND (ab, wrk, pgbench, a script) starts once
 * tracing has begun, is traced itself with its children (the client
 * side) beside the given targets (the server side), and its life, plus
 * --cooldown, is the window. Then the doctor's verdict, and an exit status
 * a CI job can gate on: COMMAND's own when it failed, else 4 or 5 when a
 * warning or a critical finding at or above --fail-on fired, else 0. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "attach.h"
#include "cli.h"
#include "doctor.h"
#include "run.h"
#include "safefile.h"
#include "targets.h"
#include "timeutil.h"
#include "text_wrap.h"

#define EXIT_FINDING_WARNING 4
#define EXIT_FINDING_CRITICAL 5

static void run_usage(FILE *out)
{
	fprintf(out,
		"usage: connscope run [-p PIDS] [--comm NAME] [--cgroup PATH] [--children]\n"
		"                     [--fail-on LEVEL] [--cooldown S] [--warmup S]\n"
		"                     [--json-stream FILE] [--no-trace-command] [-i S] [-j]\n"
		"                     [--report FILE.html] [--prom FILE] -- COMMAND [ARGS...]\n"
		"  a load test as one step: runs COMMAND (the load generator), traces it and\n"
		"  its children (the client side) beside the targets (the server side) for\n"
		"  exactly its life, then prints the doctor's verdict (with -j, COMMAND's\n"
		"  standard output goes to standard error)\n"
		"  -p, --pid PIDS       the server side (repeatable, comma-separated)\n"
		"      --comm NAME      every process of that name (checked each interval)\n"
		"      --cgroup PATH    every process in that cgroup v2 directory\n"
		"      --container NAME every process of that container (name or id)\n"
		"      --children       follow the targets' children too\n"
		"      --fail-on LEVEL  warning or critical: exit 4 (a warning) or 5 (a\n"
		"                       critical finding) when one at or above LEVEL fired\n"
		"      --cooldown S     trace S seconds after COMMAND ends (default 0)\n"
		"      --warmup S       start COMMAND S seconds before tracing begins\n"
		"      --json-stream FILE  one JSON object per interval to FILE (- stdout)\n"
		"      --no-trace-command  trace only the targets, not COMMAND\n"
		"  -i, --interval S     report interval (default 1)\n"
		"  -j, --json           the report as one JSON document\n"
		"      --report FILE    also write the HTML report\n"
		"      --prom FILE      also write the metrics in Prometheus text format\n"
		"      --per-transition  one ring record per state change (older kernels)\n"
		"      --max-sockets N  socket table size of the BPF maps\n"
		"      --no-fd          no fd tracking\n"
		"      --fd-sites       fd syscall tracepoints for leak sites\n"
		"      --no-quic        no QUIC sources\n"
		"      --cost-every N   BPF run-time stats one interval in N (default 10)\n"
		"  -v, --verbose        libbpf's messages\n"
		"exit status: COMMAND's when it failed (128+N for signal N); else 4 or 5 as\n"
		"--fail-on says (agent_cost, about the measurement, never counts); else 0;\n"
		"1 connscope's own error, 2 bad usage\n"
		"examples:\n"
		"  connscope run -p 1234 --fail-on warning -- ab -n 5000 -c 50 URL\n"
		"      ab against server 1234, both sides traced; exit 4 or 5 if a finding\n"
		"      fired\n"
		"  connscope run --comm postgres --cooldown 2 -- pgbench -C -c 4 -t 300\n"
		"      pgbench and every postgres backend, 2 s more after it ends\n"
		"  connscope run --json-stream s.ndjson -j -- ./load.sh > report.json\n"
		"      a script and what it starts; a JSON line an interval, the report\n");
}

/* COMMAND must be runnable before anything is traced: found on PATH (or
 * a path) and executable. */
static int command_ok(const char *cmd)
{
	char path[PATH_MAX];
	const char *env = getenv("PATH"), *p;

	if (strchr(cmd, '/'))
		return access(cmd, X_OK) ? -errno : 0;
	for (p = env ? env : "/usr/bin:/bin"; p && *p;) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		snprintf(path, sizeof(path), "%.*s/%s", (int)n, n ? p : ".", cmd);
		if (!access(path, X_OK))
			return 0;
		p = end ? end + 1 : NULL;
	}
	return -ENOENT;
}

struct child {
	pid_t pid;
	int gate;	/* write end: a byte lets COMMAND exec; -1 once open */
	double started_s;	/* when it was let run */
};

/* Forks COMMAND, stopped before exec until the gate opens (NULL gate:
 * at once). Named as exec will name it, so the books see one name. */
static pid_t spawn_command(char **argv, int *gate_w, bool stdout_is_ours)
{
	int gate[2] = { -1, -1 }, ready[2];
	const char *base = strrchr(argv[0], '/');
	pid_t pid;
	char b;

	if (pipe2(ready, O_CLOEXEC))
		return -1;
	if (gate_w && pipe2(gate, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* A load generator never outlives the run that started it. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		prctl(PR_SET_NAME, base ? base + 1 : argv[0]);
		/* Named before attach reads its name (the books keep the first). */
		close(ready[0]);
		if (write(ready[1], "", 1) != 1)
			_exit(125);
		close(ready[1]);
		if (gate_w) {
			close(gate[1]);
			if (read(gate[0], &b, 1) != 1)
				_exit(125);	/* the run ended before tracing began */
		}
		/* -j: stdout is the report's; what COMMAND prints goes to stderr. */
		if (stdout_is_ours && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(125);
		execvp(argv[0], argv);
		text_err("connscope run: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(ready[1]);
	if (read(ready[0], &b, 1) != 1)
		pid = -1;
	close(ready[0]);
	if (gate_w) {
		close(gate[0]);
		*gate_w = gate[1];
	}
	return pid;
}

static void open_gate(void *ctx)
{
	struct child *c = ctx;

	if (c->gate >= 0 && write(c->gate, "", 1) != 1)
		text_err("connscope run: cannot start the command: %s\n", strerror(errno));
	if (c->gate >= 0)
		close(c->gate);
	c->gate = -1;
	c->started_s = now_ns() / 1e9;
}

/* COMMAND's status, stopping it first if the run ended without it (an
 * interrupt, an error): SIGINT as Ctrl-C would, then SIGKILL after 5 s. */
static int reap(pid_t pid)
{
	struct timespec gap = { 0, 50 * 1000 * 1000 };
	int status = 0;

	if (waitpid(pid, &status, WNOHANG) == pid)
		return status;
	kill(pid, SIGINT);
	for (int i = 0; i < 100; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		nanosleep(&gap, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return status;
}

int cmd_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "children", no_argument, NULL, 'C' },
		{ "comm", required_argument, NULL, 'c' },
		{ "cgroup", required_argument, NULL, 'g' },
		{ "container", required_argument, NULL, 'G' },
		{ "report", required_argument, NULL, 'r' },
		{ "prom", required_argument, NULL, 'm' },
		{ "per-transition", no_argument, NULL, 'X' },
		{ "max-sockets", required_argument, NULL, 'M' },
		{ "no-fd", no_argument, NULL, 'F' },
		{ "fd-sites", no_argument, NULL, 'f' },
		{ "no-quic", no_argument, NULL, 'Q' },
		{ "cost-every", required_argument, NULL, 'K' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "fail-on", required_argument, NULL, 'e' },
		{ "cooldown", required_argument, NULL, 'o' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "json-stream", required_argument, NULL, 's' },
		{ "no-trace-command", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct attach_opts o = { .interval_s = 1, .header = true, .doctor = true,
				 .quiet_live = true, .command = "run" };
	const char *stream_path = NULL;
	bool trace_command = true;
	int fail_on = 0, worst = 0, status, c, r, ret;
	double warmup_s = 0;
	struct child ch = { .gate = -1 };
	bool stream_stdout;

	optind = 1;
	opterr = 0;
	/* '+': the first word that is no option is COMMAND; its own options
	 * are its own. */
	while ((c = getopt_long(argc, argv, "+p:i:d:jvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			text_err("connscope run: -d: the run lasts as long as COMMAND; "
				 "give --cooldown S to trace on after it ends\n");
			return EXIT_USAGE;
		case 'e':
			if (!strcmp(optarg, "warning")) {
				fail_on = DR_WARNING;
			} else if (!strcmp(optarg, "critical")) {
				fail_on = DR_CRITICAL;
			} else {
				text_err("connscope run: --fail-on '%s': give warning or "
					 "critical\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'o':
			if (cli_parse_seconds("--cooldown", optarg, 0, 3600, &o.cooldown_s))
				return EXIT_USAGE;
			break;
		case 'w':
			if (cli_parse_seconds("--warmup", optarg, 0, 3600, &warmup_s))
				return EXIT_USAGE;
			break;
		case 's':
			stream_path = optarg;
			break;
		case 'n':
			trace_command = false;
			break;
		case 'h':
			run_usage(stdout);
			return 0;
		default:
			r = attach_tracing_opt(c, optarg, &o);
			if (r < 0)
				return EXIT_USAGE;
			if (!r)
				return cli_bad_option("run", argv);
			break;
		}
	}
	if (optind >= argc) {
		text_err("connscope run: no COMMAND: give the load generator after --, "
			 "e.g.\nconnscope run -p $(pgrep -n nginx) -- ab -n 2000 -c 8 "
			 "http://127.0.0.1:8080/\n");
		targets_free(&o.sel);
		return EXIT_USAGE;
	}
	if ((r = command_ok(argv[optind]))) {
		/* `-j FILE -- COMMAND`: FILE taken for COMMAND. */
		if (o.json && optind + 1 < argc && !strcmp(argv[optind + 1], "--"))
			text_err("connscope run: -j takes no file ('%s'); use -j -- "
				 "COMMAND > %s\n", argv[optind], argv[optind]);
		else
			text_err("connscope run: cannot run '%s': %s (give its path, or "
				 "install it)\n", argv[optind], strerror(-r));
		targets_free(&o.sel);
		return EXIT_USAGE;
	}
	if (!trace_command && !o.npids && !targets_any(&o.sel)) {
		text_err("connscope run: --no-trace-command and no target: nothing to "
			 "trace; give -p PID, --comm NAME or --cgroup PATH\n");
		targets_free(&o.sel);
		return EXIT_USAGE;
	}
	if (o.npids >= CLI_MAX_PIDS && trace_command) {
		text_err("connscope run: at most %d -p targets beside COMMAND\n",
			CLI_MAX_PIDS - 1);
		targets_free(&o.sel);
		return EXIT_USAGE;
	}
	/* Every output path checked before COMMAND starts: a bad one ends the
	 * run before any work, with nothing written (the stream's file is
	 * made once tracing works). */
	if ((o.report_html && (r = safefile_probe(o.report_html, "the report", "report.html"))) ||
	    (o.prom_file && (r = safefile_probe(o.prom_file, "the report", "metrics.prom"))) ||
	    (stream_path &&
	     (r = safefile_stream_check(stream_path, "--json-stream", "stream.ndjson")))) {
		targets_free(&o.sel);
		return r;
	}
	o.json_stream_path = stream_path;
	stream_stdout = stream_path && (!strcmp(stream_path, "-") ||
					safefile_fd_named(stream_path) == STDOUT_FILENO);

	/* Before the fork: what COMMAND prints must not carry our buffer. */
	fflush(stdout);
	ch.pid = spawn_command(argv + optind, warmup_s > 0 ? NULL : &ch.gate,
			       o.json || stream_stdout);
	if (ch.pid < 0) {
		text_err("connscope run: cannot start %s: %s\n", argv[optind],
			strerror(errno));
		targets_free(&o.sel);
		return 1;
	}
	if (warmup_s > 0)
		ch.started_s = now_ns() / 1e9;	/* else when the gate opens */
	if (trace_command) {
		o.pids[o.npids++] = ch.pid;
		o.tracer.follow_children = true;	/* a script's ab, wrk... */
	}
	if (warmup_s > 0) {
		struct timespec ts = { (time_t)warmup_s,
				       (long)((warmup_s - (time_t)warmup_s) * 1e9) };

		nanosleep(&ts, NULL);
	} else {
		o.on_tracing = open_gate;
		o.on_tracing_ctx = &ch;
	}
	o.until_pid = ch.pid;
	o.worst_severity = &worst;
	ret = attach_run(&o);
	/* Tracing failed before it began: COMMAND never ran. */
	if (ch.gate >= 0)
		close(ch.gate);
	status = reap(ch.pid);
	targets_free(&o.sel);
	if (ret && ret != EXIT_TARGET_GONE)
		return ret;
	if (WIFSIGNALED(status)) {
		text_err("connscope run: %s was killed by signal %d after %.1f s\n",
			argv[optind], WTERMSIG(status), now_ns() / 1e9 - ch.started_s);
		return 128 + WTERMSIG(status);
	}
	if (WEXITSTATUS(status)) {
		text_err("connscope run: %s exited with status %d after %.1f s\n",
			argv[optind], WEXITSTATUS(status), now_ns() / 1e9 - ch.started_s);
		return WEXITSTATUS(status);
	}
	if (fail_on && worst >= fail_on) {
		text_err("connscope run: a %s finding fired (--fail-on %s): exit %d\n",
			dr_severity_name(worst), dr_severity_name(fail_on),
			worst >= DR_CRITICAL ? EXIT_FINDING_CRITICAL : EXIT_FINDING_WARNING);
		return worst >= DR_CRITICAL ? EXIT_FINDING_CRITICAL : EXIT_FINDING_WARNING;
	}
	return 0;
}
