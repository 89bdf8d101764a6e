/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What the parts of the HTML report share: the primitives (html_text.h),
 * the heatmap figure and the parts drawn in files of their own (fds,
 * connection reuse). Internal to report_html*.c; the interface is
 * report_html.h. */
#ifndef CONNSCOPE_REPORT_HTML_INTERNAL_H
#define CONNSCOPE_REPORT_HTML_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "heatmap.h"
#include "html_text.h"

#define ULL(x) ((unsigned long long)(x))

/* The primitives (escaping, numbers, the usage meter): html_text.h. */

/* ---- report_html_heatmap.c ---- */

/* The style rules and the hover script of the heatmaps, for the page's
 * one <style> and one <script>. */
extern const char html_heatmap_css[];
extern const char html_heatmap_script[];

/* The label column in characters: h's longest label, at least at_least,
 * within the column's bound. Maps of one process pass the same value to
 * html_heatmap so that their time axes line up. */
int html_label_chars(const struct heatmap *h, int at_least);

/* One figure with id "hm-PID-KIND": title, what a cell means, the map
 * and its readout; or a note saying why there is no map. what_rows may be
 * NULL; what_cells too, for the sockets' wording ("sockets alive at the
 * sample taken in that interval", "events in that interval"). */
void html_heatmap(FILE *out, pid_t pid, const struct heatmap *src, const char *what_rows,
		  const char *what_cells, int labchars);

/* ---- report_html_fd.c: nothing at all when the run traced no fds ---- */

struct run_info;

extern const char html_fd_css[];

/* html_label_chars over pid's fd heatmaps; at_least when it has none. */
int html_fd_label_chars(const struct run_info *run, pid_t pid, int at_least);

/* The summary table's two fd cells of pid: fds now, growth per second;
 * dashes for a process whose fds were not traced. */
void html_fd_summary_cells(FILE *out, const struct run_info *run, pid_t pid);

/* pid's fd part of its process section, if it has one. */
void html_fd_part(FILE *out, pid_t pid, const struct run_info *run, int labchars);

/* ---- report_html_quic.c: nothing when pid saw no QUIC ---- */

int html_quic_label_chars(const struct run_info *run, pid_t pid, int at_least);
void html_quic_part(FILE *out, pid_t pid, const struct run_info *run, int labchars);

/* ---- report_html_reuse.c ---- */

struct agg;
struct proc_books;

extern const char html_reuse_css[];

/* html_label_chars over p's reuse heatmaps; at_least when it has none. */
int html_reuse_label_chars(const struct proc_books *p, int at_least);

/* p's reuse part of its process section: connections against requests,
 * handshake and lifetime, the top endpoints (the rest as "other") and the
 * lifetime and requests-per-connection heatmaps. */
void html_reuse_part(FILE *out, const struct agg *a, const struct proc_books *p, int top,
		     int labchars);

/* ---- report_html_run.c: the page's last sections ---- */

struct limits_view;

/* The namespace's limits: ports, TIME_WAIT and orphans against theirs. */
void html_limits_section(FILE *out, const struct limits_view *v, const char *sockets_src);
/* The run's facts: hooks, duration, the agent's counters, books vs kernel. */
void html_run_section(FILE *out, const struct agg *a, const struct run_info *run);
/* Where the counters came from, naming only the hooks this run used. */
void html_footer(FILE *out, const struct run_info *run);

#endif
