/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Bounded rows for display: the n rows with the largest totals, in their
 * original order, and every other row folded into "other" (cell by cell a
 * sum: for sampled populations the populations add up at each moment). */
#ifndef CONNSCOPE_HEATMAP_TOP_H
#define CONNSCOPE_HEATMAP_TOP_H

#include "heatmap.h"

/* dst is initialised here (free with heatmap_free). 0 or -errno. */
int heatmap_top(const struct heatmap *src, struct heatmap *dst, int n);

#endif
