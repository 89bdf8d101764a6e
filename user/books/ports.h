/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Ephemeral port use per (local address, remote endpoint): the kernel can
 * give one local port to many destinations, so a client runs out of ports
 * towards one destination, not in general. Counts every socket of the
 * snapshot whose local port is in ip_local_port_range, traced or not:
 * ports are the host's. */
#ifndef CONNSCOPE_PORTS_H
#define CONNSCOPE_PORTS_H

#include <stddef.h>
#include <stdint.h>
#include "kernel_view.h"

struct port_use {
	uint8_t family;
	uint8_t saddr[16], daddr[16];
	uint16_t dport;
	uint32_t time_wait;	/* ports held by TIME_WAIT */
	uint32_t established;
	uint32_t other;		/* SYN_SENT, FIN_WAIT*, CLOSE_WAIT... */
	double share;		/* (all of them) / ports in the range */
};

/* Fills out with the busiest destinations, most used first; returns how
 * many (<= max). Listening and unconnected sockets are not counted. */
size_t ports_usage(const struct sd_sock *socks, size_t n, uint32_t port_lo, uint32_t port_hi,
		   struct port_use *out, size_t max);

/* "127.0.0.1 -> 127.0.0.1:8080" */
int port_use_format(char *buf, size_t len, const struct port_use *u);

#endif
