/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* aggbench's parts shared by its files: aggbench.c (record, synth, replay,
 * fdinv, main) and aggbench_mem.c (mem). */
#ifndef AGGBENCH_H
#define AGGBENCH_H

#include <stdint.h>
#include <time.h>
#include "tcp_books.h"

struct gen {
	struct cs_event *ev;
	uint64_t n, cap;
	uint64_t ts;
	int procs;
};

struct pair {
	uint64_t id;		/* connection number: sk, ports, addresses derive from it */
	int client, server;	/* process index */
};

void die(const char *what);
uint64_t clock_ns(clockid_t id);
/* A field of /proc/self/status in KiB (VmRSS, VmHWM), -1 if none. */
long status_kib(const char *field);
/* A command-line number, or exit 2 saying so. */
unsigned long long num(const char *s);
/* Connection id's client and server among procs processes. */
void pair_make(struct pair *p, uint64_t id, int procs);
/* A connection's opening events, both ends, onto g. */
void emit_open(struct gen *g, const struct pair *p);
/* The timed part of a replay (callgrind --toggle-collect=feed_timed). */
void feed_timed(struct agg *a, const struct cs_event *ev, uint64_t n);

int cmd_mem(int argc, char **argv);

#endif
