// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* What an attach run hands on besides its reports: the loss counts
 * refreshed from its sources, and the exporter's snapshot of the books.
 * Moved out of attach.c unchanged. */
#include <stdio.h>
#include <stdlib.h>
#include "attach_metrics.h"
#include "exporter.h"
#include "losses.h"
#include "timeutil.h"

/* What the agent missed so far, from every source's counters (the
 * kernel's maps read here, in the command: renderers never ask). */
void attach_refresh_losses(struct run_info *run, struct tracer *t, struct fd_session *fs,
			   const struct agg *a)
{
	uint64_t fd[FD_STAT_MAX] = { 0 };

	tracer_stats(t, run->stats);
	if (fs)
		fd_tracer_stats(&fs->ft, fd);
	losses_collect(&run->losses, run->stats, t->seeds_failed, fs ? fd : NULL,
		       fs ? fs->list_failed : 0, fs ? fs->ft.failed : 0, run->quic);
	losses_collect_books(&run->losses, a);
}

/* The exporter's snapshot: the books rendered as metrics, published for
 * the HTTP thread. Rendering cost is itself a metric. */
void attach_publish_metrics(struct exporter *exp, const struct agg *a, struct run_info *run,
			    struct tracer *t, struct fd_session *fs, const struct sockstat *st)
{
	uint64_t t0 = now_ns(), t1;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	attach_refresh_losses(run, t, fs, a);
	f = open_memstream(&buf, &len);
	if (!f)
		return;
	exporter_format(exp, f, a, run, st);
	t1 = now_ns();
	fprintf(f, "# HELP connscope_snapshot_render_seconds Time to render this snapshot\n"
		   "# TYPE connscope_snapshot_render_seconds gauge\n"
		   "connscope_snapshot_render_seconds %.6f\n"
		   "# HELP connscope_scrapes_total Scrapes of /metrics answered\n"
		   "# TYPE connscope_scrapes_total counter\n"
		   "connscope_scrapes_total %llu\n",
		(t1 - t0) / 1e9,
		(unsigned long long)exporter_scrapes(exp));
	exporter_format_self(f);
	fclose(f);
	exporter_publish(exp, buf, len);
	free(buf);
}
