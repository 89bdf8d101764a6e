/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Command-line values shared by the subcommands: checked numbers and pid
 * lists, each failure reported with the flag and the accepted range. */
#ifndef CONNSCOPE_CLI_H
#define CONNSCOPE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define CLI_MAX_PIDS 256

/* Exit statuses. */
#define EXIT_USAGE 2		/* bad command line */
#define EXIT_TARGET_GONE 3	/* the traced process(es) exited during the window */

/* "12" or "12,13,14" (also repeated -p): appends to pids. 0 or -1 after
 * printing why. */
int cli_parse_pids(const char *flag, const char *arg, pid_t *pids, size_t *npids);
/* Seconds as a decimal ("2", "0.5") within [min, max]. */
int cli_parse_seconds(const char *flag, const char *arg, double min, double max, double *out);
/* An unsigned integer within [min, max]. */
int cli_parse_u64(const char *flag, const char *arg, unsigned long long min,
		  unsigned long long max, unsigned long long *out);

/* The tracing window options every tracing command takes: -p PIDS,
 * -d SECONDS, -i SECONDS. Returns 1 when c was one of them (and good), -1
 * after printing why it was bad, 0 when c is not one of them. */
int cli_window_opt(int c, const char *arg, pid_t *pids, size_t *npids, double *duration_s,
		   double *interval_s);
struct target_sel;
/* The target options beside -p that attach, doctor, exporter and fdleak
 * take alike: --comm NAME ('c'), --cgroup PATH ('g') and -v (libbpf's
 * messages, into *verbose). Returns as cli_window_opt() does. */
int targets_opt(int c, const char *arg, struct target_sel *sel, bool *verbose);
/* The report options attach and fdleak spell alike: --leak-age S ('L'),
 * --top N ('O', 1 to top_max), --warn-pct P ('W', into a share). Returns as
 * cli_window_opt() does. */
int cli_report_opt(int c, const char *arg, int top_max, double *leak_age_s, int *top,
		   double *warn_share);

/* After getopt: a word left over is an error (one line, EXIT_USAGE);
 * returns 0 when there is none. */
int cli_no_more_args(const char *cmd, int argc, char **argv);
/* bcc's habit for what follows the options: [interval [count]], the
 * interval in seconds (as -i) and the number of intervals (the run lasts
 * interval x count); then nothing more. Nonzero (EXIT_USAGE) said. */
int cli_interval_count(const char *cmd, int argc, char **argv, bool interval_set,
		       bool duration_set, double *interval_s, double *duration_s);
/* No -p given: "connscope CMD: ASK", EXIT_USAGE; 0 when there are pids. */
int cli_need_pids(const char *cmd, size_t npids, const char *ask);

/* getopt_long's failure (opterr must be 0): one line naming the option
 * (--html: the HTML report's option, where cmd has one). */
int cli_bad_option(const char *cmd, char **argv);
/* After getopt, -j given: a word left that is no number (attach's
 * [interval [count]]) is a file -j was taken to write; said (-j writes to
 * stdout, and the redirection), EXIT_USAGE. Else 0. */
int cli_json_file(const char *cmd, bool json, int argc, char **argv);
/* Every pid names a live process (said on stderr when not: 1); comms, when
 * not NULL, gets each one's name. */
int cli_check_targets(const pid_t *pids, size_t n, char (*comms)[16]);

#endif
