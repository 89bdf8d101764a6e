/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* `connscope summary`: the `ss -s` block and a per-process table of TCP
 * sockets by state. Building reads a snapshot; formatting is a pure
 * function of the built summary. */
#ifndef CONNSCOPE_SUMMARY_H
#define CONNSCOPE_SUMMARY_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include "procfs.h"
#include "snapshot.h"
#include "tcp_state_names.h"
#include "summary_quic.h"

struct summary_proc {
	pid_t pid;
	char comm[16];
	uint32_t state[CS_TCP_MAX_STATES];
	uint32_t orphan;
	uint32_t total;
};

struct summary {
	struct sockstat st;
	bool other_netns;	/* not the initial network namespace */
	struct summary_proc *procs;	/* sorted: most sockets first */
	size_t nprocs;
	struct summary_proc unattributed;	/* pid 0 */
	struct udp_view udp;		/* UDP sockets and QUIC libraries */
	bool has_udp;
	bool udp_all;			/* every process, not -p: a top 10 in text */
};

/* The processes of pids (all that hold TCP sockets when npids == 0). */
int summary_build(struct summary *sum, const struct tcp_snapshot *snap, const pid_t *pids,
		  size_t npids);
void summary_free(struct summary *sum);

/* The six lines of `ss -s`, byte for byte. */
void format_ss_summary(FILE *out, const struct sockstat *st);
void format_summary_text(FILE *out, const struct summary *sum, bool header);
void format_summary_json(FILE *out, const struct summary *sum);

/* `connscope summary [-p PID[,PID]] [-j] [-H]` */
int cmd_summary(int argc, char **argv);

#endif
