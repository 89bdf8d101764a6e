/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The doctor's books beyond the aggregator's: listeners' accept queues
 * and the namespaces' ListenOverflows, folded in once per interval. Pure
 * state, fed by the run from its sources (snapshot, netstat.c). */
#ifndef CONNSCOPE_DOCTOR_BOOKS_H
#define CONNSCOPE_DOCTOR_BOOKS_H

#include "doctor.h"

#include "inode_owners.h"

/* The LISTEN sockets of one snapshot (sock_diag) whose inode a traced
 * process holds (owners). */
void doctor_observe_listeners(struct doctor_run *d, const struct sd_sock *socks, size_t n,
			      const struct inode_map *owners);

/* One reading of pid's namespace (ns_ino) counters. */
void doctor_observe_netstat(struct doctor_run *d, pid_t pid, uint64_t ns_ino,
			    const struct listen_counters *c);

/* EMFILE / ENFILE counts of pid so far (they only grow). */
void doctor_observe_fderr(struct doctor_run *d, pid_t pid, uint64_t emfile, uint64_t enfile);

#endif
