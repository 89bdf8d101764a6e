/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The run of `attach` and `fdleak`: poll and drain the rings, notice
 * targets that exit, call the command's interval work on every tick, and
 * stop at the duration, on SIGINT/SIGTERM, or when every target is gone. */
#ifndef CONNSCOPE_RUNLOOP_H
#define CONNSCOPE_RUNLOOP_H

#include <signal.h>
#include <stdint.h>
#include <bpf/libbpf.h>

#define RUN_MAX_RINGS 4

struct run_loop {
	/* Every ring manager of the run (the tracers', the fd session's):
	 * polled together, each drained on every wakeup. NULLs are skipped. */
	struct ring_buffer *rb[RUN_MAX_RINGS];
	uint64_t t0_ns;			/* now_ns() at the start */
	uint64_t tick_ns;		/* the interval */
	double duration_s;		/* 0: until interrupted or the targets exit */
	/* Marks the targets that exited since the last call and returns how
	 * many are alive (RUN_FOREVER: the run never ends for lack of them). */
	int (*alive)(void *ctx, uint64_t now_ns);
	/* The interval's work; nonzero stops the run as a failure. */
	int (*tick)(void *ctx, uint64_t now_ns);
	void *ctx;
	/* Out, for tick: when the tick it runs was due (t0_ns + k x tick_ns),
	 * however late it runs; the live tables' TIME is this, not now. */
	uint64_t due_ns;
	/* Out: "duration", "interrupted" or "target exited". */
	const char *end_reason;
	/* Out: when the run ended: the deadline, or when the signal or the
	 * targets' exit was seen (what comes after, the last readings, is
	 * the end's work, not more of the run). */
	uint64_t end_ns;
};

#define RUN_FOREVER 0x7fffffff

/* Runs until *exiting, the duration or the targets' exit; 0, or a negative
 * errno when reading the rings failed (said on stderr), or what tick
 * returned. Does not drain the rings at the end: the caller's final step
 * does, in its own order. */
int run_loop(struct run_loop *l, volatile sig_atomic_t *exiting);

/* "connscope: process 42 (nginx) exited after 3.1 s; ..." on stderr. */
void run_say_exited(const struct run_loop *l, int pid, const char *comm);

#endif
