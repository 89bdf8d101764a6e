/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The facts of a run that every report shows beside the books (struct
 * run_info): a header of its own, below report.h, so the parts of the
 * reports (the findings, the HTML report) read it without including the
 * text report that includes them. */
#ifndef CONNSCOPE_RUN_INFO_H
#define CONNSCOPE_RUN_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "tcpstate.h"
#include "report_tw.h"
#include "fd_report.h"
#include "losses.h"
#include "cgroup_facts.h"

struct kf_plan;
struct limits_view;
struct quic_run;
struct doctor_run;

/* A traced process's listener held by processes not traced (a pre-forked
 * server traced by its parent alone): the connections those accept are
 * not counted. Found once, at start. */
#define UNTRACED_PIDS_SHOWN 4
struct untraced_acceptor {
	char listener[64];		/* ADDR:PORT, [ADDR]:PORT */
	pid_t pid;			/* the traced holder */
	char comm[16];
	uint32_t nothers;		/* processes not traced holding it */
	pid_t others[UNTRACED_PIDS_SHOWN];
	char other_comm[16];		/* the first one's */
};

/* The tcpstate unit's programs a run lists (26 in 2026-12; 24 before
 * left its last one out). */
#define RUN_PROGS_MAX 32

struct run_info {
	const char *hook;		/* the set_state hook in use */
	const char *io_hook;		/* where sends and reads are counted; NULL: not said */
	const char *accept_hook;	/* where a listener's child's taker is learned;
					 * NULL: socket storage (its first task) */
	const char *tw_method;		/* how TIME_WAIT is followed */
	const char *records;		/* what crosses the ring: per socket or per transition */
	/* Where each interval's "sockets now" came from: namespace reads by
	 * the census walk (iter/tcp) and by the sock_diag dump, over the run
	 * (run_census_source words them). */
	uint64_t census_walked, census_dumped;
	double duration_s;		/* asked for; 0: until Ctrl-C */
	double elapsed_s;		/* what ran */
	double load_s;			/* of it, the load's: first to last connection
					 * transition (agg_load_s); rates are per second
					 * of this. 0: elapsed_s */
	double interval_s;
	bool follow_children;
	const char (*comms)[16];	/* --comm NAMEs, ncomms of them */
	size_t ncomms;
	const char *cgroup_path;	/* --cgroup, NULL: none */
	struct cgroup_facts cgroup;	/* ... and what became of it during the run */
	const char *container;		/* --container: its label, NULL: none */
	const char *container_id;
	/* The pid namespace the pids are numbered in: the agent's /proc's. */
	bool pidns_child;		/* not the host's: processes outside it unseen */
	uint32_t pidns_ino;
	uint64_t stats[CS_STAT_MAX];	/* BPF counters */
	const char *end_reason;		/* "duration", "interrupted", "target exited" */
	const struct limits_view *limits;	/* NULL: not observed */
	struct tw_report_opts tw;	/* endpoints shown, heatmap rendering */
	struct fd_report fds;		/* fd tracking; .procs NULL: off */
	const struct quic_run *quic;	/* QUIC sources, NULL: off */
	const struct kf_plan *features;	/* what this kernel offers, NULL: not probed */
	const struct doctor_run *doctor;	/* listen queues, netstat, fd errors, cost; NULL: none */
	/* BPF programs of the tcpstate unit and whether each is attached. */
	struct { const char *name; bool attached; } progs[RUN_PROGS_MAX];
	int nprogs;
	struct agent_losses losses;	/* what the agent knows it missed */
	const struct untraced_acceptor *untraced;
	size_t nuntraced;
};

/* The source of the run's "sockets now", for the reports' source lines:
 * "sock_diag", "the iter/tcp walk of the kernel's socket tables", or the
 * walk with the share of reads a dump made (its first seconds, a
 * namespace the walk could not read). buf: at least 96 bytes. */
const char *run_census_source(const struct run_info *run, char *buf, size_t n);

/* The same in a word or two, for lines that name several sources:
 * "sock_diag", "iter/tcp" or "iter/tcp + sock_diag". */
const char *run_census_short(const struct run_info *run);

#endif
