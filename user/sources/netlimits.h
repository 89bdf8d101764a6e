/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The kernel limits that connection churn runs into, from /proc/sys (of
 * the caller's network namespace, where they are per namespace). */
#ifndef CONNSCOPE_NETLIMITS_H
#define CONNSCOPE_NETLIMITS_H

#include <stdint.h>
#include "kernel_view.h"


/* Reads what it can; a missing file leaves its field 0. Returns 0, or
 * -errno when ip_local_port_range cannot be read. */
int netlimits_read(struct netlimits *l);
/* net.ipv4.tcp_max_orphans alone, into l (max_orphans_unread when this
 * namespace's /proc/sys lacks it): it is host-wide, and only the host's
 * network namespace shows it, so a target's namespace may not. */
int netlimits_read_orphans(struct netlimits *l);


#endif
