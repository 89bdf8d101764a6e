// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Placeholder until the renderer lands: a minimal valid document. */
#include <errno.h>
#include "report_html.h"

int format_report_html(FILE *out, const struct agg *a, const struct run_info *run)
{
	fprintf(out, "<!DOCTYPE html><html><body><p>connscope report</p></body></html>\n");
	return ferror(out) ? -EIO : 0;
}
