/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The reuse part of the attach report: connections against requests per
 * process and endpoint, lifetime and handshake. The churn finding is one
 * of the doctor's rules (report_findings.c renders them all). */
#ifndef CONNSCOPE_REPORT_REUSE_H
#define CONNSCOPE_REPORT_REUSE_H

#include <stdio.h>
#include "tcp_books.h"
#include "json.h"
#include "report_tw.h"

void format_reuse_text(FILE *out, const struct proc_books *p, const struct tw_report_opts *o,
		       bool gap);
/* "reuse": {...} member of a process object. */
void json_reuse(struct json *j, const struct proc_books *p, int top);

#endif
