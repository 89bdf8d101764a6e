/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* sock_diag (NETLINK_SOCK_DIAG, inet_diag_req_v2) snapshots of TCP sockets:
 * the kernel's own truth about every TCP socket, v4 and v6. */
#ifndef CONNSCOPE_SOCKDIAG_H
#define CONNSCOPE_SOCKDIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "kernel_view.h"


/* Called once per socket; return nonzero to stop the dump (that value is
 * returned by sockdiag_dump_tcp). */
typedef int (*sd_sock_cb)(const struct sd_sock *s, void *ctx);

/* Dump every TCP socket whose state bit is set in state_mask (1 << TCP_*;
 * SD_ALL_STATES for all), of both families (in one dump where the kernel
 * takes TCPDIAG_GETSOCK, else AF_INET then AF_INET6), in the caller's network
 * namespace. Returns 0 on success, a negative errno on failure (netlink
 * socket, send or a NLMSG_ERROR), or the callback's nonzero value. */
/* TCP_ESTABLISHED..TCP_NEW_SYN_RECV. Not bit 13 (TCP_BOUND_INACTIVE, 6.8+):
 * that walks the bind table too and reports bound-only sockets, which `ss`
 * does not show. */
#define SD_ALL_STATES 0x1fffu
int sockdiag_dump_tcp(uint32_t state_mask, sd_sock_cb cb, void *ctx);
/* The same in the network namespace of pid (0: the caller's). */
int sockdiag_dump_tcp_of(pid_t pid, uint32_t state_mask, sd_sock_cb cb, void *ctx);
/* Every UDP socket, v4 then v6 (the same struct; state is TCP_CLOSE or
 * TCP_ESTABLISHED, for unconnected and connected sockets). */
int sockdiag_dump_udp(sd_sock_cb cb, void *ctx);

/* One datagram of a dump's reply (buf: n bytes, 4-byte aligned): cb for
 * each socket of request seq, *done at NLMSG_DONE. 0, -errno (an error
 * the kernel reported, a malformed or truncated message) or cb's nonzero
 * value. What arrives is outside data: every length is checked before it
 * is used (tests/fuzz/fuzz_sockdiag.c). */
int sockdiag_parse_reply(const void *buf, size_t n, uint32_t seq, sd_sock_cb cb, void *ctx,
			 bool *done);

#endif
