/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The fdleak report: text, JSON, and the fd parts of the attach report. */
#ifndef CONNSCOPE_FDLEAK_REPORT_H
#define CONNSCOPE_FDLEAK_REPORT_H

#include <stdbool.h>
#include <stdio.h>
#include "fd_report.h"

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

/* A growth as shown, to a tenth: one that rounds to nothing reads +0.0,
 * not -0.0 (`make demo`'s HTML read "-0.0" for a flat fd count). */
static inline double fd_growth_shown(double slope)
{
	return slope > -0.05 && slope < 0.05 ? 0.0 : slope;
}

#endif
