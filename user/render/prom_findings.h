/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* connscope_finding{pid,rule,severity} gauges: one series per finding of
 * the doctor's rules, 1 while it holds. */
#ifndef CONNSCOPE_PROM_FINDINGS_H
#define CONNSCOPE_PROM_FINDINGS_H

#include <stddef.h>
#include <stdio.h>
#include "tcp_books.h"

struct run_info;

/* Writes the family (nothing when there is no finding) and returns the
 * number of series; out NULL only counts them. */
size_t prom_findings(FILE *out, const struct agg *a, const struct run_info *run);

#endif
