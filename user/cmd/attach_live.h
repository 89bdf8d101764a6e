/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* attach on a terminal (attach_live.c). */
#ifndef CONNSCOPE_ATTACH_LIVE_H
#define CONNSCOPE_ATTACH_LIVE_H

#include "tcp_books.h"
#include "report.h"
#include "report_quic.h"

/* Columns of the terminal, 80 when not one (or unknown). */
int terminal_width(void);

/* On a terminal the live view is redrawn in place each interval: the last
 * interval's table and every target's heatmaps so far. */
void live_redraw(const struct agg *a, const struct tw_report_opts *tw, const char *clock,
		 double elapsed_s, const struct fd_report *fds, const struct quic_run *q);

#endif
