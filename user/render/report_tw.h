/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The TIME_WAIT, orphan and limits parts of the attach report: per-endpoint
 * tables, heatmaps, and port / tw-bucket / orphan headroom with warnings. */
#ifndef CONNSCOPE_REPORT_TW_H
#define CONNSCOPE_REPORT_TW_H

#include <stdbool.h>
#include <stdio.h>
#include "tcp_books.h"
#include "json.h"
#include "tcp_limits.h"


struct tw_report_opts {
	int top;		/* endpoints shown, the rest as "other" */
	int width;		/* terminal columns for heatmaps */
	bool color, unicode;
};

/* The process's heatmaps alone (TIME_WAIT by endpoint, orphans by state). */
bool format_proc_heatmaps(FILE *out, const struct proc_books *p, const struct tw_report_opts *o);
bool format_tw_text(FILE *out, const struct proc_books *p, const struct tw_report_opts *o);
/* One heatmap of a report part whole (every row): a blank line, then the
 * map; nothing for an empty one. */
void format_heatmap_text(FILE *out, const struct heatmap *h, const struct tw_report_opts *o);
/* A process block's figures start at column 16, after "  %-13s " (its
 * label); a line of them too long for 80 columns continues there. */
#define FIGURES_INDENT "                "

/* net.ipv4.tcp_max_orphans is host-wide: /proc/sys shows it in the host's
 * network namespace only (the agent itself under ip netns exec reads
 * none: netlimits.max_orphans_unread). */
#define ORPHAN_LIMIT_UNKNOWN "tcp_max_orphans unknown (host-wide, readable in the " \
	"host's network namespace only)"
void format_limits_text(FILE *out, const struct limits_view *v, const char *sockets_src);
/* The warning lines alone (also printed to stderr by attach). */
int format_limits_warnings(FILE *out, const struct limits_view *v);

/* What the TIME_WAIT line's figures leave out: entered = expired + ended
 * early + live, or the difference named (entered after the end's socket
 * dump began, or ended unseen; or live ones from before the run). Writes
 * it to buf and returns true; false when they add up. */
bool tw_balance_rest(char *buf, size_t len, const struct proc_counters *t, uint64_t live);

void json_tw(struct json *j, const struct proc_books *p, int top);
void json_heatmap(struct json *j, const struct heatmap *h);
void json_limits(struct json *j, const struct limits_view *v);

#endif
