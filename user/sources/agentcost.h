/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What connscope costs while it runs: its BPF programs' run time (BPF
 * run-time statistics, on while this holds the stats fd), its own CPU
 * (getrusage) and the targets' CPU over the same window (/proc/PID/stat). */
#ifndef CONNSCOPE_AGENTCOST_H
#define CONNSCOPE_AGENTCOST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "doctor.h"

struct agentcost {
	int stats_fd;		/* bpf_enable_stats(BPF_STATS_RUN_TIME); -1 off */
	uint64_t t0_ns;
	/* Each program's readings at the start (a program loaded later
	 * starts from 0: it ran only while ours). */
	struct prog_cost prog0[AGENT_COST_MAX_PROGS];
	size_t nprog0;
	double self_cpu0;
	pid_t pids[DR_MAX_PROCS];
	uint64_t ticks0[DR_MAX_PROCS], ticks_last[DR_MAX_PROCS];
	size_t npids;
};

/* Turns BPF run-time stats on and takes the starting readings. 0 or
 * -errno (the cost is then unknown, the run goes on). */
int agentcost_start(struct agentcost *c, const pid_t *pids, size_t n);
/* The cost since the start. */
void agentcost_sample(struct agentcost *c, struct agent_cost *out);
void agentcost_stop(struct agentcost *c);

#endif
