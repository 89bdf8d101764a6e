/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* --json-stream: one JSON object per interval on one line (NDJSON), for
 * CI logs and live dashboards while a run goes on. */
#ifndef CONNSCOPE_INTERVAL_NDJSON_H
#define CONNSCOPE_INTERVAL_NDJSON_H

#include <stdio.h>
#include "tcp_books.h"

/* The interval that agg_tick just closed: each process with a row for it
 * (targets always, others when they did something), the run's clock,
 * events lost so far. Flushed, so a reader sees each line whole. */
void format_interval_ndjson(FILE *out, const struct agg *a, uint64_t events_lost);

#endif
