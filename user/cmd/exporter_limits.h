/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The exporter's limits on its series, part of attach's options
 * (attach_opts.h) and read by the exporter (exporter.h). */
#ifndef CONNSCOPE_EXPORTER_LIMITS_H
#define CONNSCOPE_EXPORTER_LIMITS_H

#include <stdbool.h>
#include <stdint.h>

/* What limits the series of one scrape. */
struct exporter_limits {
	uint32_t top_processes;	/* --all: processes with series of their own; 0 with -p */
	uint32_t max_series;	/* --max-series */
	bool proc_fds;		/* --all without --no-fd: their fd gauges from /proc */
	bool retire_gone;	/* --comm/--cgroup: gone processes' series and books
				 * go after the grace, as with --all */
};

#endif
