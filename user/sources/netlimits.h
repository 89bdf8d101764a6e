/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The kernel limits that connection churn runs into, from /proc/sys (of
 * the caller's network namespace, where they are per namespace). */
#ifndef CONNSCOPE_NETLIMITS_H
#define CONNSCOPE_NETLIMITS_H

#include <stdint.h>

struct netlimits {
	uint32_t port_lo, port_hi;	/* net.ipv4.ip_local_port_range */
	uint64_t max_tw_buckets;	/* net.ipv4.tcp_max_tw_buckets */
	uint64_t max_orphans;		/* net.ipv4.tcp_max_orphans */
	int tw_reuse;			/* net.ipv4.tcp_tw_reuse: 0, 1, 2 (loopback only) */
	int fin_timeout_s;		/* net.ipv4.tcp_fin_timeout */
};

/* Reads what it can; a missing file leaves its field 0. Returns 0, or
 * -errno when ip_local_port_range cannot be read. */
int netlimits_read(struct netlimits *l);

/* Ports in the ephemeral range (ip_local_port_range is inclusive). */
static inline uint32_t netlimits_ports(const struct netlimits *l)
{
	return l->port_hi >= l->port_lo ? l->port_hi - l->port_lo + 1 : 0;
}

#endif
