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

#endif
