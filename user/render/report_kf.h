/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The figures this kernel cannot give (kfeatures.h), as every report says
 * them: one text line each, and JSON run.unavailable[]. */
#ifndef CONNSCOPE_REPORT_KF_H
#define CONNSCOPE_REPORT_KF_H

#include <stdio.h>
#include "kfeatures.h"

struct json;

/* Per figure that is off: "unavailable on this kernel: FIGURE", then what
 * is lost and what it needs, wrapped to 80 columns; nothing when all are
 * on or plan is NULL. */
void format_unavailable_text(FILE *out, const struct kf_plan *plan);
/* "unavailable": [{"figure", "what", "needs"}...] (empty when all are on). */
void json_unavailable(struct json *j, const struct kf_plan *plan);

#endif
