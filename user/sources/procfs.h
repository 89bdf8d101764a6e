/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Readers of /proc: socket counters (sockstat, snmp), process identity and
 * the socket inode -> pid map (what `ss -p` does, without forking). */
#ifndef CONNSCOPE_PROCFS_H
#define CONNSCOPE_PROCFS_H

#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>
#include "kernel_view.h"
#include "inode_owners.h"

/* Root of procfs; tests point it at a directory of recorded files. */
extern const char *procfs_root;


/* Returns 0, or -errno when sockstat cannot be read. */
int procfs_read_sockstat(struct sockstat *st);
/* The same for the network namespace of pid (/proc/PID/net; 0: ours). */
int procfs_read_sockstat_of(pid_t pid, struct sockstat *st);

/* The fd number under which pid holds the socket with this inode:
 * >= 0, or -ENOENT / -errno. */
int procfs_socket_fd(pid_t pid, uint32_t inode);

/* Identity of a process: comm and start time (field 22 of /proc/PID/stat,
 * clock ticks since boot), so a reused pid is told apart. */
struct proc_ident {
	pid_t pid;
	char comm[16];
	uint64_t start_ticks;
	uint32_t flags;		/* field 9: PF_* (PROCFS_PF_KTHREAD) */
	pid_t ppid;		/* field 4: the parent process */
};

/* A kernel thread (kthreadd, kworker/...): no user space, no fds, no
 * sockets of its own; include/linux/sched.h. */
#define PROCFS_PF_KTHREAD 0x00200000u

/* 0, -ENOENT when the process does not exist, other -errno. */
int procfs_read_ident(pid_t pid, struct proc_ident *id);

/* The process start time of id in ns since boot (start_ticks / CLK_TCK). */
uint64_t procfs_start_ns(const struct proc_ident *id);

/* Gone, or a zombie with no thread left: either way it holds no fds or
 * sockets any more. A zombie leader with live threads is not gone. */
bool procfs_pid_gone(pid_t pid);
/* A process whose end a run's loop asks after at each wake: its pidfd
 * (pidfd_open, Linux 5.3), which polls readable once procfs_pid_gone
 * would say gone (thread_group_exited: every thread has exited), so each
 * question is a poll, not a read and parse of /proc/PID/stat (7% of the
 * agent's CPU in a churn, #23 item 6). -1: no pidfd (an older kernel,
 * or a /proc of another pid namespace than ours: its numbers are not
 * pidfd_open's); then procfs_pid_gone_watched asks /proc. */
int procfs_pid_watch(pid_t pid);
bool procfs_pid_gone_watched(pid_t pid, int fd);

/* procfs_root/REL (e.g. "sys/fs/file-nr") whole, up to size - 1 bytes,
 * into buf, NUL-terminated: its length, or -errno when it cannot be
 * opened or read. */
int procfs_read_file(const char *rel, char *buf, size_t size);
/* The same for /proc/PID/NAME. */
int procfs_read_pid_file(pid_t pid, const char *name, char *buf, size_t size);

/* The first file mapped into pid (its /proc/PID/maps, in order) whose path
 * holds one of the n needles: its path as maps shows it (to the end of the
 * line) into path, and the index of the needle as the return. -ENOENT when
 * none is mapped, other -errno when maps cannot be read. */
int procfs_maps_find(pid_t pid, const char *const *needles, size_t n, char *path, size_t len);

/* Clock ticks per second for start_ticks (sysconf(_SC_CLK_TCK)). */
long procfs_clk_tck(void);

/* Add the socket inodes held by pid (its /proc/PID/fd, threads share it).
 * 0, -ENOENT when the process is gone, -EACCES, other -errno. */
int procfs_scan_pid_sockets(pid_t pid, struct inode_map *m);

/* Same for every process in /proc; processes that vanish mid-scan are
 * skipped. Returns 0 or -errno when /proc cannot be listed. */
int procfs_scan_all_sockets(struct inode_map *m);

#endif
