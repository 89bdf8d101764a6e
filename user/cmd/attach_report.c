// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* attach's report files (--report FILE.html, --prom FILE), written whole. */
#include <stdio.h>
#include <string.h>
#include "attach_report.h"
#include "prom.h"
#include "report_html.h"
#include "text_wrap.h"

/* Reports go to a temporary beside FILE and are renamed into place when
 * complete (safefile.c): a failed or interrupted run never leaves half a
 * report, and a link planted in a shared directory is never followed.
 * Opened before attaching, so a bad path fails before any work. */
int attach_report_commit(struct safefile *sf, const struct agg *a, const struct run_info *run,
			 const struct sockstat *st)
{
	int err = 0;

	if (st)
		format_prom_attach(sf->f, a, run, st);
	else
		err = format_report_html(sf->f, a, run);
	if (err) {
		text_err("connscope: writing the report %s failed: %s\n", sf->path,
			 strerror(-err));
		safefile_abort(sf);
		return err;
	}
	return safefile_commit(sf);
}
