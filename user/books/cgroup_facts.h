/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What became of the --cgroup directory during a run: the command watches
 * its path (cmd/cgroup_watch.c), the renderers say it. */
#ifndef CONNSCOPE_CGROUP_FACTS_H
#define CONNSCOPE_CGROUP_FACTS_H

#include <stdbool.h>

struct cgroup_facts {
	/* Removed, and no cgroup made again at its path since (at the end:
	 * nothing joined through it after) ... */
	bool removed;
	double removed_s;	/* ... this long after the start */
	/* A new cgroup at the same path (a restarted unit or container)
	 * followed this many times ... */
	unsigned recreated;
	double recreated_s;	/* ... the last one this long after the start */
};

#endif
