/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What a run of attach's loop is asked for (attach, doctor, exporter,
 * run, demo). A header of its own, below attach.h, so the files attach.c
 * calls (the exporter, the interval's sources) read the options without
 * including attach.h, which names them back. */
#ifndef CONNSCOPE_ATTACH_OPTS_H
#define CONNSCOPE_ATTACH_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "cli.h"
#include "exporter_limits.h"
#include "tcp_tracer.h"
#include "targets.h"

struct attach_opts {
	pid_t pids[CLI_MAX_PIDS];
	size_t npids;
	double duration_s;	/* 0: until Ctrl-C or the targets exit */
	double interval_s;
	bool json;
	bool header;
	bool quiet_live;	/* no live table (the report only) */
	const char *report_html;	/* --report FILE.html, NULL: none */
	const char *prom_file;		/* --prom FILE: metrics at the end, NULL: none */
	bool exporter;			/* serve /metrics until SIGINT/SIGTERM, no report */
	char listen_addr[64];
	uint16_t listen_port;
	struct exporter_limits exporter_limits;	/* --all, --top-processes, --max-series */
	bool no_color;		/* ASCII heatmaps even on a terminal */
	bool no_fd;		/* no fd part at all */
	bool fd_sites;		/* fd syscall tracepoints for leak sites (else
				 * fds from /proc listings only) */
	uint32_t cost_every;	/* BPF run-time stats on one interval in every this
				 * many (agentcost.h); 0 never */
	bool cost_every_set;	/* given: else the default, 10 */
	bool no_quic;		/* no QUIC sources */
	double leak_age_s;	/* fd leak suspects: open longer than this */
	int top;		/* endpoints per process (default 10) */
	double warn_share;	/* limits warning threshold (default 0.8) */
	bool doctor;		/* `connscope doctor`: findings first, fd errors, agent cost */
	struct tracer_opts tracer;
	struct target_sel sel;	/* --comm, --cgroup: targets now and later */
	/* Called once, when tracing has begun (the demo starts its client
	 * there, so none of its connections straddles the start). */
	void (*on_tracing)(void *ctx);
	void *on_tracing_ctx;
	/* --json-stream FILE ("-": stdout): one JSON line an interval
	 * (NULL: none), written to json_stream, which attach_run opens. */
	const char *json_stream_path;
	FILE *json_stream;
	/* `connscope run`: the run ends cooldown_s after this process (the
	 * load generator, a child of ours) exits, whatever else is traced. */
	pid_t until_pid;
	double cooldown_s;
	/* Set at the end to the worst finding's severity (enum dr_severity,
	 * 0 none), when not NULL. */
	int *worst_severity;
	const char *command;	/* the reports' name for the run; NULL: attach/doctor */
};

#endif
