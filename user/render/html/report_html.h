/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The attach report as one self-contained HTML file: no network fetches,
 * heatmaps per process and kind drawn as inline SVG with axes, legend and
 * hover values, the summary table and the run's parameters. A pure function
 * of the books and the run facts, like the other renderers. */
#ifndef CONNSCOPE_REPORT_HTML_H
#define CONNSCOPE_REPORT_HTML_H

#include <stdio.h>
#include "tcp_books.h"
#include "report.h"

/* Writes the whole document to out. Returns 0, or -EIO when a write failed. */
int format_report_html(FILE *out, const struct agg *a, const struct run_info *run);

#endif
