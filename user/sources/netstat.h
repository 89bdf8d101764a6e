/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Readers for the doctor's kernel sources: TcpExt counters from
 * /proc/PID/net/netstat (the counters of PID's network namespace) and the
 * namespace's identity. */
#ifndef CONNSCOPE_NETSTAT_H
#define CONNSCOPE_NETSTAT_H

#include <stdint.h>
#include <sys/types.h>
#include "doctor.h"


/* The value of "PREFIX: ... NAME ..." in a netstat/snmp style text (a
 * header line of names, then a line of values). 0 or -ENOENT. */
int netstat_parse(const char *text, const char *prefix, const char *name, uint64_t *out);

/* ListenOverflows/ListenDrops of pid's network namespace. 0 or -errno. */
int netstat_read_listen(pid_t pid, struct listen_counters *c);

/* Inode of /proc/PID/ns/net (0: unknown). */
uint64_t netns_inode(pid_t pid);

#endif
