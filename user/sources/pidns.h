/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The pid namespace whose numbers the agent's /proc shows: the host's, or
 * a child one (a container without hostPID, `unshare --pid`). The BPF
 * units translate every pid into it (bpf/agent.bpf.h agent_pidns_ino). */
#ifndef CONNSCOPE_PIDNS_H
#define CONNSCOPE_PIDNS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct pidns_info {
	bool child;		/* not the host's (init_pid_ns) */
	uint32_t ino;		/* its inode, as /proc/PID/ns/pid names it */
};

/* Probed once, then the same answer (a process cannot change the pid
 * namespace of its /proc). */
const struct pidns_info *pidns_agent(void);
/* What BPF rodata agent_pidns_ino takes: 0 in the host's namespace. */
uint32_t pidns_bpf_ino(void);
/* In a child namespace: a line on out saying so and what is out of sight. */
void pidns_note(FILE *out);

#endif
