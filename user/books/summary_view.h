/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* One `summary`: the sockstat counters, TCP sockets per process and state,
 * UDP sockets per process with the QUIC library each maps, in-kernel QUIC
 * counters. Built by the summary command from the sources, printed by
 * render/summary_format.c. */
#ifndef CONNSCOPE_SUMMARY_VIEW_H
#define CONNSCOPE_SUMMARY_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "kernel_view.h"
#include "tcp_state_names.h"

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

struct summary_proc {
	pid_t pid;
	char comm[16];
	char container[128];	/* its container's name, else short id; "": none */
	char pod_uid[40];	/* Kubernetes pod UID from the kubepods path; "": none */
	uint32_t state[CS_TCP_MAX_STATES];
	uint32_t orphan;
	uint32_t total;
};

/* The `ss -s` block of one network namespace. */
struct summary_ns {
	uint32_t netns;		/* inode of /proc/PID/ns/net */
	pid_t pid;		/* the listed process it was read through (0: ours) */
	struct sockstat st;
};

struct summary {
	struct sockstat st;	/* the first namespace's (ns[0].st) */
	bool other_netns;	/* not the initial network namespace */
	uint32_t netns;		/* the first namespace */
	struct summary_ns *ns;	/* one block each: the namespaces of -p's processes */
	size_t nns;
	struct summary_proc *procs;	/* sorted: most sockets first */
	size_t nprocs;
	struct summary_proc unattributed;	/* pid 0 */
	struct udp_view udp;		/* UDP sockets and QUIC libraries */
	bool has_udp;
	bool udp_all;			/* every process, not -p: a top 10 in text */
};

void udp_view_free(struct udp_view *v);
void summary_free(struct summary *sum);

#endif
