/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Prometheus text exposition (format 0.0.4) of connscope's books: pure
 * functions of a summary or of an attach run, for `summary --prom` and
 * `attach --prom FILE` (node_exporter's textfile collector). Names follow
 * the ecosystem's where the meaning is the same (node_sockstat_*,
 * process_open_fds), under the connscope_ prefix; labels are bounded: pid
 * and comm of traced processes (or "other", see prom_state.h), TCP state,
 * fd type, endpoint (10 per process + "other"). */
#ifndef CONNSCOPE_PROM_H
#define CONNSCOPE_PROM_H

#include <stdio.h>
#include "kernel_view.h"
#include "prom_state.h"
#include "report.h"
#include "summary_view.h"


/* Host socket counters (the `ss -s` sources). */
void format_prom_sockstat(FILE *out, const struct sockstat *st);
/* summary: host counters + sockets per process and state. */
void format_prom_summary(FILE *out, const struct summary *sum);
/* attach: host counters at the end, per-process counters, populations,
 * histograms, fds, and the agent's own health. */
void format_prom_attach(FILE *out, const struct agg *a, const struct run_info *run,
			const struct sockstat *st);

/* The exporter's snapshot: the views prom_state_update() chose, the host
 * (st may be NULL), the agent, and with exporter the series cap's and the
 * process selection's own metrics. Writes s->series - (the caller's
 * trailing series) lines of samples. */
void format_prom_state(FILE *out, const struct prom_state *s, const struct agg *a,
		       const struct run_info *run, const struct sockstat *st, bool exporter);
/* Series format_prom_state() writes whatever the cap (fixed_series of
 * struct prom_update_in, without the caller's own). */
size_t prom_fixed_series(const struct run_info *run, const struct sockstat *st, bool exporter);
/* A traced process's fds from the fd part of the run, for the views. */
void prom_fd_from_report(const struct fd_report *fds, pid_t pid, struct prom_fd *out);

#endif
