/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The host's TCP limits over a run: the sysctls, TIME_WAIT and orphans
 * against them, and the ephemeral port use of the busiest destinations,
 * each at its peak. */
#ifndef CONNSCOPE_TCP_LIMITS_H
#define CONNSCOPE_TCP_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include "kernel_view.h"
#include "ports.h"

#define LIMITS_TOP_DESTS 5
#define LIMITS_TRACKED_DESTS 64	/* destinations whose peak is kept */

/* Host-level facts at the end of the run and at its worst moment. */
struct limits_view {
	struct netlimits lim;
	uint64_t host_tw, host_orphan;		/* sockstat at the end */
	uint64_t host_tw_peak, host_orphan_peak;
	/* Each destination at its own busiest moment, busiest first. */
	struct port_use dests[LIMITS_TRACKED_DESTS];
	size_t ndests;
	double peak_share;			/* of the busiest destination */
	double warn_share;			/* threshold, e.g. 0.8 */
	bool valid;
};

/* Fold one reconcile's snapshot into v (keeps the worst moment). */
void limits_observe(struct limits_view *v, const struct netlimits *lim,
		    const struct sd_sock *socks, size_t nsocks, const struct sockstat *st);

#endif
