/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The agent's own process, as the Prometheus client libraries' process
 * collector reports it (process_cpu_seconds_total, ...): /proc/self. */
#ifndef CONNSCOPE_SELF_STATS_H
#define CONNSCOPE_SELF_STATS_H

#include <stdint.h>

struct self_stats {
	double cpu_s;			/* user + system */
	uint64_t rss_bytes, vsize_bytes;
	uint64_t open_fds;
	uint64_t max_fds;		/* soft RLIMIT_NOFILE (RLIM_INFINITY: unlimited) */
	double start_time_s;		/* since the Unix epoch */
};

/* 0, or -errno when /proc/self/stat cannot be read (the rest is then 0). */
int self_stats_read(struct self_stats *s);

#endif
