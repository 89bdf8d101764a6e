// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* connscope: per-process TCP connection diagnostics from tracepoints,
 * sock_diag and /proc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attach.h"
#include "diff.h"
#include "cli.h"
#include "demo.h"
#include "run.h"
#include "fdleak.h"
#include "summary.h"
#include "version.h"
#include "text_wrap.h"


static void usage(FILE *out)
{
	fprintf(out,
		"usage: connscope COMMAND [OPTIONS]\n"
		"  summary [-p PID] [-j]          `ss -s` block + TCP sockets per process\n"
		"  attach -p PID [-d S] [-i S] [-j]  trace processes' connections live\n"
		"  fdleak -p PID [-d S] [-j]      fds by type, growth, the sites that leak\n"
		"  exporter -p PID|--all [--listen A:P]  serve the metrics for Prometheus\n"
		"  doctor -p PID [-d S] [-j]      what is wrong, its evidence and the fix\n"
		"  run [-p PID] [--fail-on L] -- COMMAND  a load test traced, judged, gated\n"
		"  diff BEFORE.json AFTER.json    what changed between two -j runs\n"
		"  demo [-d S]                    built-in loopback workload, attached\n"
		"  version, -V, --version         print the version\n"
		"`connscope COMMAND --help` for the options and examples of each command,\n"
		"`man connscope-COMMAND` for the same as a man page; `man connscope` for\n"
		"privileges, the hooks attached on each kernel, exit status.\n");
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	/* libdw would ask debuginfod servers for missing debug info and block
	 * on the network in the middle of a report: local files only. */
	unsetenv("DEBUGINFOD_URLS");

	if (!cmd || !strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		usage(cmd ? stdout : stderr);
		return cmd ? 0 : EXIT_USAGE;
	}
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("connscope %s\n", CONNSCOPE_VERSION);
		return 0;
	}
	if (!strcmp(cmd, "summary"))
		return cmd_summary(argc - 1, argv + 1);
	if (!strcmp(cmd, "attach"))
		return cmd_attach(argc - 1, argv + 1);
	if (!strcmp(cmd, "exporter"))
		return cmd_exporter(argc - 1, argv + 1);
	if (!strcmp(cmd, "fdleak"))
		return cmd_fdleak(argc - 1, argv + 1);
	if (!strcmp(cmd, "doctor"))
		return cmd_doctor(argc - 1, argv + 1);
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "diff"))
		return cmd_diff(argc - 1, argv + 1);
	if (!strcmp(cmd, "demo"))
		return cmd_demo(argc - 1, argv + 1);
	text_err("connscope: unknown command '%s': the commands are summary, attach, "
		 "doctor, run, diff, fdleak, exporter, demo and version (connscope --help)\n", cmd);
	return EXIT_USAGE;
}
