/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* `connscope attach`: trace processes for a window, live table, report. */
#ifndef CONNSCOPE_ATTACH_H
#define CONNSCOPE_ATTACH_H

#include "attach_opts.h"

/* Runs the whole attach; returns the process exit status. */
int attach_run(const struct attach_opts *o);
int cmd_attach(int argc, char **argv);
/* `connscope exporter -p PIDS [--listen ADDR:PORT] [-i S]` */
int cmd_exporter(int argc, char **argv);
/* `connscope doctor`: attach's run with the doctor's report */
int cmd_doctor(int argc, char **argv);
/* attach's target, tracing and report options (-j, --report, --prom,
 * --per-transition, --no-quic, --max-sockets), for commands that share
 * them: 1 taken, 0 not one of them, -1 bad (said). */
int attach_tracing_opt(int c, const char *arg, struct attach_opts *o);

#endif
