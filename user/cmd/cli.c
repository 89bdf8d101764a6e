// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "pidns.h"
#include "procfs.h"
#include "targets.h"
#include "containers.h"
#include "text_wrap.h"

int cli_parse_pids(const char *flag, const char *arg, pid_t *pids, size_t *npids)
{
	const char *p = arg;

	/* A name where a pid belongs (`-p nginx`): say how to trace by name. */
	if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) {
		text_err("connscope: %s '%s': expected a process id, not a name;\ngive "
			 "%s $(pgrep -d, %s), or --comm %s (all but summary)\n",
			flag, arg, flag, arg, arg);
		return -1;
	}
	if (!*p)
		goto bad;
	while (*p) {
		char *end;
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p || v <= 0 || v > 4194304 || (*end && *end != ','))
			goto bad;
		if (*npids >= CLI_MAX_PIDS) {
			text_err("connscope: %s: at most %d processes can be traced at once\n",
				flag, CLI_MAX_PIDS);
			return -1;
		}
		pids[(*npids)++] = v;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			goto bad;
	}
	return 0;
bad:
	text_err("connscope: %s '%s': expected a process id (1..4194304) or several, "
		 "e.g. %s 12,13\n", flag, arg, flag);
	return -1;
}

int cli_parse_seconds(const char *flag, const char *arg, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(v) || v < min || v > max) {
		/* %.10g: a bound of 30 days reads 2592000, not 2.592e+06. */
		text_err("connscope: %s '%s': expected seconds between %.10g and %.10g\n",
			flag, arg, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

int cli_parse_u64(const char *flag, const char *arg, unsigned long long min,
		  unsigned long long max, unsigned long long *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (errno || end == arg || *end || arg[0] == '-' || v < min || v > max) {
		text_err("connscope: %s '%s': expected an integer between %llu and %llu\n",
			flag, arg, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

int cli_bad_option(const char *cmd, char **argv)
{
	extern int optind, optopt;
	const char *arg = argv[optind - 1], *next = argv[optind];
	/* A short option inside a cluster ("-xj"): getopt has not moved
	 * optind past it yet, so it is in the next word, not arg. */
	bool in_cluster = optopt && next && next[0] == '-' && next[1] && next[1] != '-' &&
			  strchr(next + 1, optopt);
	bool reports = !strcmp(cmd, "attach") || !strcmp(cmd, "doctor") ||
		       !strcmp(cmd, "run") || !strcmp(cmd, "diff");

	if (reports && !strncmp(arg, "--html", 6) && (!arg[6] || arg[6] == '='))
		text_err("connscope %s: '%s' is unknown; the HTML report is --report "
			 "FILE.html\n", cmd, arg);
	else if (!strncmp(arg, "--json=", 7) && strcmp(cmd, "exporter"))
		text_err("connscope %s: --json takes no file ('%s'); use -j > %s\n",
			cmd, arg + 7, arg + 7);
	else if (in_cluster || strncmp(arg, "--", 2))
		/* getopt sets optopt alike for an unknown short option and one
		 * without its value. */
		text_err("connscope %s: '-%c' is unknown or lacks its value (connscope %s "
			 "--help)\n", cmd, optopt, cmd);
	else if (!optopt)	/* glibc: 0 for a long option it does not know */
		text_err("connscope %s: option '%s' is unknown or ambiguous (connscope %s "
			 "--help)\n", cmd, arg, cmd);
	else if (strchr(arg, '='))
		text_err("connscope %s: option '%.*s' takes no value (connscope %s --help)\n",
			 cmd, (int)(strchr(arg, '=') - arg), arg, cmd);
	else
		text_err("connscope %s: option '%s' needs a value (connscope %s --help)\n",
			 cmd, arg, cmd);
	return EXIT_USAGE;
}

int cli_window_opt(int c, const char *arg, pid_t *pids, size_t *npids, double *duration_s,
		   double *interval_s)
{
	switch (c) {
	case 'p':
		return cli_parse_pids("-p", arg, pids, npids) ? -1 : 1;
	case 'd':
		return cli_parse_seconds("-d", arg, 0.1, 86400 * 30, duration_s) ? -1 : 1;
	case 'i':
		return cli_parse_seconds("-i", arg, 0.1, 3600, interval_s) ? -1 : 1;
	}
	return 0;
}

int targets_opt(int c, const char *arg, struct target_sel *sel, bool *verbose)
{
	switch (c) {
	case 'c':
		return targets_parse_comm(sel, arg) ? -1 : 1;
	case 'g':
		return targets_parse_cgroup(sel, arg) ? -1 : 1;
	case 'G': {
		struct container_ref ref;

		if (sel->container[0]) {
			text_err("connscope: --container: one container at a time (its "
				 "processes are one cgroup)\n");
			return -1;
		}
		if (container_resolve(arg, &ref) || targets_parse_cgroup(sel, ref.cgroup))
			return -1;
		container_label(&ref, sel->container, sizeof(sel->container));
		snprintf(sel->container_id, sizeof(sel->container_id), "%s", ref.c.id);
		return 1;
	}
	case 'v':
		*verbose = true;
		return 1;
	}
	return 0;
}

int cli_report_opt(int c, const char *arg, int top_max, double *leak_age_s, int *top,
		   double *warn_share)
{
	unsigned long long v;

	switch (c) {
	case 'L':
		return cli_parse_seconds("--leak-age", arg, 0, 86400, leak_age_s) ? -1 : 1;
	case 'O':
		if (cli_parse_u64("--top", arg, 1, top_max, &v))
			return -1;
		*top = v;
		return 1;
	case 'W':
		if (cli_parse_u64("--warn-pct", arg, 1, 100, &v))
			return -1;
		*warn_share = v / 100.0;
		return 1;
	}
	return 0;
}

int cli_no_more_args(const char *cmd, int argc, char **argv)
{
	extern int optind;

	if (optind >= argc)
		return 0;
	text_err("connscope %s: unexpected argument '%s' (connscope %s --help)\n", cmd,
		argv[optind], cmd);
	return EXIT_USAGE;
}

int cli_json_file(const char *cmd, bool json, int argc, char **argv)
{
	extern int optind;
	const char *w = optind < argc ? argv[optind] : NULL;
	char *end;

	if (!json || !w)
		return 0;
	(void)strtod(w, &end);
	if (end != w && !*end)
		return 0;
	text_err("connscope %s: -j takes no file ('%s'); use -j > %s\n", cmd, w, w);
	return EXIT_USAGE;
}

int cli_interval_count(const char *cmd, int argc, char **argv, bool interval_set,
		       bool duration_set, double *interval_s, double *duration_s)
{
	extern int optind;
	unsigned long long count;
	char *end;
	double v;

	if (optind >= argc)
		return 0;
	if (interval_set) {
		text_err("connscope %s: '%s' after the options is the interval, and -i "
			 "gave one too: give one of them\n", cmd, argv[optind]);
		return EXIT_USAGE;
	}
	errno = 0;
	v = strtod(argv[optind], &end);
	if (errno || end == argv[optind] || *end || !isfinite(v) || v < 0.1 || v > 3600) {
		text_err("connscope %s: unexpected argument '%s': after the options come\n"
			 "[interval [count]] (seconds 0.1 to 3600, and a number of intervals), "
			 "e.g.\nconnscope %s -p PID 2 10 (every 2 s, 10 times)\n",
			cmd, argv[optind], cmd);
		return EXIT_USAGE;
	}
	*interval_s = v;
	if (++optind >= argc)
		return 0;
	if (duration_set) {
		text_err("connscope %s: a count ('%s') and -d both end the run: give "
			 "one of them\n", cmd, argv[optind]);
		return EXIT_USAGE;
	}
	if (cli_parse_u64("count", argv[optind], 1, 1000000, &count))
		return EXIT_USAGE;
	*duration_s = *interval_s * count;
	optind++;
	return cli_no_more_args(cmd, argc, argv);
}

int cli_need_pids(const char *cmd, size_t npids, const char *ask)
{
	if (npids)
		return 0;
	text_err("connscope %s: %s\n", cmd, ask);
	return EXIT_USAGE;
}

int cli_check_targets(const pid_t *pids, size_t n, char (*comms)[16])
{
	for (size_t i = 0; i < n; i++) {
		struct proc_ident id;

		if (procfs_read_ident(pids[i], &id) || procfs_pid_gone(pids[i])) {
			const struct pidns_info *ns = pidns_agent();

			/* In a child pid namespace a host pid is not wrong but
			 * out of sight: say that, and how to see it. */
			if (ns->child)
				text_err("connscope: no process %d in this pid namespace "
					 "(pid:[%u], a container's own): processes outside it "
					 "cannot be seen from here; give its pid as this "
					 "namespace's /proc shows it, or run the agent in the "
					 "host's pid namespace (podman/docker --pid=host, "
					 "Kubernetes hostPID: true)\n", pids[i], ns->ino);
			else
				text_err("connscope: no such process: %d (find the pid with "
					 "`pgrep NAME`)\n", pids[i]);
			return 1;
		}
		/* Nothing to trace in a kernel thread: no fds, no sockets of
		 * its own, and a run would end with an empty report and 0. */
		if (id.flags & PROCFS_PF_KTHREAD) {
			text_err("connscope: process %d (%s) is a kernel thread, which owns "
				 "no sockets; give the pid of a user process (`pgrep NAME`)\n",
				pids[i], id.comm);
			return EXIT_USAGE;
		}
		if (comms)
			memcpy(comms[i], id.comm, sizeof(comms[i]));
	}
	return 0;
}
