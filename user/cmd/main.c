// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* connscope: per-process TCP connection diagnostics from tracepoints,
 * sock_diag and /proc. */
#include <stdbool.h>
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
		"`connscope COMMAND --help` (or `connscope help COMMAND`) for a command's\n"
		"options and examples, `man connscope-COMMAND` for the same as a man page;\n"
		"`man connscope` for privileges, the hooks attached on each kernel, exit\n"
		"status.\n");
}

static bool is_help(const char *s)
{
	return !strcmp(s, "-h") || !strcmp(s, "--help") || !strcmp(s, "help");
}

/* `connscope version`: nothing goes after it but --help, as after every
 * command (`version --bogus` printed the version and exited 0). */
static int cmd_version(int argc, char **argv)
{
	if (argc == 2 && is_help(argv[1])) {
		printf("usage: connscope version (or -V, --version): print the version\n");
		return 0;
	}
	if (argc > 1) {
		text_err("connscope %s: unexpected argument '%s': it takes none "
			 "(connscope --help)\n", argv[0], argv[1]);
		return EXIT_USAGE;
	}
	printf("connscope %s\n", CONNSCOPE_VERSION);
	return 0;
}

/* The command argv[0] with its arguments. */
static int command(int argc, char **argv)
{
	const char *cmd = argv[0];

	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version") || !strcmp(cmd, "-V"))
		return cmd_version(argc, argv);
	if (!strcmp(cmd, "summary"))
		return cmd_summary(argc, argv);
	if (!strcmp(cmd, "attach"))
		return cmd_attach(argc, argv);
	if (!strcmp(cmd, "exporter"))
		return cmd_exporter(argc, argv);
	if (!strcmp(cmd, "fdleak"))
		return cmd_fdleak(argc, argv);
	if (!strcmp(cmd, "doctor"))
		return cmd_doctor(argc, argv);
	if (!strcmp(cmd, "run"))
		return cmd_run(argc, argv);
	if (!strcmp(cmd, "diff"))
		return cmd_diff(argc, argv);
	if (!strcmp(cmd, "demo"))
		return cmd_demo(argc, argv);
	text_err("connscope: unknown command '%s': the commands are summary, attach, "
		 "doctor, run, diff, fdleak, exporter, demo and version (connscope --help)\n", cmd);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	/* libdw would ask debuginfod servers for missing debug info and block
	 * on the network in the middle of a report: local files only. */
	unsetenv("DEBUGINFOD_URLS");

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!is_help(argv[1]))
		return command(argc - 1, argv + 1);
	/* `connscope help doctor`: that command's own --help. */
	if (argc == 3 && !is_help(argv[2]))
		return command(2, (char *[]){ argv[2], "--help", NULL });
	if (argc > 3) {
		text_err("connscope %s: unexpected argument '%s': give one command's name "
			 "at most (connscope help COMMAND)\n", argv[1], argv[3]);
		return EXIT_USAGE;
	}
	usage(stdout);
	return 0;
}
