/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What a run says on stderr as it goes: a target's exit (runloop.c), a
 * network namespace it stops reading (netns_watch.c decides when). Wrapped
 * at 80 columns like every text it prints; pure functions of their
 * figures, so their width is tested without root. */
#ifndef CONNSCOPE_RUN_NOTES_H
#define CONNSCOPE_RUN_NOTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Process pid (comm) exited after_s into the run. */
void format_exited_note(FILE *out, int pid, const char *comm, double after_s);
/* net:[netns] is no longer read, after_s into the run; held: its TIME_WAIT
 * in the books then. census: no TIME_WAIT hook, so they count as end
 * unseen once past their 60 s; else their timers tell their ends. */
void format_netns_unread(FILE *out, uint32_t netns, double after_s, size_t held, bool census);
/* The last of those held ended, after_s into the run. */
void format_netns_tw_ended(FILE *out, uint32_t netns, size_t held, double after_s);

#endif
