/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What the sources layer reads from the kernel, as plain records: one TCP or
 * UDP socket (sock_diag), the sockstat/snmp counters, the network limits
 * (sysctls). Books and renderers take these records; only sources fill them. */
#ifndef CONNSCOPE_KERNEL_VIEW_H
#define CONNSCOPE_KERNEL_VIEW_H

#include <stdbool.h>
#include <stdint.h>

/* One TCP socket as the kernel reports it. Ports in host order, addresses as
 * on the wire (v4 in the first 4 bytes of the 16). */
struct sd_sock {
	uint8_t family;		/* AF_INET or AF_INET6 */
	uint8_t state;		/* TCP_ESTABLISHED.. (TCP_TIME_WAIT for tw socks) */
	uint8_t timer;		/* idiag_timer: 0 none, 1 retrans, 2 keepalive, 3 TIME_WAIT, 4 probe */
	uint8_t retrans;	/* idiag_retrans */
	uint16_t sport, dport;
	uint8_t saddr[16], daddr[16];
	uint32_t expires_ms;	/* idiag_expires */
	uint32_t rqueue, wqueue;/* idiag_rqueue / idiag_wqueue */
	uint32_t uid;
	uint32_t inode;		/* 0: no file (TIME_WAIT, orphan, not yet accepted) */
	uint64_t cookie;	/* idiag_cookie[0] | idiag_cookie[1] << 32 */
	uint32_t netns;		/* the namespace it was dumped in (set by the caller;
				 * 0: not said) */
	uint32_t bound_if;	/* idiag_if: the device it is bound to (0: none),
				 * which an exact look at its tuple must name */
};

/* /proc/net/sockstat + sockstat6 + the Tcp: CurrEstab of /proc/net/snmp:
 * everything `ss -s` prints. Missing lines read as 0. */
struct sockstat {
	uint64_t sockets_used;
	uint64_t tcp_inuse, tcp_orphan, tcp_tw, tcp_alloc, tcp_mem;
	uint64_t udp_inuse, udplite_inuse, raw_inuse, frag_inuse;
	uint64_t tcp6_inuse, udp6_inuse, udplite6_inuse, raw6_inuse, frag6_inuse;
	uint64_t curr_estab;
};

struct netlimits {
	uint32_t port_lo, port_hi;	/* net.ipv4.ip_local_port_range */
	uint64_t max_tw_buckets;	/* net.ipv4.tcp_max_tw_buckets */
	uint64_t max_orphans;		/* net.ipv4.tcp_max_orphans */
	bool max_orphans_unread;	/* host-wide: /proc/sys has it in init_net
					 * only; read neither in the target's
					 * namespace nor in the agent's */
	int tw_reuse;			/* net.ipv4.tcp_tw_reuse: 0, 1, 2 (loopback only) */
	int fin_timeout_s;		/* net.ipv4.tcp_fin_timeout */
};

/* Ports in the ephemeral range (ip_local_port_range is inclusive). */
static inline uint32_t netlimits_ports(const struct netlimits *l)
{
	return l->port_hi >= l->port_lo ? l->port_hi - l->port_lo + 1 : 0;
}

#endif
