/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The UDP / QUIC part of `summary`: a snapshot cannot count QUIC
 * connections (that takes the traced wire, `attach`), but it can say which
 * processes hold UDP sockets (sock_diag + /proc/PID/fd), which of them map
 * a QUIC library, and whether the kernel has in-kernel QUIC. */
#ifndef CONNSCOPE_SUMMARY_QUIC_H
#define CONNSCOPE_SUMMARY_QUIC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "procfs.h"
#include "summary_view.h"


/* 0, -ENOENT (no module), -EINVAL (a line that is not NAME VALUE). */
int quic_kernel_snmp_read(const char *path, struct quic_kernel_snmp *s);


/* owners: every process's socket inodes; pids/npids: only those (0: all
 * with UDP sockets). 0 or -errno. */
int udp_view_build(struct udp_view *v, const struct inode_map *owners, const pid_t *pids,
		   size_t npids);
/* The QUIC library pid maps (basename), from /proc/PID/maps, else the one
 * compiled into its executable (exe_quic.h); 0 or -ENOENT. */
int procfs_quic_library(pid_t pid, char *name, size_t len);

#endif
