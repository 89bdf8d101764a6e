/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* `connscope diff BEFORE.json AFTER.json`: what changed between two runs
 * (`attach -j` or `doctor -j`) of the same programs: per process and
 * endpoint, connections per request, TIME_WAIT, ports, fds, and the
 * findings raised and cleared. diff.c reads the two files (jansson) into
 * a model (cmd/diff.c reads, this header holds the model); the renderers
 * in render/diff_render.c show it as text, JSON and HTML. */
#ifndef CONNSCOPE_DIFF_REPORT_H
#define CONNSCOPE_DIFF_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#define DIFF_MAX_METRICS 16
#define DIFF_MAX_EPS 16
#define DIFF_MAX_PROCS 32
#define DIFF_MAX_FINDINGS 128

/* Which way a figure should go after a fix: fewer requests or
 * connections is no better (less work done), fewer per request or fewer
 * failures is; a rate of work done higher is. */
enum { DIFF_NEUTRAL = 0, DIFF_LOWER_BETTER = -1, DIFF_HIGHER_BETTER = 1 };
/* A ratio within 5 % of 1 is judged neither better nor worse. */
#define DIFF_SAME_BAND 0.05

struct diff_metric {
	const char *name;	/* "connections_per_request" */
	const char *unit;
	int better;		/* DIFF_LOWER_BETTER, DIFF_HIGHER_BETTER, DIFF_NEUTRAL */
	double before, after;
	bool has_before, has_after;
};

struct diff_metrics {
	struct diff_metric m[DIFF_MAX_METRICS];
	int n;
};

struct diff_ep {
	char label[64];
	struct diff_metrics m;
};

struct diff_proc {
	char comm[16];
	long pid_before, pid_after;	/* the first of each side; 0: not in that run */
	int nbefore, nafter;		/* processes summed on each side */
	bool same;			/* one process traced in both runs */
	struct diff_metrics m;
	struct diff_ep eps[DIFF_MAX_EPS];
	int neps;
};

enum { DIFF_CLEARED = -1, DIFF_STILL = 0, DIFF_RAISED = 1 };

struct diff_finding {
	int change;		/* DIFF_* */
	char rule[24], severity[12], comm[16], endpoint[64];
	char verdict[400];	/* the run's own sentence (after's when still there) */
};

struct diff_run {
	char path[256];
	char command[16];	/* attach / doctor */
	double elapsed_s;
	double load_s;		/* the load's seconds (run.load_s; elapsed_s when absent) */
};

struct diff_model {
	struct diff_run before, after;
	struct diff_proc procs[DIFF_MAX_PROCS];
	int nprocs;
	struct diff_finding findings[DIFF_MAX_FINDINGS];
	int nfindings;
	/* Endpoints paired though their labels differ (a server restarted on
	 * another port): after's label -> before's. */
	struct { char before[64], after[64]; } alias[DIFF_MAX_PROCS];
	int naliases;
};

/* before -> after as a ratio (after / before), NAN when it means nothing. */
double diff_ratio(const struct diff_metric *x);
/* "better", "worse" or "" (no change, no direction, nothing to compare). */
const char *diff_judge(const struct diff_metric *x);

void format_diff_text(FILE *out, const struct diff_model *m);
void format_diff_json(FILE *out, const struct diff_model *m);
void format_diff_html(FILE *out, const struct diff_model *m);

#endif
