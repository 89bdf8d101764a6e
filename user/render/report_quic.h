/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The QUIC part of the attach report (text and JSON): per process the
 * figures of quic_proc_view() with the source of each, per source the raw
 * counts, and what the wire unit counted (datagrams, malformed, lost). */
#ifndef CONNSCOPE_REPORT_QUIC_H
#define CONNSCOPE_REPORT_QUIC_H

#include <stdio.h>
#include <sys/types.h>
#include "json.h"
#include "quic_books.h"
#include "report_tw.h"

/* Nothing when q is NULL or pid saw no QUIC. */
/* The source that can follow the connections' lives of p's stack:
 * "ngtcp2" (its probes are on the library p maps), "kernel" (in-kernel
 * QUIC's socket states) or "wire" (nothing else: a stack compiled in, or
 * one without probes). */
const char *quic_stack_lifecycle(const struct quic_proc *p);
/* What the wire alone cannot see, said with a wire-only stack. */
#define QUIC_WIRE_ONLY_CANNOT "closes (CONNECTION_CLOSE is encrypted: a connection ends " \
	"with its socket), handshakes that fail before 10 s, streams"
void format_quic_text(FILE *out, const struct quic_run *q, pid_t pid,
		      const struct tw_report_opts *o);
/* The run's sources line and the wire unit's counters. */
void format_quic_agent_text(FILE *out, const struct quic_run *q);
/* "quic": {...} for pid; always written when q is set (zeros when quiet),
 * so a consumer finds the object for every process. */
void json_quic_proc(struct json *j, const struct quic_run *q, pid_t pid);
void json_quic_agent(struct json *j, const struct quic_run *q);
/* Live view: one line per process with QUIC so far (cumulative). */
void format_quic_live(FILE *out, const struct quic_run *q, const char *clock);

#endif
