/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What connscope itself cost over the run, in every output: its BPF
 * programs' run time and runs (the kernel's BPF run-time stats), its own
 * CPU, and both per traced connection end. Pure functions of the books and
 * the run's struct agent_cost (sources/agentcost.c fills it). */
#ifndef CONNSCOPE_REPORT_COST_H
#define CONNSCOPE_REPORT_COST_H

#include <stdio.h>
#include <stdint.h>
#include "doctor.h"
#include "tcp_books.h"

struct json;

/* Connection ends the books saw opened or accepted: what "per connection"
 * divides by (a connection traced at both ends counts twice). */
uint64_t cost_connections(const struct agg *a);

/* Text: two lines and one per program (c may be NULL or invalid: one line
 * saying the cost is unknown). */
void format_cost_text(FILE *out, const struct agent_cost *c, const struct agg *a);
/* JSON: the member "cost" of the agent object. */
void json_cost(struct json *j, const struct agent_cost *c, const struct agg *a);
/* Prometheus self-metrics; returns nothing when c is not valid. */
void prom_cost(FILE *out, const struct agent_cost *c, const struct agg *a);
/* Series prom_cost writes. */
size_t prom_cost_series(const struct agent_cost *c);
/* HTML: <dt>/<dd> rows for the run facts, and a table of the programs. */
void html_cost_facts(FILE *out, const struct agent_cost *c, const struct agg *a);

#endif
