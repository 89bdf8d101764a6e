/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What connscope costs while it runs: its BPF programs' run time (BPF
 * run-time statistics, on while this holds the stats fd), its own CPU
 * (getrusage) and the targets' CPU over the same window (/proc/PID/stat).
 *
 * The statistics are themselves a cost: while on, every BPF program run on
 * the host (not only ours) takes two clock reads more. Measured on a
 * loopback churn with both ends traced (8 rounds of 40,000 connections):
 * connscope / none 0.78 with them on all the time, 0.85 with them off.
 * So they are on for one interval in every `every` (--cost-every, default
 * 10), and the BPF run time is per connection seen in those intervals. */
#ifndef CONNSCOPE_AGENTCOST_H
#define CONNSCOPE_AGENTCOST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "doctor.h"

struct agentcost {
	int stats_fd;		/* bpf_enable_stats(BPF_STATS_RUN_TIME); -1 off */
	bool valid;		/* stats could be turned on (or every is 0: off by choice) */
	uint32_t every;		/* on one interval in every this many; 0: never */
	uint64_t tick_ns;	/* the interval */
	uint32_t off_left;	/* intervals still to pass with the stats off */
	uint64_t window_ns;	/* when the stats were last turned on */
	uint64_t t0_ns;
	/* Each program's readings when the stats were last turned on or
	 * last summed (a program loaded later starts from 0), and the sums
	 * of the intervals measured so far. */
	struct prog_cost prog0[AGENT_COST_MAX_PROGS];
	size_t nprog0;
	struct prog_cost acc[AGENT_COST_MAX_PROGS];
	size_t nacc;
	uint64_t on_ns;		/* when the stats were turned on (ktime) */
	uint64_t conns0;	/* connection ends then */
	double stats_s;		/* seconds measured, summed */
	uint64_t stats_conns;	/* connection ends in them, summed */
	double self_cpu0;
	pid_t pids[DR_MAX_PROCS];
	uint64_t ticks0[DR_MAX_PROCS], ticks_last[DR_MAX_PROCS];
	size_t npids;
};

/* Takes the starting readings and turns BPF run-time stats on for the
 * first interval (every 0: never). conns: the connection ends the books
 * have seen so far. 0 or -errno (the BPF cost is then unknown, the run
 * goes on). */
int agentcost_start(struct agentcost *c, const pid_t *pids, size_t n, uint32_t every,
		    uint64_t tick_ns, uint64_t conns);
/* At the end of each interval: sums what was measured, then turns the
 * stats off once they have been on for an interval (the ticks are the run
 * loop's, which may come early after loading), on again after every - 1
 * intervals off. */
void agentcost_tick(struct agentcost *c, uint64_t conns);
/* The cost since the start (the interval under way included). */
void agentcost_sample(struct agentcost *c, struct agent_cost *out, uint64_t conns);
void agentcost_stop(struct agentcost *c);

#endif
