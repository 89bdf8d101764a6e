// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "run_notes.h"
#include "text_wrap.h"

void format_exited_note(FILE *out, int pid, const char *comm, double after_s)
{
	text_wrapf(out, "connscope: ", "  ", "process %d (%s) exited after %.1f s; its report "
		   "covers it until then", pid, comm, after_s);
}

void format_netns_unread(FILE *out, uint32_t netns, double after_s, size_t held, bool census)
{
	bool one = held == 1;
	char fate[160];

	/* How the TIME_WAIT left in the books end from here: by their age
	 * where the census (a dump of the namespace) told their ends, by
	 * their timers where the kernel tells them. */
	if (census)
		snprintf(fate, sizeof(fate), "count%s as end unseen once %s 60 s %s past (no dump "
			 "can read %s)", one ? "s" : "", one ? "its" : "their", one ? "is" : "are",
			 one ? "it" : "them");
	else
		snprintf(fate, sizeof(fate), "end%s by %s timer%s", one ? "s" : "",
			 one ? "its" : "their", one ? "" : "s");
	text_wrapf(out, "connscope: ", "  ", "network namespace net:[%u] is no longer read "
		   "after %.1f s: no traced process is left in it; its %zu TIME_WAIT socket%s in "
		   "the books %s, its other sockets are not counted any more",
		   netns, after_s, held, one ? "" : "s", fate);
}

void format_netns_tw_ended(FILE *out, uint32_t netns, size_t held, double after_s)
{
	text_wrapf(out, "connscope: ", "  ", "network namespace net:[%u]: the last of its %zu "
		   "TIME_WAIT socket%s ended after %.1f s (expired, or killed with the namespace: "
		   "see time_wait_expired / time_wait_ended_early)",
		   netns, held, held == 1 ? "" : "s", after_s);
}
