/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* attach's report files, written whole (attach_report.c). */
#ifndef CONNSCOPE_ATTACH_REPORT_H
#define CONNSCOPE_ATTACH_REPORT_H

#include "run_info.h"
#include "safefile.h"

struct agg;
struct sockstat;

/* The HTML report (st NULL) or the Prometheus text (st: the socket
 * counts) into sf, then renamed into place; on failure sf is removed,
 * said on stderr, and the error returned. */
int attach_report_commit(struct safefile *sf, const struct agg *a, const struct run_info *run,
			 const struct sockstat *st);

#endif
