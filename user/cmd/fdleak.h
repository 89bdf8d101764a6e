/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* `connscope fdleak`: fd inventory, growth and the code sites that leak. */
#ifndef CONNSCOPE_FDLEAK_H
#define CONNSCOPE_FDLEAK_H

#include <stdbool.h>
#include <stdio.h>
#include "fd_books.h"
#include "fdinv.h"
#include "fdsites.h"

#define FDLEAK_MAX_SITES 10

/* One process's part of the report, resolved: what the renderers print. */
struct fdleak_proc {
	pid_t pid;
	char comm[16];
	bool exited;
	struct fd_inventory inv;	/* the last /proc listing */
	struct fd_limits lim;
	double slope;			/* fds per second, least squares */
	double seconds_to_limit;	/* < 0: not growing */
	const struct fd_proc *books;
	struct fd_suspect sus[FDLEAK_MAX_SITES];
	struct site_frames frames[FDLEAK_MAX_SITES];
	size_t nsus;
};

struct fdleak_run {
	double elapsed_s, interval_s, leak_age_s, warn_share;
	const char *end_reason;
	uint64_t stats[FD_STAT_MAX];
	int progs_attached, progs_missing;
	const char *missing_names;
	uint64_t events, snapshots;
};

void format_fdleak_text(FILE *out, const struct fdleak_proc *procs, size_t n,
			const struct fdleak_run *run, bool color);
void format_fdleak_json(FILE *out, const struct fdleak_proc *procs, size_t n,
			const struct fdleak_run *run);
/* Warning lines (RLIMIT_NOFILE use above the threshold); returns how many. */
int format_fdleak_warnings(FILE *out, const struct fdleak_proc *p, double warn_share);

/* One process's fd part as JSON members (inside an object), and a short
 * text block for the attach report. */
struct json;
void json_fdleak_proc(struct json *j, const struct fdleak_proc *p);
void format_fd_brief(FILE *out, const struct fdleak_proc *p, bool color);

int cmd_fdleak(int argc, char **argv);

#endif
