/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Contract between fdtrack.bpf.c and user space: fd life events of traced
 * processes and, once per creation site, a copy of the user stack. */
#ifndef CONNSCOPE_FDTRACK_H
#define CONNSCOPE_FDTRACK_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* fd_event.type */
#define FD_EV_OPEN		1	/* fd (and fd2 for pairs) created */
#define FD_EV_CLOSE		2	/* close(fd) succeeded */
#define FD_EV_CLOSE_RANGE	3	/* close_range(fd, fd2) succeeded (not CLOEXEC mode) */
#define FD_EV_DUP2		4	/* dup2/dup3 onto fd2: an open fd2 was closed first */
#define FD_EV_EXEC		5	/* exec: O_CLOEXEC fds are gone, rescan /proc */

/* fd_event.how: the syscall that made the fd */
#define FD_HOW_SOCKET		1
#define FD_HOW_ACCEPT		2
#define FD_HOW_OPEN		3
#define FD_HOW_DUP		4
#define FD_HOW_PIPE		5
#define FD_HOW_SOCKETPAIR	6
#define FD_HOW_EVENTFD		7
#define FD_HOW_EPOLL		8
#define FD_HOW_TIMERFD		9
#define FD_HOW_SIGNALFD		10
#define FD_HOW_INOTIFY		11
#define FD_HOW_MEMFD		12
#define FD_HOW_PIDFD		13
#define FD_HOW_FANOTIFY		14
#define FD_HOW_MAX		15

#define FD_STACK_DEPTH		32	/* frames in the stack map */
#define FD_SNAP_BYTES		8192	/* user stack copied once per site */
#define FD_NREGS		21	/* struct pt_regs (x86_64) in u64s */

/* Per-CPU counters */
#define FD_STAT_EVENTS		0
#define FD_STAT_RB_LOST		1	/* events that could not be reserved */
#define FD_STAT_SNAP_LOST	2	/* stack snapshots that could not be reserved */
#define FD_STAT_SNAP_SHORT	3	/* snapshots shorter than FD_SNAP_BYTES (stack top) */
#define FD_STAT_STACK_FAIL	4	/* bpf_get_stackid failed */
#define FD_STAT_MAX		8

/* fd_errors map value: fd-making syscalls of a process that failed for
 * want of fds (doctor mode only: count_errors in .bss). */
struct fd_err_count {
	__u64 emfile;		/* the process is at its RLIMIT_NOFILE */
	__u64 enfile;		/* the system is at fs.file-max */
};

struct fd_event {
	__u64 ts_ns;
	__u64 site;		/* creation site key (FD_EV_OPEN) */
	__u32 tgid, tid;
	__s32 fd, fd2;		/* fd2: second fd of a pair, dup2 target, range end */
	__s32 stack_id;		/* frame-pointer user stack, < 0 none */
	__u8 type;		/* FD_EV_* */
	__u8 how;		/* FD_HOW_* */
	__u8 cloexec;		/* created with O_CLOEXEC/SOCK_CLOEXEC... when known */
	__u8 pad[5];
};

/* Once per (tgid, site): what user space needs to unwind with DWARF CFI. */
struct fd_site_snap {
	__u64 site;
	__u32 tgid;
	__u32 len;		/* bytes of stack copied from regs[FD_REG_SP] */
	__u64 regs[FD_NREGS];	/* pt_regs as the kernel lays it out */
	__u8 stack[FD_SNAP_BYTES];
};

/* Indexes into regs[] (struct pt_regs, x86_64). */
#define FD_REG_BP	4
#define FD_REG_IP	16
#define FD_REG_SP	19

#endif
