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
#include "json.h"
#include "procfs.h"

struct udp_proc {
	pid_t pid;
	char comm[16];
	uint32_t udp;			/* UDP sockets it holds */
	char quic_lib[64];		/* e.g. "libngtcp2.so.9"; "" when none */
};

/* /proc/net/quic/snmp of the in-kernel QUIC module: "NAME<spaces>\tVALUE"
 * lines (QuicConnCurrentEstabs, QuicConnPassiveEstabs, ...), kept as read. */
#define QUIC_SNMP_MAX 40
struct quic_kernel_snmp {
	size_t n;
	struct { char name[40]; uint64_t value; } f[QUIC_SNMP_MAX];
};
/* 0, -ENOENT (no module), -EINVAL (a line that is not NAME VALUE). */
int quic_kernel_snmp_read(const char *path, struct quic_kernel_snmp *s);
/* The value of name, or -1 when the file has no such line. */
int64_t quic_kernel_snmp_get(const struct quic_kernel_snmp *s, const char *name);

struct udp_view {
	struct udp_proc *procs;		/* most sockets first */
	size_t n;
	uint32_t unattributed;		/* UDP sockets of no visible process */
	bool kernel_quic;
	bool has_snmp;			/* /proc/net/quic/snmp read */
	struct quic_kernel_snmp snmp;
};

/* owners: every process's socket inodes; pids/npids: only those (0: all
 * with UDP sockets). 0 or -errno. */
int udp_view_build(struct udp_view *v, const struct inode_map *owners, const pid_t *pids,
		   size_t npids);
void udp_view_free(struct udp_view *v);
/* max: rows shown (the rest summed in one line); 0 for all. */
void format_udp_view_text(FILE *out, const struct udp_view *v, size_t max, bool header);
void json_udp_view(struct json *j, const struct udp_view *v);
/* The QUIC library pid maps (basename), from /proc/PID/maps; 0 or -ENOENT. */
int procfs_quic_library(pid_t pid, char *name, size_t len);

#endif
