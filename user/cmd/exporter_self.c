// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The exporter's own process as every Prometheus client library exports
 * it (client_golang's process collector): the same names, types and help,
 * so the dashboards and alerts people have for any exporter work here. */
#include <stdio.h>
#include "exporter.h"
#include "self_stats.h"

void exporter_format_self(FILE *f)
{
	struct self_stats s;

	if (self_stats_read(&s))
		return;
	fprintf(f, "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
		   "# TYPE process_cpu_seconds_total counter\n"
		   "process_cpu_seconds_total %.2f\n"
		   "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
		   "# TYPE process_resident_memory_bytes gauge\n"
		   "process_resident_memory_bytes %llu\n"
		   "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n"
		   "# TYPE process_virtual_memory_bytes gauge\n"
		   "process_virtual_memory_bytes %llu\n"
		   "# HELP process_open_fds Number of open file descriptors.\n"
		   "# TYPE process_open_fds gauge\n"
		   "process_open_fds %llu\n",
		s.cpu_s, (unsigned long long)s.rss_bytes, (unsigned long long)s.vsize_bytes,
		(unsigned long long)s.open_fds);
	/* EXPORTER_PROCESS_SERIES of them, always: the series count counts
	 * on it (an unlimited soft limit reads as 2^64 - 1). */
	fprintf(f, "# HELP process_max_fds Maximum number of open file descriptors.\n"
		   "# TYPE process_max_fds gauge\n"
		   "process_max_fds %llu\n", (unsigned long long)s.max_fds);
	fprintf(f, "# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n"
		   "# TYPE process_start_time_seconds gauge\n"
		   "process_start_time_seconds %.2f\n", s.start_time_s);
}
