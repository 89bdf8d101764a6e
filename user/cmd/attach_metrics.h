/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What an attach run hands on besides its reports (attach_metrics.c). */
#ifndef CONNSCOPE_ATTACH_METRICS_H
#define CONNSCOPE_ATTACH_METRICS_H

#include "fdsession.h"
#include "run_info.h"
#include "tcp_tracer.h"

struct agg;
struct exporter;
struct sockstat;

/* What the agent missed so far, into run->losses, from every source's
 * counters (fs NULL: fds off) and the books' own (a). */
void attach_refresh_losses(struct run_info *run, struct tracer *t, struct fd_session *fs,
			   const struct agg *a);
/* The books as Prometheus text, published for the exporter's HTTP thread. */
void attach_publish_metrics(struct exporter *exp, const struct agg *a, struct run_info *run,
			    struct tracer *t, struct fd_session *fs, const struct sockstat *st);

#endif
