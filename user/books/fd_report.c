// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "fd_report.h"

const struct fdleak_proc *fd_report_proc(const struct fd_report *r, pid_t pid)
{
	for (size_t i = 0; r && r->procs && i < r->n; i++)
		if (r->procs[i].pid == pid)
			return &r->procs[i];
	return NULL;
}
