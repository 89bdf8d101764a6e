/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What attach adds to the books beside the TCP events (attach_books.c). */
#ifndef CONNSCOPE_ATTACH_BOOKS_H
#define CONNSCOPE_ATTACH_BOOKS_H

#include <stdint.h>
#include "tcp_books.h"
#include "quic_books.h"
#include "quic_tracer.h"
#include "report.h"
#include "report_quic.h"

/* The run's QUIC facts for the renderers, and books for QUIC-only
 * processes: each interval (the exporter renders then) and at the end. */
void attach_quic_refresh(struct quic_run *q, const struct quic_tracer *t, struct agg *a);
/* Ends the QUIC connections of processes that are gone. */
void attach_quic_reap(struct quic_books *qb, uint64_t now);
/* The worst finding's severity (enum dr_severity; 0: none), agent_cost
 * left out, for the exit status of `connscope run --fail-on`. */
int attach_worst_finding(const struct agg *a, const struct run_info *run);
/* What software each process is, read once while it is alive. */
void attach_identify_software(struct agg *a);
/* Forgets the parents noted of children gone without books. */
void attach_prune_parents(struct agg *a);
void attach_identify_containers(struct agg *a);

#endif
