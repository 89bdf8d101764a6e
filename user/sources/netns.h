/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Network namespaces: which one a process is in, and running a short piece
 * of work (opening a netlink socket, reading /proc/sys/net) inside it. */
#ifndef CONNSCOPE_NETNS_H
#define CONNSCOPE_NETNS_H

#include <stdint.h>
#include <sys/types.h>

/* The inode of pid's network namespace (pid 0: this thread's). 0 or -errno. */
int netns_of_pid(pid_t pid, uint32_t *ino);
/* This thread's network namespace (0 when /proc cannot say). */
uint32_t netns_self(void);

/* fn(ctx) with this thread in pid's network namespace, then back; pid 0
 * or a pid in ours: fn(ctx) here. fn's value, or -errno when the
 * namespace cannot be entered (EPERM: no CAP_SYS_ADMIN over it). */
int netns_run(pid_t pid, int (*fn)(void *ctx), void *ctx);
/* The same, only if pid's network namespace is still ino (read through
 * pid earlier): -ESTALE without running fn when pid is now in another
 * (it moved, or exited and the pid was reused). ino 0: no check. */
int netns_run_ino(pid_t pid, uint32_t ino, int (*fn)(void *ctx), void *ctx);

/* pid's network namespace held open (it lives while the fd does): the fd
 * or -errno. */
int netns_open(pid_t pid);
/* fn(ctx) inside the namespace of nsfd (from netns_open), then back. */
int netns_run_fd(int nsfd, int (*fn)(void *ctx), void *ctx);

/* Whether pid's namespace can be entered: 0 or -errno. */
int netns_check_enter(pid_t pid);

#endif
