/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The fd part of a run, resolved for the renderers: per process its last
 * /proc listing, limits, growth, and the leak suspects with their code sites;
 * and the agent facts of the fd tracing. */
#ifndef CONNSCOPE_FD_REPORT_H
#define CONNSCOPE_FD_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "cgroup_facts.h"
#include "code_site.h"
#include "fd_books.h"
#include "fd_view.h"

#define FDLEAK_MAX_SITES 10

/* One process's part of the report, resolved: what the renderers print. */
struct fdleak_proc {
	pid_t pid;
	char comm[16];
	char container[128];	/* its container's name, else short id; "": none */
	char pod_uid[40];	/* Kubernetes pod UID; "": none */
	bool exited;
	struct fd_inventory inv;	/* the last /proc listing */
	struct fd_limits lim;
	double slope;			/* fds per second, least squares */
	double seconds_to_limit;	/* < 0: not growing */
	const struct fd_proc *books;
	/* Counts from /proc listings only (no fd syscall programs): no
	 * events, no sites; books->appeared/disappeared between listings. */
	bool listing_only;
	struct fd_suspect sus[FDLEAK_MAX_SITES];
	struct site_frames frames[FDLEAK_MAX_SITES];
	size_t nsus;
};

struct kf_plan;

struct fdleak_run {
	double elapsed_s, interval_s, leak_age_s, warn_share;
	const char *end_reason;
	uint64_t stats[FD_STAT_MAX];
	int progs_attached, progs_missing;
	const char *missing_names;
	const struct kf_plan *features;	/* what this kernel offers, NULL: not probed */
	uint64_t events, snapshots;
	const char *cgroup_path;	/* --cgroup, NULL: none ... */
	struct cgroup_facts cgroup;	/* ... and what became of it */
};

/* The fd parts of a run's processes; procs NULL: fd tracking is off. */
struct fd_report {
	const struct fdleak_proc *procs;
	size_t n;
	double leak_age_s;	/* an fd older than this is a leak suspect */
	bool listing_only;	/* see struct fdleak_proc */
};

/* The part of pid, or NULL (r may be NULL, or hold no such pid). */
const struct fdleak_proc *fd_report_proc(const struct fd_report *r, pid_t pid);

#endif
