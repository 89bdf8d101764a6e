/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The one clock of the run. */
#ifndef CONNSCOPE_TIMEUTIL_H
#define CONNSCOPE_TIMEUTIL_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in ns: the clock of bpf_ktime_get_ns(), so event times
 * from the kernel and the agent's own ticks compare. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

#endif
