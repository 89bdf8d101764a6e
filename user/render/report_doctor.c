// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The doctor's text report: which run, the Findings section, where the
 * numbers come from. The whole attach report is one -j or --report away. */
#include "doctor.h"
#include "report.h"
#include "report_findings.h"
#include "report_losses.h"
#include "text_wrap.h"

void format_doctor_text(FILE *out, const struct agg *a, const struct run_info *run)
{
	const struct proc_books *procs[256];
	size_t n = report_procs(a, procs, 256), used;
	char line[2048], head[32];

	used = snprintf(line, sizeof(line), "%.1f s (%s)", run->elapsed_s, run->end_reason);
	for (size_t i = 0, shown = 0; i < n && used < sizeof(line); i++)
		if (procs[i]->target)
			used += snprintf(line + used, sizeof(line) - used, "%s PID %d (%s)",
					 shown++ ? "," : ";", procs[i]->pid, procs[i]->comm);
	/* Rates are per second of the load, not of idle time around it. */
	if (run->load_s > 0 && run->load_s < run->elapsed_s - 0.05 && used < sizeof(line))
		snprintf(line + used, sizeof(line) - used, "; rates per second of its load, %.1f s",
			 run->load_s);
	snprintf(head, sizeof(head), "connscope %s: ",
		 run->doctor && run->doctor->command ? run->doctor->command : "doctor");
	text_wrap(out, head, "  ", line);
	/* Counts the rules read are low when the agent lost anything (a ring
	 * full, a program not attached, an end no program saw): say it first,
	 * as attach's report does. */
	format_losses_headline_see(out, "", &run->losses, LOSSES_BELOW, "-j: agent.losses");
	/* The count is in the line above; here, the fix. */
	if (run->stats[CS_STAT_RB_LOST])
		fputs("WARNING: the ring buffer filled: raise --ringbuf-size\n", out);
	format_findings_section(out, a, run);
	snprintf(line, sizeof(line), "BPF events (connections, failures, TIME_WAIT entries, fd "
		 "sites%s), %s and /proc/PID/fd each interval (TIME_WAIT, orphans, ports, "
		 "accept queues), /proc/PID/net/netstat (ListenOverflows), /proc/sys (limits)%s",
		 run->doctor && run->doctor->fderr_counted ? ", EMFILE/ENFILE at syscall exits" : "",
		 run_census_short(run),
		 run->doctor && run->doctor->cost.valid ? ", BPF run-time stats (agent cost)" : "");
	text_wrap(out, "\nsources: ", "  ", line);
	fprintf(out, "the whole report: connscope attach with the same options, or -j /\n"
		     "  --report FILE.html\n");
}
