/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Why the kernel refused to let connscope read another process's /proc
 * entries (its namespaces, its fds), said so the user can act on it: a
 * missing CAP_SYS_PTRACE is one cause, a security module's policy is
 * another, and "needs root" is wrong to a root that has the capability. */
#ifndef CONNSCOPE_PROC_ACCESS_H
#define CONNSCOPE_PROC_ACCESS_H

#include <sys/types.h>

/* One line on stderr: "connscope: cannot read WHAT of pid PID (COMM):
 * Permission denied: <the cause>; <the fix>". */
void proc_say_refused(pid_t pid, const char *what);

#endif
