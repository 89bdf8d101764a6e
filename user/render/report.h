/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Renderers of an attach run: the live per-interval table and the final
 * report (text and JSON). Pure functions of the books and run facts. */
#ifndef CONNSCOPE_REPORT_H
#define CONNSCOPE_REPORT_H

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include "tcp_books.h"
#include "tcpstate.h"
#include "report_tw.h"
#include "quic_books.h"
#include "fd_report.h"
#include "losses.h"
#include "cgroup_facts.h"
#include "run_info.h"

/* One untraced acceptor in words, unwrapped (the HTML report's). */
void untraced_line(char *line, size_t len, const struct untraced_acceptor *u);
/* The untraced acceptors as one warning each, wrapped (text report, stderr). */
void format_untraced_text(FILE *out, const struct untraced_acceptor *u, size_t n);

/* Live table: header once, then one row per traced process per interval. */
void format_live_header(FILE *out);
/* fds may be NULL (no FDS column values: "-"). */
void format_live_rows(FILE *out, const struct agg *a, const char *clock,
		      const struct fd_report *fds);

void format_report_text(FILE *out, const struct agg *a, const struct run_info *run);
void format_report_json(FILE *out, const struct agg *a, const struct run_info *run);

/* The processes of the books in a stable order: targets first, by pid. */
size_t report_procs(const struct agg *a, const struct proc_books **out, size_t max);

#endif
