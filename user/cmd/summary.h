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
#include "summary_view.h"
#include "summary_format.h"


/* The processes of pids (all that hold TCP sockets when npids == 0). */
int summary_build(struct summary *sum, const struct tcp_snapshot *snap, const pid_t *pids,
		  size_t npids);


/* `connscope summary [-p PID[,PID]] [-j] [-H]` */
int cmd_summary(int argc, char **argv);

#endif
