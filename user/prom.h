/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Prometheus text exposition (format 0.0.4) of connscope's books: pure
 * functions of a summary or of an attach run, for `summary --prom` and
 * `attach --prom FILE` (node_exporter's textfile collector). Names follow
 * the ecosystem's where the meaning is the same (node_sockstat_*,
 * process_open_fds), under the connscope_ prefix; labels are bounded: pid
 * and comm of traced processes, TCP state, fd type. */
#ifndef CONNSCOPE_PROM_H
#define CONNSCOPE_PROM_H

#include <stdio.h>
#include "procfs.h"
#include "report.h"
#include "summary.h"

/* Host socket counters (the `ss -s` sources). */
void format_prom_sockstat(FILE *out, const struct sockstat *st);
/* summary: host counters + sockets per process and state. */
void format_prom_summary(FILE *out, const struct summary *sum);
/* attach: host counters at the end, per-process counters, populations,
 * histograms, fds, and the agent's own health. */
void format_prom_attach(FILE *out, const struct agg *a, const struct run_info *run,
			const struct sockstat *st);

#endif
