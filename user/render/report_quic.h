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
