// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* attach on a terminal: the live view redrawn in place each interval, and
 * how wide the terminal is. Moved out of attach.c unchanged. */
#include <stdio.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include "attach_live.h"
#include "report.h"
#include "report_quic.h"

/* Columns of the terminal, 80 when not one (or unknown). */
int terminal_width(void)
{
	struct winsize ws;

	if (isatty(STDOUT_FILENO) && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col >= 40)
		return ws.ws_col;
	return 80;
}

/* On a terminal the live view is redrawn in place each interval: the last
 * interval's table and every target's heatmaps so far. */
void live_redraw(const struct agg *a, const struct tw_report_opts *tw, const char *clock,
			double elapsed_s, const struct fd_report *fds, const struct quic_run *q)
{
	const struct proc_books *procs[256];
	size_t n = report_procs(a, procs, 256);

	printf("\033[H\033[2J");
	printf("connscope attach  %.0f s  (Ctrl-C for the report)\n\n", elapsed_s);
	format_live_header(stdout);
	format_live_rows(stdout, a, clock, fds);
	format_quic_live(stdout, q, clock);
	for (size_t i = 0; i < n; i++) {
		if (!procs[i]->target || !procs[i]->hm_ready)
			continue;
		printf("\n%d (%s)", procs[i]->pid, procs[i]->comm);
		format_proc_heatmaps(stdout, procs[i], tw);
		if (fd_report_proc(fds, procs[i]->pid)) {
			const struct fd_proc *b = fd_report_proc(fds, procs[i]->pid)->books;
			struct heatmap_term_opts t = { .width = tw->width, .color = tw->color,
						       .unicode = tw->unicode };

			if (b && b->hm_ready && heatmap_ncols(&b->hm_type)) {
				printf("\n");
				format_heatmap_term(stdout, &b->hm_type, &t);
			}
		}
	}
	fflush(stdout);
}
