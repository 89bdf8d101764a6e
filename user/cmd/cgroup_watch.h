/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The --cgroup directory during a run (attach, exporter, doctor, fdleak):
 * removed (a unit stopped, a container gone), or removed and made again at
 * the same path (a restart: a new cgroup, a new id), which is followed. */
#ifndef CONNSCOPE_CGROUP_WATCH_H
#define CONNSCOPE_CGROUP_WATCH_H

#include <stdbool.h>
#include <stdint.h>
#include "cgroup_facts.h"
#include "targets.h"

struct cgroup_watch {
	const struct target_sel *sel;	/* its cgroup_path NULL: nothing to watch */
	uint64_t t0_ns;			/* the run's start */
	/* Said after a removal: what the command does now (may be ""). */
	const char *gone_note;
	struct cgroup_facts *facts;	/* kept up to date for the reports */
	/* A new one at the path is held (sel->cgroup_fd): the command points
	 * its filters at it here, before it is said, so that whoever reads
	 * the words finds them followed already. NULL: nothing to move. */
	void (*follow)(void *ctx);
	void *ctx;
	int open_err;			/* a new one that could not be opened, said once */
};

enum cgroup_change {
	CGROUP_THERE,	/* the one held is there */
	CGROUP_GONE,	/* removed, none at its path (said once a removal) */
	CGROUP_NEW,	/* a new one at its path is held now, followed, said: once */
};

/* Checks the directory (cheap: each turn of the run loop). */
enum cgroup_change cgroup_watch_check(struct cgroup_watch *w);

#endif
