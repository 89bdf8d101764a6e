/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The reuse part of the attach report: connections against requests per
 * process and endpoint, lifetime and handshake, the churn findings. */
#ifndef CONNSCOPE_REPORT_REUSE_H
#define CONNSCOPE_REPORT_REUSE_H

#include <stdio.h>
#include "tcp_books.h"
#include "json.h"
#include "report_tw.h"

void format_reuse_text(FILE *out, const struct proc_books *p, const struct tw_report_opts *o);
/* "FINDING: ..." lines; returns how many. */
int format_findings_text(FILE *out, const struct agg *a);
/* "reuse": {...} member of a process object. */
void json_reuse(struct json *j, const struct proc_books *p, int top);
/* "findings": [...] member of the report. */
void json_findings(struct json *j, const struct agg *a);

#endif
